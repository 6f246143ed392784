package durable

import (
	"time"

	"github.com/timewheel/timewheel/internal/lockcheck"
)

// decideLocked returns whether to claim now, or else when to (zero: only when a
// handler frees up). mu is held.
func (w *worker) decideLocked(now time.Time) (bool, time.Time) {
	lockcheck.Held(&w.mu, "decideLocked")
	room := w.roomLocked()
	if w.stopping || room <= 0 {
		return false, time.Time{}
	}
	if w.fails > 0 {
		// The wake armed for the retry stands. If it fired while every
		// handler was busy, the round claimed nothing and none stands:
		// claim now, or nothing would claim again (a failed claim arms
		// the next retry).
		return w.wake == nil, time.Time{}
	}
	if !w.clk.ok {
		return true, time.Time{}
	}
	at := w.pollAt
	if w.later >= 0 {
		at = minTime(at, w.localLocked(w.later))
	}
	if w.more {
		t := w.localLocked(w.next)
		if !t.After(now.Add(w.hz)) {
			if room >= max(1, min(w.capLocked(), w.q.cfg.batch)/2) || !t.After(now.Add(w.urgent)) {
				return true, time.Time{}
			}
			at = minTime(at, t.Add(-w.urgent))
		} else {
			at = minTime(at, t.Add(-w.hz/2)) // as the claim's later: the jobs of half a horizon in one claim
		}
	}
	if !at.After(now) {
		return true, time.Time{}
	}
	return false, at
}

// planLocked kicks claimLoop, or arms the wake, as decide says. mu is held.
func (w *worker) planLocked() {
	lockcheck.Held(&w.mu, "planLocked")
	now := w.wheel.Now()
	claimNow, at := w.decideLocked(now)
	switch {
	case claimNow:
		select {
		case w.kick <- struct{}{}:
		default:
		}
	case !at.IsZero():
		w.armLocked(at.Sub(now))
	}
}

// armLocked makes the wake fire within d, unless it is due sooner already. mu
// is held.
func (w *worker) armLocked(d time.Duration) {
	lockcheck.Held(&w.mu, "armLocked")
	d = max(d, 0)
	at := w.wheel.Now().Add(d)
	if w.stopping || w.wake != nil && !w.wakeAt.After(at) {
		return
	}
	if w.wheel.Err() != nil {
		w.wheelClosedLocked()
		return
	}
	if w.wake != nil {
		w.wake.Stop()
	}
	w.gen++
	gen := w.gen
	w.wakeAt = at
	// AfterFunc never calls its f before it returns: holding mu is safe.
	w.wake = w.wheel.AfterFunc(d, func() {
		w.mu.Lock()
		if w.gen == gen {
			w.wake = nil
		}
		w.mu.Unlock()
		select {
		case w.kick <- struct{}{}:
		default:
		}
	})
}

// capLocked returns how many jobs the worker may hold ahead: as many as
// its handlers start within half the horizon at their mean run time, at
// least conc (all, before the first has run), at most twice cfg.batch.
// mu is held.
func (w *worker) capLocked() int {
	lockcheck.Held(&w.mu, "capLocked")
	c := &w.q.cfg
	if w.dur <= 0 {
		return w.conc
	}
	n := float64(w.conc) * float64(w.hz/2) / float64(w.dur)
	return int(min(max(n, float64(w.conc)), float64(max(w.conc, 2*c.batch))))
}

// roomLocked returns how many more jobs a claim may ask for: none while
// every handler is busy. mu is held.
func (w *worker) roomLocked() int {
	lockcheck.Held(&w.mu, "roomLocked")
	if w.inHandler >= w.conc {
		return 0
	}
	return w.capLocked() - len(w.held)
}

// pausedLocked reports whether jobs of kind wait. mu is held.
func (w *worker) pausedLocked(kind string) bool {
	lockcheck.Held(&w.mu, "pausedLocked")
	return w.paused[""] || w.paused[kind]
}
