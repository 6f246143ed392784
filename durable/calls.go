package durable

import (
	"context"
	"time"
)

// This file is how a caller's call reaches Redis: every method of the
// Queue's API makes its calls through doOn or doWrite, which check the
// queue's layout once (layout.go), bound the call and keep the breaker
// (failures.go). The worker's calls go through worker.call instead,
// which a breaker never refuses.

// doOn makes one call to Redis, f, named op (the script's name), for a
// caller: bounded by the call timeout, refused while the breaker br (a
// shard's, whose primary may be down while the others' are not) is open,
// and counted in Stats.Errors when it fails. The caller wraps the error
// it returns.
func (q *Queue) doOn(ctx context.Context, br *breaker, op string, f func(ctx context.Context) error) error {
	return q.doWithin(ctx, br, op, q.cfg.callTimeout, f)
}

// doWrite is doOn for a change that waits for the replicas
// (WithReplicated), bounded by writeBound.
func (q *Queue) doWrite(ctx context.Context, br *breaker, op string, f func(ctx context.Context) error) error {
	return q.doWithin(ctx, br, op, q.writeBound(), f)
}

// writeBound is how long a change that waits for the replicas may take:
// the call timeout, and WithReplicated's WAIT twice over (the store
// sends the script and WAIT again to a primary that lacks the script),
// each up to waitSlack late. So a shortfall of replicas ends in
// ErrNotReplicated, not in a timeout that marks Redis unreachable.
func (q *Queue) writeBound() time.Duration {
	if q.cfg.replicated.n == 0 {
		return q.cfg.callTimeout
	}
	return q.cfg.callTimeout + 2*(q.cfg.replicated.timeout+waitSlack)
}

// waitSlack is how late Redis ends a WAIT past its timeout: it checks
// the timeouts of blocked clients hz times a second (10 by default), so
// a WAIT of 300 ms returns after up to 400 ms.
const waitSlack = 100 * time.Millisecond

// doWithin is doOn bounded by d.
func (q *Queue) doWithin(ctx context.Context, br *breaker, op string, d time.Duration, f func(ctx context.Context) error) error {
	if err := q.checkLayout(ctx); err != nil {
		return err
	}
	return q.callOn(ctx, br, op, d, f)
}

// callOn is doWithin without the layout check.
func (q *Queue) callOn(ctx context.Context, br *breaker, op string, d time.Duration, f func(ctx context.Context) error) error {
	if err := br.allow(); err != nil {
		return err
	}
	err, timedOut := bounded(ctx, op, d, f)
	br.record(err, timedOut)
	if err != nil {
		q.stats.errors.Add(1)
	}
	return err
}
