package durable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// A CallError is a call to Redis that a worker made on its own, and that
// failed, as the func of WithErrorHandler gets it.
type CallError struct {
	Queue  string // the queue's name
	Worker string // the worker's ID
	Op     string // claim, ack, renew, fail, release or publish
	Jobs   int    // the jobs the call was about (for a claim, the most it asked for)
	Err    error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("durable: queue %q, worker %s: %s of %d jobs: %v", e.Queue, e.Worker, e.Op, e.Jobs, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// breakerOpen is how long the Queue's calls fail at once after a call
// found Redis unreachable.
const breakerOpen = time.Second

// breakerProbe is how often a call goes through an open breaker, to find
// Redis back.
const breakerProbe = 100 * time.Millisecond

// A breaker fails the Queue's calls at once while Redis was found
// unreachable within breakerOpen, rather than have each wait out the
// client's retries, but for one call every breakerProbe. A worker's calls
// are not refused: they go on at their own pace, and one that succeeds
// closes the breaker.
type breaker struct {
	until atomic.Int64          // UnixNano until which calls fail at once; 0 if closed
	probe atomic.Int64          // UnixNano from which the next call may probe
	last  atomic.Pointer[error] // the error that opened it
}

// allow returns nil, or ErrUnavailable with the last error while open.
func (b *breaker) allow() error {
	u := b.until.Load()
	if u == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	if now >= u {
		return nil
	}
	if p := b.probe.Load(); now >= p && b.probe.CompareAndSwap(p, now+int64(breakerProbe)) {
		return nil
	}
	return fmt.Errorf("%w (%w)", ErrUnavailable, *b.last.Load())
}

// record opens the breaker on an error that says Redis is unreachable,
// or on a call that ran out of its call timeout, and closes it on a
// success.
func (b *breaker) record(err error, timedOut bool) {
	switch {
	case err == nil:
		if b.until.Load() != 0 {
			b.until.Store(0)
		}
	case timedOut || unreachable(err):
		now := time.Now()
		b.last.Store(&err)
		b.probe.Store(now.Add(breakerProbe).UnixNano())
		b.until.Store(now.Add(breakerOpen).UnixNano())
	}
}

// bounded runs f, the call op, with ctx bounded by d. A call that runs
// out of d, with ctx still live, returns an error that says which call
// and how long: Redis is unreachable, stalled or far behind. The store's
// client ends a call on a connected but stalled Redis at d whatever the
// caller's options (store.Open), so a call returns within d and the
// client's reply to the deadline, a few ms.
func bounded(ctx context.Context, op string, d time.Duration, f func(context.Context) error) (err error, timedOut bool) {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err = f(cctx)
	if err != nil && ctx.Err() == nil && cctx.Err() != nil {
		return fmt.Errorf("%s: no reply from Redis within %v (WithCallTimeout): %w", op, d, err), true
	}
	return err, false
}

// unreachable reports whether err says Redis cannot be reached: a failed
// dial, a connection reset or closed, a closed client. A reply of
// Redis's, a timeout on an open connection (a slow Redis) or the end of
// the caller's context is not.
func unreachable(err error) bool {
	var re redis.Error
	if errors.As(err, &re) {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Op == "dial" || !op.Timeout()
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, redis.ErrClosed)
}

// A limiter lets one event a second through and counts those it holds
// back.
type limiter struct {
	mu      sync.Mutex
	next    time.Time // guarded by mu
	skipped int       // guarded by mu
}

// allow reports whether an event may go through now, and how many it held
// back since the last that did.
func (l *limiter) allow() (bool, int) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.next) {
		l.skipped++
		return false, 0
	}
	n := l.skipped
	l.next, l.skipped = now.Add(time.Second), 0
	return true, n
}

// logErrors is the default error handler: slog, a line a second at most.
func logErrors(queue, worker string) func(error) {
	var l limiter
	return func(err error) {
		if ok, n := l.allow(); ok {
			slog.Warn("durable: a call to Redis failed", "queue", queue, "worker", worker, "err", err, "left_out", n)
		}
	}
}

// logPanics is the default panic handler: slog with the stack, one a
// second at most.
func logPanics(queue, worker string) func(Job, any, []byte) {
	var l limiter
	return func(j Job, p any, stack []byte) {
		if ok, n := l.allow(); ok {
			slog.Error("durable: a handler panicked", "queue", queue, "worker", worker, "kind", j.Kind, "id", j.ID,
				"attempt", j.Attempt, "panic", fmt.Sprint(p), "stack", string(stack), "left_out", n)
		}
	}
}

// jitter returns d spread uniformly over ±f of itself.
func jitter(d time.Duration, f float64) time.Duration {
	return d + time.Duration((rand.Float64()*2-1)*f*float64(d))
}

// backoff returns the delay before the next try after n calls in a row
// failed: 100 ms doubled each time, at most 2 s, spread over ±50 %, so
// that replicas that failed together do not try again in step.
func backoff(n int) time.Duration {
	d := 100 * time.Millisecond << min(max(n-1, 0), 5)
	return jitter(min(d, 2*time.Second), 0.5)
}
