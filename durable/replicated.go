package durable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated is wrapped by the error of a Schedule, Reschedule or
// Cancel on a Queue made WithReplicated when fewer replicas than asked
// acknowledged the change within the timeout, and by the *CallError of
// such an ack of the worker's (WithErrorHandler). The primary made it (or,
// when WAIT itself failed, may have): it holds unless the primary fails
// before a replica gets it.
var ErrNotReplicated = errors.New("durable: not acknowledged by the replicas WithReplicated asks for")

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
// timeout (the script and WAIT again, to a primary that lacks the
// script).
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

// A shortfall is the error of a change fewer replicas acknowledged than
// WithReplicated asks for.
type shortfall struct {
	got     int64
	want    int
	timeout time.Duration
	err     error // WAIT's own error, if it failed
}

func (s *shortfall) Error() string {
	if s.err != nil {
		return fmt.Sprintf("%v: WAIT: %v", ErrNotReplicated, s.err)
	}
	return fmt.Sprintf("%v: %d of %d replicas within %v", ErrNotReplicated, s.got, s.want, s.timeout)
}

func (s *shortfall) Unwrap() error { return ErrNotReplicated }

// eval runs s with keys and args, as s.Run does, and, WithReplicated,
// WAITs for the replicas after it on the same connection: the one call
// every write of Schedule, Reschedule and Cancel goes through.
func (q *Queue) eval(ctx context.Context, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	r := q.cfg.replicated
	if r.n == 0 {
		cmd := s.Run(ctx, q.rdb, keys, args...)
		reloadAfter(q.rdb, cmd.Err())
		return cmd
	}
	return evalWait(ctx, q.rdb, r, s, keys, args...)
}

// reloadAfter has a cluster client reload the cluster's layout after a
// call failed other than with an error reply: go-redis routes by the
// layout it last read, and a primary that died sends no MOVED, so that
// without a reload it dials the dead node until its
// ClusterStateReloadInterval (60 s by default) has passed. The reload
// runs in the background, at most one at a time.
func reloadAfter(rdb redis.UniversalClient, err error) {
	if cc, ok := rdb.(*redis.ClusterClient); ok && err != nil && err != redis.Nil && !isRedisError(err) {
		cc.ReloadState(context.Background())
	}
}

// maxRedirects bounds how often evalWait follows a redirection, as
// go-redis's cluster client does by default.
const maxRedirects = 3

// evalWait is eval WithReplicated: a pipeline of EVALSHA (EVAL if the
// server lacks the script) and WAIT to the primary of keys[0]. On a
// cluster it follows MOVED and ASK (the script did not run), as
// go-redis would; after a connection error, which may come after the
// script ran, it does not retry, and has the cluster's layout reloaded
// for the next call.
func evalWait(ctx context.Context, rdb redis.UniversalClient, r replication, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	cc, cluster := rdb.(*redis.ClusterClient)
	var node *redis.Client
	asking := false
	var cmd *redis.Cmd
	for attempt := 0; ; attempt++ {
		if !cluster {
			node = rdb.(*redis.Client)
		} else if node == nil {
			var err error
			if node, err = cc.MasterForKey(ctx, keys[0]); err != nil {
				cmd = redis.NewCmd(ctx)
				cmd.SetErr(err)
				return cmd
			}
		}
		var wait *redis.IntCmd
		cmd, wait = evalWaitOn(ctx, node, asking, r, s, keys, args...)
		err := cmd.Err()
		if err == nil {
			got := wait.Val()
			if wait.Err() != nil || got < int64(r.n) {
				cmd.SetErr(&shortfall{got: got, want: r.n, timeout: r.timeout, err: wait.Err()})
			}
			return cmd
		}
		if !cluster || attempt == maxRedirects {
			return cmd
		}
		moved, ask, addr := redirect(err)
		switch {
		case moved || ask:
			node = masterAt(ctx, cc, addr)
			asking = ask && node != nil
		case retryable(err):
			node, asking = nil, false
			cc.ReloadState(ctx)
			if sleep(ctx, time.Duration(8<<attempt)*time.Millisecond) != nil {
				return cmd
			}
		default:
			reloadAfter(rdb, err)
			return cmd
		}
	}
}

// evalWaitOn sends [ASKING,] EVALSHA and WAIT to node in one round trip,
// and EVAL and WAIT in a second if node lacks the script.
func evalWaitOn(ctx context.Context, node *redis.Client, asking bool, r replication, s *redis.Script, keys []string, args ...any) (*redis.Cmd, *redis.IntCmd) {
	send := func(eval func(redis.Pipeliner) *redis.Cmd) (*redis.Cmd, *redis.IntCmd) {
		pipe := node.Pipeline()
		if asking {
			pipe.Process(ctx, redis.NewCmd(ctx, "asking"))
		}
		cmd := eval(pipe)
		wait := redis.NewIntCmd(ctx, "wait", r.n, r.timeout.Milliseconds())
		pipe.Process(ctx, wait)
		pipe.Exec(ctx)
		return cmd, wait
	}
	cmd, wait := send(func(p redis.Pipeliner) *redis.Cmd { return s.EvalSha(ctx, p, keys, args...) })
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		cmd, wait = send(func(p redis.Pipeliner) *redis.Cmd { return s.Eval(ctx, p, keys, args...) })
	}
	return cmd, wait
}

// redirect parses a MOVED or ASK error.
func redirect(err error) (moved, ask bool, addr string) {
	s := err.Error()
	f := strings.Fields(s)
	if len(f) != 3 {
		return false, false, ""
	}
	return f[0] == "MOVED", f[0] == "ASK", f[2]
}

// retryable reports whether err is a cluster error that a script gets
// before it runs: a slot in migration or without a primary, a primary
// become a replica.
func retryable(err error) bool {
	for _, p := range []string{"TRYAGAIN", "CLUSTERDOWN", "READONLY", "MASTERDOWN", "LOADING"} {
		if redis.HasErrorPrefix(err, p) {
			return true
		}
	}
	return false
}

// isRedisError reports whether err is an error reply of the server's,
// not of the connection.
func isRedisError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// masterAt returns the client of cc's primary at addr, with the cluster's
// layout reloaded first, or nil (then the caller asks MasterForKey).
func masterAt(ctx context.Context, cc *redis.ClusterClient, addr string) *redis.Client {
	var mu sync.Mutex
	var found *redis.Client
	cc.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		if c.Options().Addr == addr {
			mu.Lock()
			found = c
			mu.Unlock()
		}
		return nil
	})
	return found
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
