package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated is wrapped by the error of a write that fewer
// replicas acknowledged than Replication asks for within its timeout.
// The primary made the change (or, when WAIT itself failed, may have).
// durable exports it as durable.ErrNotReplicated.
var ErrNotReplicated = errors.New("durable: not acknowledged by the replicas WithReplicated asks for")

// IsNotReplicated reports whether err wraps ErrNotReplicated.
func IsNotReplicated(err error) bool { return errors.Is(err, ErrNotReplicated) }

// A shortfall is the error of a change fewer replicas acknowledged than
// Replication asks for.
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

// maxRedirects bounds how often evalWait follows a redirection, as
// go-redis's cluster client does by default.
const maxRedirects = 3

// evalWait is eval WithReplicated: a pipeline of EVALSHA (EVAL if the
// server lacks the script) and WAIT to the primary of keys[0]. On a
// cluster it follows MOVED and ASK (the script did not run), as
// go-redis would; after a connection error, which may come after the
// script ran, it does not retry, and has the cluster's layout reloaded
// for the next call.
func evalWait(ctx context.Context, rdb redis.UniversalClient, r Replication, s *redis.Script, keys []string, args ...any) *redis.Cmd {
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
			if wait.Err() != nil || got < int64(r.N) {
				cmd.SetErr(&shortfall{got: got, want: r.N, timeout: r.Timeout, err: wait.Err()})
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
			if Sleep(ctx, time.Duration(8<<attempt)*time.Millisecond) != nil {
				return cmd
			}
		default:
			ReloadAfter(rdb, err)
			return cmd
		}
	}
}

// evalWaitOn sends [ASKING,] EVALSHA and WAIT to node in one round trip,
// and EVAL and WAIT in a second if node lacks the script.
func evalWaitOn(ctx context.Context, node *redis.Client, asking bool, r Replication, s *redis.Script, keys []string, args ...any) (*redis.Cmd, *redis.IntCmd) {
	send := func(eval func(redis.Pipeliner) *redis.Cmd) (*redis.Cmd, *redis.IntCmd) {
		pipe := node.Pipeline()
		if asking {
			pipe.Process(ctx, redis.NewCmd(ctx, "asking"))
		}
		cmd := eval(pipe)
		wait := redis.NewIntCmd(ctx, "wait", r.N, r.Timeout.Milliseconds())
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

// Sleep waits d, or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
