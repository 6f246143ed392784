package durable

import (
	"context"
	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/durable/internal/store"
	"time"
)

// ackLoop deletes finished jobs, many a call (an ack waits up to
// ackLinger for others), until ackEnd. WithReplicated, each call waits
// for the replicas too: renewLoop, on its own goroutine, goes on renewing
// the leases meanwhile.
func (w *worker) ackLoop() {
	defer w.acker.Done()
	var batch []*attempt
	var linger *timewheel.Timer
	var lingerC <-chan time.Time
	flush := func() {
		if linger != nil {
			linger.Stop()
			linger, lingerC = nil, nil
		}
		for n := 1; !w.ack(batch) && w.pause(backoff(n)); n++ {
		}
		batch = batch[:0]
	}
	for {
		select {
		case a := <-w.acks:
			batch = append(batch, a)
			if len(batch) >= maxAcks || a.ackNow.Load() {
				flush()
			} else if linger == nil {
				linger = w.wheel.NewTimer(ackLinger)
				lingerC = linger.C
			}
		case <-lingerC:
			linger, lingerC = nil, nil
			flush()
		case <-w.ackEnd:
			if linger != nil {
				linger.Stop()
			}
			for {
				select {
				case a := <-w.acks:
					batch = append(batch, a)
					continue
				default:
				}
				break
			}
			if len(batch) > 0 {
				w.ack(batch)
			}
			return
		}
	}
}

// ack deletes the jobs of batch from the store, and reports whether the
// call succeeded. WithReplicated, it waits for the replicas (store.Client.Ack):
// a shortfall is counted and reported as a failed call, but the primary
// made the change, so the batch counts as done.
func (w *worker) ack(batch []*attempt) bool {
	var r store.Acked
	err := w.callWithin("ack", len(batch), w.q.writeBound(), func(ctx context.Context) (err error) {
		r, err = w.q.st.Ack(ctx, w.k, w.q.cfg.worker, helds(batch))
		return err
	})
	if err != nil && r.Lost == nil {
		return false
	}
	lost, gone := r.Lost, r.Gone
	for _, a := range batch {
		w.forget(a, nil)
		switch {
		case gone[a.job.ID] || lost[a.job.ID] && a.canceled.Load():
			w.q.stats.canceled.Add(1)
		case !lost[a.job.ID]:
			w.q.stats.ran.Add(1)
			w.q.obs.ended(a.job.Kind, true, false, false)
		case !a.lost.Load():
			w.q.stats.lost.Add(1)
		}
	}
	return true
}

// pause waits d on the wheel, and reports false if ackEnd came first.
func (w *worker) pause(d time.Duration) bool {
	t := w.wheel.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.ackEnd:
		return false
	}
}
