package durable

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// ErrNotReplicated is wrapped by the error of a Schedule, Reschedule or
// Cancel on a Queue made WithReplicated when fewer replicas than asked
// acknowledged the change within the timeout, and by the *CallError of
// such an ack of the worker's (WithErrorHandler). The primary made it (or,
// when WAIT itself failed, may have): it holds unless the primary fails
// before a replica gets it.
var ErrNotReplicated = store.ErrNotReplicated

// replication is WithReplicated's setting; n == 0: off.
type replication struct {
	n       int
	timeout time.Duration
}

// WithReplicated makes Schedule, ScheduleAfter, Reschedule and Cancel
// return only once n replicas of the Redis primary that holds the job
// have acknowledged the change, or timeout has passed: Redis's WAIT n
// timeout, sent after the change's script on the same connection, in
// the same round trip. A change that fewer replicas acknowledged in time
// is still made on the primary, and the call returns an error wrapping
// ErrNotReplicated. A Schedule that finds its ID taken (false) makes no
// change and waits for none.
//
// The worker's acks wait too, on their own goroutine: lease renewals go
// on meanwhile. An ack that fewer replicas acknowledged still counts the
// attempt as run, and goes to the error handler and Stats.Errors as a
// failed "ack" call wrapping ErrNotReplicated: the job runs again if the
// primary fails before a replica gets the ack. Claims, renewals and
// failures do not wait: a failover that loses a claim runs its job again,
// maybe while the first attempt still runs (docs/durable.md has the
// figures).
//
// Redis replicates asynchronously: without this option, a primary that
// fails (SIGKILL, machine lost) before its replica got a change loses it
// in the failover, so that a job Schedule had acknowledged never runs,
// or a finished job runs again. With it, an acknowledged change is in n
// replicas' memory: a failover to one of them keeps it (docs/durable.md
// has the figures). WAIT does not make a replica write its AOF (Redis
// 7.2's WAITAOF does; this option does not send it), and a timeout
// bounds every call while the replicas are down: a primary without n
// replicas makes every change wait timeout and fail with
// ErrNotReplicated. Such a call may take WithCallTimeout plus twice
// timeout and 100 ms (the script and WAIT again, to a primary that lacks
// the script; Redis ends a WAIT up to 100 ms past its timeout).
//
// The client must be a *redis.Client (one server, or Sentinel's failover
// client) or a *redis.ClusterClient: WAIT counts the writes of its own
// connection, so the option routes the script to the primary itself. New
// panics on another client (a Ring). WithReplicated panics if n is not
// positive or timeout is under 1ms (WAIT's unit; 0 would wait for ever).
func WithReplicated(n int, timeout time.Duration) Option {
	if n <= 0 {
		panic(fmt.Sprintf("durable: WithReplicated: non-positive n %d", n))
	}
	if timeout < time.Millisecond {
		panic(fmt.Sprintf("durable: WithReplicated: timeout %v under 1ms", timeout))
	}
	return func(c *config) { c.replicated = replication{n, timeout} }
}

// checkReplicated panics if WithReplicated was given with a client it
// cannot route.
func checkReplicated(rdb redis.UniversalClient, r replication) {
	if r.n == 0 {
		return
	}
	switch rdb.(type) {
	case *redis.Client, *redis.ClusterClient:
	default:
		panic(fmt.Sprintf("durable: New: WithReplicated needs a *redis.Client or *redis.ClusterClient, not %T", rdb))
	}
}
