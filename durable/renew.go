package durable

import (
	"context"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// renewLoop renews the leases held every third of the lease, and when
// asked (renewNow), until ackEnd.
func (w *worker) renewLoop() {
	defer w.acker.Done()
	renew := w.wheel.NewTicker(w.q.cfg.lease / 3)
	defer renew.Stop()
	for {
		select {
		case <-renew.C:
			w.renew()
		case <-w.renewNow:
			w.renew()
		case <-w.ackEnd:
			return
		}
	}
}

// renew extends the leases of the attempts the worker holds, and drops
// (or cancels the contexts of) those it lost; then it starts the held
// jobs that came due while Redis was down, their leases confirmed.
func (w *worker) renew() {
	w.mu.Lock()
	ttl := w.ttl
	if w.stopping {
		ttl = 0 // close took it off the live workers
	}
	hs := make([]store.Held, 0, len(w.running)+len(w.held))
	for id, a := range w.running {
		hs = append(hs, store.Held{ID: id, Token: a.token})
	}
	for id, a := range w.held {
		hs = append(hs, store.Held{ID: id, Token: a.token})
	}
	w.mu.Unlock()
	var r store.Renewed
	err := w.call("renew", len(hs), func(ctx context.Context) (err error) {
		r, err = w.q.st.Renew(ctx, w.k, store.RenewArgs{Lease: w.q.cfg.lease.Microseconds(), Worker: w.q.cfg.worker,
			TTL: ttl.Microseconds(), Horizon: w.hz.Microseconds()}, hs)
		return err
	})
	lost, gone, later := r.Lost, r.Gone, r.Wake
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if later >= 0 && (w.later < 0 || later < w.later) {
		w.later = later
	}
	for _, set := range []map[string]bool{lost, gone} {
		for id := range set {
			canceled := gone[id]
			if a := w.running[id]; a != nil {
				delete(w.running, id)
				if canceled || a.canceled.Load() {
					// Cancel's message was missed, or has not come yet.
					a.canceled.Store(true)
					a.cancel(ErrCanceled)
				} else {
					if !a.lost.Swap(true) {
						w.q.stats.lost.Add(1)
					}
					a.cancel(ErrLeaseLost)
				}
			} else if a := w.held[id]; a != nil {
				w.dropLocked(a)
				if canceled {
					w.q.stats.canceled.Add(1)
				} else {
					w.q.stats.lost.Add(1)
				}
			}
		}
	}
	for _, a := range w.held {
		if a.deferred && !w.down && !w.stopping {
			a.deferred = false
			w.startOrQueueLocked(a)
		}
	}
	w.countHeldLocked()
	w.planLocked()
}
