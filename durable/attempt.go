package durable

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/durable/internal/store"
	"github.com/timewheel/timewheel/internal/lockcheck"
)

// An attempt is one leased run of a job. Its states, each named by
// where the worker keeps it (all under w.mu but ended):
//
//	held      in w.held, its timer armed for its due time (claim.go's takeLocked)
//	deferred  in w.held with deferred set: it came due while Redis was down
//	waiting   in w.held and w.waiting: it came due while every handler was busy
//	running   in w.running, its handler on a goroutine of its own
//	ended     ended set (atomic): its ack or failure is under way; off w.running
//	gone      in neither map: acked, failed, handed back or dropped
//
// The transitions, and the function that makes each:
//
//	claim    -> held       takeLocked: due ahead of the wheel's now
//	claim    -> running    takeLocked, startOrQueueLocked: due already, a handler free
//	held     -> running    fire, startOrQueueLocked: at its due time, a handler free
//	held     -> waiting    fire, startOrQueueLocked: at its due time, every handler busy
//	waiting  -> running    dequeueLocked: a handler frees up
//	held     -> deferred   fire: Redis is down (w.down)
//	deferred -> running    renew: a renewal found the lease still held
//	held     -> gone       dropLocked: cancelled, paused (handed back), lease lost, close
//	running  -> ended      end: the handler returned, or ran past its timeout
//	ended    -> gone       ack (nil) or fail (an error); forget drops it from w.running
//	running  -> gone       renew: lease lost or job cancelled (its context cancelled; it
//	                       still ends, and its ack or failure is refused by the store)
//
// Who owns which field: job, due and token are immutable once claimed;
// timer, deferred and started are guarded by w.mu; cancel and timeout
// are set by startLocked under w.mu before the handler's goroutine starts,
// and read after; lost, canceled, ended and ackNow are atomic.
type attempt struct {
	job       Job
	due       int64  // µs on the server's clock
	token     string // store.Token's string, the :run value the lease holds
	timer     *timewheel.Timer
	deferred  bool      // fired while Redis was down: starts once a renewal confirms the lease
	started   time.Time // when its handler started
	startedUs int64     // when its handler started, µs on the server's clock as the worker maps it
	cancel    context.CancelCauseFunc
	timeout   time.Duration
	lost      atomic.Bool // a renewal found the lease gone, and counted it
	canceled  atomic.Bool // Cancel or Reschedule took the job while the worker held it
	ended     atomic.Bool // the attempt's end (ack or failure) is under way
	ackNow    atomic.Bool // its ack goes at once, not after ackLinger (schedule_run.go)
}

// fire starts a held attempt at its due time, unless it was dropped, its
// kind paused, or Redis is down. It runs on the wheel: it never calls
// Redis.
func (w *worker) fire(a *attempt) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held[a.job.ID] != a || w.stopping {
		return
	}
	now := w.wheel.Now()
	if t := w.localLocked(a.due); t.After(now) {
		// The clock map moved since: wait for the rest, never early.
		a.timer = w.wheel.AfterFunc(t.Sub(now), func() { w.fire(a) })
		return
	}
	if w.pausedLocked(a.job.Kind) {
		w.dropLocked(a)
		w.handlers.Add(1)
		go func() {
			defer w.handlers.Done()
			w.release([]*attempt{a}, false)
		}()
		w.planLocked()
		return
	}
	if w.down {
		a.deferred = true
		return
	}
	w.startOrQueueLocked(a)
}

// startOrQueueLocked starts a held attempt that came due, or queues it
// until a handler is free. mu is held.
func (w *worker) startOrQueueLocked(a *attempt) {
	lockcheck.Held(&w.mu, "startOrQueueLocked")
	if w.inHandler >= w.conc {
		w.waiting = append(w.waiting, a)
		return
	}
	delete(w.held, a.job.ID)
	w.countHeldLocked()
	w.startLocked(a)
}

// dequeueLocked starts the first queued attempt still held, if any.
// mu is held.
func (w *worker) dequeueLocked() {
	lockcheck.Held(&w.mu, "dequeueLocked")
	for len(w.waiting) > 0 && w.inHandler < w.conc {
		a := w.waiting[0]
		w.waiting[0] = nil
		w.waiting = w.waiting[1:]
		if w.held[a.job.ID] == a && !w.stopping {
			delete(w.held, a.job.ID)
			w.countHeldLocked()
			w.startLocked(a)
		}
	}
}

// dropLocked forgets a held attempt, and returns it. mu is held.
func (w *worker) dropLocked(a *attempt) *attempt {
	lockcheck.Held(&w.mu, "dropLocked")
	if a.timer != nil {
		a.timer.Stop()
	}
	delete(w.held, a.job.ID)
	w.countHeldLocked()
	return a
}

// startLocked runs a's handler on a goroutine of its own. mu is held.
func (w *worker) startLocked(a *attempt) {
	lockcheck.Held(&w.mu, "startLocked")
	w.inHandler++
	a.started, a.startedUs = w.wheel.Now(), w.serverNowLocked()
	w.running[a.job.ID] = a
	w.q.stats.running.Add(1)
	late := time.Duration(a.startedUs-a.due) * time.Microsecond
	w.q.stats.late(late)
	w.q.obs.started(a.job.Kind, late)
	timeout, _, _ := w.q.cfg.policy(a.job.Kind)
	ctx, cancel := context.WithCancelCause(w.ctx)
	a.cancel, a.timeout = cancel, timeout
	w.handlers.Add(1)
	go w.run(ctx, a)
}

// timeoutError is the cause of a handler's context past its timeout.
type timeoutError struct {
	kind string
	d    time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("durable: handler of kind %q ran past its timeout of %v", e.kind, e.d)
}

func (e *timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// run runs a's handler, then frees its slot and ends the attempt. Past
// its timeout, the attempt ends as failed at once, whether or not the
// handler returns.
func (w *worker) run(ctx context.Context, a *attempt) {
	defer w.handlers.Done()
	var terr error
	if a.timeout > 0 {
		var cancel context.CancelFunc
		terr = &timeoutError{a.job.Kind, a.timeout}
		ctx, cancel = context.WithTimeoutCause(ctx, a.timeout, terr)
		defer cancel()
		stop := context.AfterFunc(ctx, func() {
			if context.Cause(ctx) == terr && w.end(a, terr) {
				w.q.stats.timedOut.Add(1)
			}
		})
		defer stop()
	}
	err := w.call1(ctx, a)
	if err != nil && terr != nil && context.Cause(ctx) == terr {
		err = terr
	}
	w.q.stats.running.Add(-1)
	w.mu.Lock()
	w.inHandler--
	if d := w.wheel.Since(a.started); w.dur == 0 {
		w.dur = max(d, time.Microsecond)
	} else {
		w.dur = max(w.dur+(d-w.dur)/16, time.Microsecond)
	}
	w.dequeueLocked()
	w.planLocked()
	w.mu.Unlock()
	if w.end(a, err) && err != nil && err == terr {
		w.q.stats.timedOut.Add(1)
	}
}

// call1 runs a's handler and returns its error, or one for a kind with no
// handler or a handler that panicked.
func (w *worker) call1(ctx context.Context, a *attempt) (err error) {
	h := w.q.cfg.handlers[a.job.Kind]
	if h == nil {
		return fmt.Errorf("durable: no handler for kind %q on worker %s", a.job.Kind, w.q.cfg.worker)
	}
	defer func() {
		if p := recover(); p != nil {
			w.q.stats.panics.Add(1)
			w.panicked(a.job, p, debug.Stack())
			err = fmt.Errorf("durable: handler of kind %q panicked: %v", a.job.Kind, p)
		}
	}()
	return w.handle(ctx, h, a)
}

// panicked calls the panic handler, which must not take the worker down.
func (w *worker) panicked(j Job, p any, stack []byte) {
	defer func() { recover() }()
	w.q.cfg.onPanic(j, p, stack)
}

// end ends an attempt once: an ack for nil, a failure otherwise. It
// reports whether this call ended it.
func (w *worker) end(a *attempt, err error) bool {
	if !a.ended.CompareAndSwap(false, true) {
		return false
	}
	if err == nil {
		select {
		case w.acks <- a:
		case <-w.ctx.Done(): // close gave up waiting: the lease runs out
		}
		return true
	}
	w.fail(a, err)
	return true
}

// fail ends a failed attempt: a retry after the kind's backoff, or dead.
// An attempt that failed after close cancelled its context is handed back
// instead: due at once, for another replica, and never dead for it.
func (w *worker) fail(a *attempt, cause error) {
	_, attempts, backoffOf := w.q.cfg.policy(a.job.Kind)
	delay := max(backoffOf(a.job.Attempt), 0)
	closing := w.ctx.Err() != nil
	if closing {
		delay, attempts = 0, math.MaxInt32
	}
	w.forget(a, nil)
	if a.canceled.Load() {
		w.q.stats.canceled.Add(1)
		return
	}
	var f store.Failed
	err := w.call("fail", 1, func(ctx context.Context) (err error) {
		f, err = w.q.st.Fail(ctx, w.k, store.FailArgs{ID: a.job.ID, Token: a.token, Attempts: attempts,
			Backoff: delay.Microseconds(), Err: cause.Error(), Tell: closing, Worker: w.q.cfg.worker, Started: a.startedUs})
		return err
	})
	switch {
	case err != nil:
		// The lease runs out and the job runs again, as after a crash.
	case f.Gone || a.canceled.Load():
		w.q.stats.canceled.Add(1)
	case f.Lost:
		if !a.lost.Load() {
			w.q.stats.lost.Add(1)
		}
	case f.Dead:
		w.q.stats.dead.Add(1)
		w.q.obs.ended(a.job.Kind, false, false, true)
	case closing:
		w.q.stats.released.Add(1)
	default:
		w.q.stats.retried.Add(1)
		w.q.obs.ended(a.job.Kind, false, true, false)
		w.notice(f.Retry, false)
	}
}

// forget drops a from the attempts whose leases the worker renews, and
// cancels its context.
func (w *worker) forget(a *attempt, cause error) {
	if a.cancel != nil {
		a.cancel(cause)
	}
	w.mu.Lock()
	if w.running[a.job.ID] == a {
		delete(w.running, a.job.ID)
	}
	w.mu.Unlock()
}
