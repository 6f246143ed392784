package durable

import (
	"context"
	"time"

	"github.com/timewheel/timewheel/durable/internal/store"
	"github.com/timewheel/timewheel/internal/lockcheck"
)

// claimLoop claims whenever kicked, until stop.
func (w *worker) claimLoop() {
	defer w.loops.Done()
	for {
		select {
		case <-w.stop:
			return
		case <-w.kick:
		}
		w.claimRound()
	}
}

// claimRound claims while plan says to, then leaves the wake armed.
func (w *worker) claimRound() {
	for {
		w.mu.Lock()
		n := 0
		if !w.stopping {
			n = min(w.roomLocked(), w.q.cfg.batch)
		}
		if n <= 0 {
			w.planLocked()
			w.mu.Unlock()
			return
		}
		w.note = -1
		w.mu.Unlock()

		jobs, left, paused, err := w.claim(n)

		w.mu.Lock()
		if err != nil {
			w.fails++
			w.armLocked(backoff(w.fails))
			w.mu.Unlock()
			return
		}
		w.fails = 0
		again, release := w.takeLocked(jobs, left, paused)
		w.mu.Unlock()
		if len(release) > 0 {
			w.release(release, false)
		}
		w.advanceRuns(jobs)
		if !again {
			return
		}
		select {
		case <-w.stop:
			return
		default:
		}
	}
}

// claim leases up to n jobs due within the horizon, and returns them, the
// due time of the first it left (-1 if none), and the paused kinds. It
// also maps Redis's clock onto the wheel's, and notes when to claim next
// for what it could not take (later).
func (w *worker) claim(n int) ([]*attempt, int64, []string, error) {
	c := &w.q.cfg
	var v store.Claimed
	err := w.call("claim", n, func(ctx context.Context) (err error) {
		v, err = w.q.st.Claim(ctx, w.k, store.ClaimArgs{Limit: n, Lease: c.lease.Microseconds(), Worker: c.worker,
			Horizon: w.hz.Microseconds(), TTL: w.ttl.Microseconds()})
		return err
	})
	local := w.wheel.Now()
	w.q.stats.claims.Add(1)
	if err != nil {
		return nil, 0, nil, err
	}
	w.mu.Lock()
	w.clk.measure(v.Now, local)
	w.later = v.Wake
	w.mu.Unlock()
	jobs := make([]*attempt, 0, len(v.Jobs))
	for _, l := range v.Jobs {
		a := &attempt{due: l.Token.Due, token: l.Token.String()}
		a.job = Job{ID: l.ID, Due: time.UnixMicro(a.due), Attempt: l.Token.Attempt}
		a.job.Kind, a.job.Payload = split(l.Blob)
		jobs = append(jobs, a)
	}
	w.q.stats.claimed.Add(uint64(len(jobs)))
	return jobs, v.Left, v.Paused, nil
}

// takeLocked holds or starts the jobs a claim leased, notes what it said, and
// returns whether to claim again at once, and the jobs to hand back (the
// worker is stopping, or their kind was paused). mu is held.
func (w *worker) takeLocked(jobs []*attempt, left int64, paused []string) (bool, []*attempt) {
	lockcheck.Held(&w.mu, "takeLocked")
	w.next = left
	if w.note >= 0 && (w.next < 0 || w.note < w.next) {
		w.next = w.note
	}
	w.more = w.next >= 0
	w.pollAt = w.wheel.Now().Add(jitter(w.poll, 0.2))
	var release []*attempt
	clear(w.paused)
	for _, k := range paused {
		w.paused[k] = true
	}
	if len(paused) > 0 {
		for _, a := range w.held {
			if w.pausedLocked(a.job.Kind) {
				release = append(release, w.dropLocked(a))
			}
		}
	}
	now := w.wheel.Now()
	for _, a := range jobs {
		if old := w.held[a.job.ID]; old != nil {
			w.dropLocked(old) // its lease ran out while it waited, and this claim took it again
		}
		if old := w.running[a.job.ID]; old != nil && !old.lost.Swap(true) {
			w.q.stats.lost.Add(1) // its lease ran out while it ran, and this claim took it again
		}
		if w.stopping {
			release = append(release, a)
			continue
		}
		w.held[a.job.ID] = a
		if t := w.localLocked(a.due); t.After(now) {
			a.timer = w.wheel.AfterFunc(t.Sub(now), func() { w.fire(a) })
			continue
		}
		w.startOrQueueLocked(a)
	}
	w.countHeldLocked()
	if w.stopping {
		return false, release
	}
	now = w.wheel.Now()
	claimNow, at := w.decideLocked(now)
	if !claimNow && !at.IsZero() {
		w.armLocked(at.Sub(now))
	}
	return claimNow, release
}

// release hands back held attempts to the store, unstarted; closing also
// takes the worker off the live ones.
func (w *worker) release(as []*attempt, closing bool) {
	if len(as) == 0 && !closing {
		return
	}
	var n int
	err := w.call("release", len(as), func(ctx context.Context) (err error) {
		n, err = w.q.st.Release(ctx, w.k, w.q.cfg.worker, closing, helds(as))
		return err
	})
	if err == nil {
		w.q.stats.released.Add(uint64(n))
	}
}

// helds returns the leases of as, as the store takes them.
func helds(as []*attempt) []store.Held {
	hs := make([]store.Held, len(as))
	for i, a := range as {
		hs[i] = store.Held{ID: a.job.ID, Token: a.token}
	}
	return hs
}
