package durable

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// How a schedule's runs are made and fired (docs/durable.md, "Periodic
// schedules", has the story; store/schedule.go the keys):
//
//   - The head. A schedule's record names its head: the next run to come,
//     whose job exists. Upsert makes the first head.
//   - Advancing. When a worker claims a run (up to the horizon ahead of
//     its instant), it moves the head on to the next instant and makes
//     that run's job: one compare-and-set script (AdvanceSched), so that
//     of the replicas that try, one does it. A worker killed after the
//     claim leaves the next run made already. Each run's start advances
//     again if the claim's did not (a Redis error), and the tender finds
//     a chain that still broke (a head that ran with no run after it).
//   - Firing. As a run's handler is about to start, FireSched decides
//     whether it runs: not if the schedule is paused or gone, or by the
//     missed policy (late past its grace), or by the overlap policy (the
//     run before it still runs). A run that does not run returns nil, so
//     its job is acked. A retry (attempt 2 on) always runs.
//   - The missed policy acts twice: plan, when a head advances, drops
//     the instants that passed beyond the grace, and FireSched drops a
//     late run that is not the one to keep.
//
// No replica holds a goroutine, a timer or a call per schedule while a
// run waits: the runs are jobs, fired by the workers' wheels. The tender
// is one goroutine per Queue that runs the safety net every poll.

// schedState is what a Queue keeps of its schedules.
type schedState struct {
	mu   sync.Mutex
	defs map[string]compiled // prefix+name -> its definition at the version last read; guarded by mu

	stop chan struct{} // closed by stopTender
	done sync.WaitGroup
}

// tendBatch is how many broken chains one tend call returns at most.
const tendBatch = 32

// def returns the definition of schedule name in shard k, from the cache
// or read through w; ok is false for a schedule that does not exist.
func (w *worker) def(name string, fresh bool) (c compiled, ok bool, err error) {
	st, key := &w.q.sched, w.k.Prefix+name
	st.mu.Lock()
	c, ok = st.defs[key]
	st.mu.Unlock()
	if ok && !fresh {
		return c, true, nil
	}
	var rec store.Sched
	err = w.call("sched-get", 1, func(ctx context.Context) (err error) {
		rec, ok, _, err = w.q.st.GetSched(ctx, w.k, name)
		return err
	})
	if err != nil || !ok {
		w.forgetDef(name)
		return compiled{}, false, err
	}
	if _, c, err = decodeSched(rec); err != nil {
		return compiled{}, false, err
	}
	w.q.sched.mu.Lock()
	if st.defs == nil {
		st.defs = map[string]compiled{}
	}
	st.defs[key] = c
	w.q.sched.mu.Unlock()
	return c, true, nil
}

// forgetDef drops schedule name's definition from the cache.
func (w *worker) forgetDef(name string) {
	w.q.sched.mu.Lock()
	delete(w.q.sched.defs, w.k.Prefix+name)
	w.q.sched.mu.Unlock()
}

// advanceRuns moves on the heads of the schedules whose runs a claim
// took: called by claimRound once they are armed, without mu.
func (w *worker) advanceRuns(jobs []*attempt) {
	for _, a := range jobs {
		if name, at, delayed, ok := parseRun(a.job.ID); ok && !delayed {
			w.advance(name, a.job.ID, at)
		}
	}
}

// advance moves schedule name's head from the run fromID, for the
// instant after, to the run plan says, if the head is still fromID. A
// failure is reported, and left to the run's start or the tender.
func (w *worker) advance(name, fromID string, after time.Time) {
	fresh := false
	for range 2 {
		c, ok, err := w.def(name, fresh)
		if err != nil || !ok {
			return
		}
		w.mu.Lock()
		now := time.UnixMicro(w.serverNowLocked())
		w.mu.Unlock()
		next, missed := c.plan(after, now)
		if next.IsZero() || next.After(maxDue) {
			return // no instant left: the schedule ends with this run
		}
		var r store.Advanced
		err = w.call("sched-advance", 1, func(ctx context.Context) (err error) {
			r, err = w.q.st.AdvanceSched(ctx, w.k, store.AdvanceArgs{Name: name, From: fromID,
				To: ceilMicro(next), ToID: RunID(name, next), Missed: missed, Ver: c.ver})
			return err
		})
		switch {
		case err != nil:
			return
		case r == store.StaleVer:
			fresh = true // changed since cached: read it again
		case r == store.NoSched:
			w.forgetDef(name)
			return
		default:
			return
		}
	}
}

// runScheduled runs the handler h for the run a of schedule name, for
// the instant at, if FireSched says it runs; it returns nil for a run
// that does not (its job is acked), and an error if Redis could not say
// (the attempt is retried, and a retry always runs).
func (w *worker) runScheduled(ctx context.Context, h Handler, a *attempt, name string, at time.Time) error {
	j := a.job
	c, ok, err := w.def(name, false)
	if err != nil {
		return fmt.Errorf("durable: run %s of schedule %q: %w", j.ID, name, err)
	}
	if !ok {
		return nil // removed
	}
	var act store.Fired
	var head string
	var ver int64
	err = w.call("sched-fire", 1, func(ctx context.Context) (err error) {
		act, head, ver, err = w.q.st.FireSched(ctx, w.k, store.FireArgs{Name: name, At: ceilMicro(at), ID: j.ID,
			Attempt: j.Attempt, Next: ceilMicro(c.sched.Next(at)), Grace: c.Grace.Microseconds(),
			Missed: "lsa"[c.Missed], Overlap: "sda"[c.Overlap]})
		return err
	})
	if err != nil {
		return fmt.Errorf("durable: run %s of schedule %q: %w", j.ID, name, err)
	}
	if ver != c.ver {
		w.forgetDef(name)
	}
	if head == j.ID {
		w.advance(name, j.ID, at) // the claim's advance failed
	}
	if act != store.FireRun {
		return nil
	}
	if err := h(ctx, j); err != nil {
		return err
	}
	// Until its ack, the run's job stands for a run that still runs, so
	// OverlapSkip would skip the next run were it due within the ack's
	// linger: that ack goes at once.
	if next := c.sched.Next(at); c.Overlap == OverlapSkip && !next.IsZero() && next.Sub(w.wheel.Now()) < 2*ackLinger {
		a.ackNow.Store(true)
	}
	if c.Overlap == OverlapDelay || c.Missed == MissedRunAll {
		w.call("sched-done", 1, func(ctx context.Context) error {
			_, err := w.q.st.DoneSched(ctx, w.k, name, j.ID)
			return err
		})
	}
	return nil
}

// handle runs h for a's job: through its schedule for a run, as it is
// for any other job.
func (w *worker) handle(ctx context.Context, h Handler, a *attempt) error {
	if name, at, _, ok := parseRun(a.job.ID); ok {
		return w.runScheduled(ctx, h, a, name, at)
	}
	return h(ctx, a.job)
}

// startTender starts the Queue's tender: every poll (±20 %), for each
// shard, one TendScheds call that lets go delayed runs whose run before
// them ended unseen, and advances the chains that broke.
func (q *Queue) startTender() {
	q.sched.stop = make(chan struct{})
	q.sched.done.Add(1)
	go func() {
		defer q.sched.done.Done()
		for {
			t := q.wheel.NewTimer(jitter(q.cfg.poll, 0.2))
			select {
			case <-q.sched.stop:
				t.Stop()
				return
			case <-t.C:
			}
			for _, w := range q.ws {
				w.tend()
			}
		}
	}()
}

// stopTender stops the tender and waits for it.
func (q *Queue) stopTender() {
	if q.sched.stop != nil {
		close(q.sched.stop)
		q.sched.done.Wait()
	}
}

// tend runs the safety net on w's shard.
func (w *worker) tend() {
	var broken []store.Sched
	err := w.call("sched-tend", 0, func(ctx context.Context) (err error) {
		broken, _, err = w.q.st.TendScheds(ctx, w.k, tendBatch)
		return err
	})
	if err != nil {
		return
	}
	for _, s := range broken {
		w.advance(s.Name, s.HeadID, time.UnixMicro(s.Head))
	}
}
