// Package store is durable's layer over Redis: every call durable makes
// to Redis goes through a Client, one typed method per Lua script, each
// reply decoded into a named struct in one place. A malformed reply is
// an error naming the script (a *ReplyError), never a zero value.
//
// The layout of the keys is in keys.go; the scripts are grouped by
// service: jobs.go (schedule, reschedule, cancel, lookup), lease.go
// (claim, ack, renew, fail, release), pause.go, inspect.go (counts,
// lists, dead jobs), move.go (the layout record, MoveToShards),
// registry.go (the workers' heartbeats), history.go (the figures by
// minute and hour) and tries.go (a job's failed attempts).
//
// # The call bound
//
// go-redis ignores a context's deadline on an open connection unless its
// options set ContextTimeoutEnabled: a call to a Redis that is connected
// but stalled (CLIENT PAUSE, a stopped process) then waits out the
// client's ReadTimeout (3 s by default) and its retries. Open makes the
// bound hold whatever the caller's options: for a *redis.Client,
// *redis.ClusterClient or *redis.Ring without ContextTimeoutEnabled, it
// makes a client of its own from a copy of the options with it set, at
// the first call (Close closes that one); for any other client (Sentinel's failover
// client, a type of the caller's) it runs each call on a goroutine of its
// own and returns when the context ends, leaving the call to end at the
// client's ReadTimeout. The downside of the copy is a second pool of
// connections, and that hooks added to the caller's client (AddHook) do
// not carry over: a client made with ContextTimeoutEnabled is used as it
// is.
package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Client makes durable's calls to Redis. It is safe for concurrent
// use; its zero value is not usable: make one with Open.
type Client struct {
	orig  redis.UniversalClient        // the caller's
	mk    func() redis.UniversalClient // makes the copy; nil: calls go through orig
	once  sync.Once                    // makes the copy at the first call, or marks Close
	cp    redis.UniversalClient        // the copy, once made; nil after a Close that found none
	guard bool                         // orig ignores deadlines and could not be copied: calls run on their own goroutine
	wait  Replication                  // WithReplicated's: the writes of eval wait for replicas
}

// Replication is how many replicas a write waits for (WAIT n timeout
// after the script, on the same connection); N == 0: none.
type Replication struct {
	N       int
	Timeout time.Duration
}

// Open returns a Client on rdb whose calls end when their context does,
// copying rdb's options where it must (see the package doc). Writes made
// through the Client wait for r's replicas. It costs a client's
// construction (no call to Redis).
func Open(rdb redis.UniversalClient, r Replication) *Client {
	c := &Client{orig: rdb, wait: r}
	switch x := rdb.(type) {
	case *redis.Client:
		o := x.Options()
		switch {
		case o.ContextTimeoutEnabled:
		case o.Addr == "FailoverClient": // Sentinel's: its dialer belongs to its own pool
			c.guard = true
		default:
			c.mk = func() redis.UniversalClient { return redis.NewClient(copyOptions(o)) }
		}
	case *redis.ClusterClient:
		if o := x.Options(); !o.ContextTimeoutEnabled {
			c.mk = func() redis.UniversalClient {
				cp := *o
				cp.ContextTimeoutEnabled = true
				return redis.NewClusterClient(&cp)
			}
		}
	case *redis.Ring:
		if o := x.Options(); !o.ContextTimeoutEnabled {
			c.mk = func() redis.UniversalClient {
				cp := *o
				cp.ContextTimeoutEnabled = true
				return redis.NewRing(&cp)
			}
		}
	default:
		c.guard = true
	}
	return c
}

// copyOptions returns a copy of o with ContextTimeoutEnabled set, as
// Options' own clone makes it, less the push notification processor that
// NewClient set in o: the copy makes its own (sharing one, it would find
// its handlers registered already).
func copyOptions(o *redis.Options) *redis.Options {
	cp := *o
	cp.ContextTimeoutEnabled = true
	cp.PushNotificationProcessor = nil
	if o.MaintNotificationsConfig != nil {
		m := *o.MaintNotificationsConfig
		cp.MaintNotificationsConfig = &m
	}
	return &cp
}

// Redis returns the client the calls go through (for subscriptions):
// the copy, made at the first call that needs it, or the caller's.
func (c *Client) Redis() redis.UniversalClient {
	if c.mk == nil {
		return c.orig
	}
	c.once.Do(func() { c.cp = c.mk() })
	if c.cp == nil { // closed before any call: the caller's serves
		return c.orig
	}
	return c.cp
}

// Copied reports whether the Client makes calls through a copy of the
// caller's client.
func (c *Client) Copied() bool { return c.mk != nil }

// Close closes the copy, if one was made; the caller's client is left
// open. A call after Close goes through the caller's.
func (c *Client) Close() error {
	made := true
	c.once.Do(func() { made = false })
	if made && c.cp != nil {
		return c.cp.Close()
	}
	return nil
}

// A ReplyError is a reply of a script's that does not have the shape
// the script returns: a bug, or a script of another version of durable
// on the server.
type ReplyError struct {
	Script string
	What   string
}

func (e *ReplyError) Error() string {
	return fmt.Sprintf("durable: script %s: malformed reply: %s", e.Script, e.What)
}

// run runs s with keys and args and returns its command, within ctx
// whatever the client (see the package doc).
func (c *Client) run(ctx context.Context, s *script, keys []string, args ...any) *redis.Cmd {
	return c.bound(ctx, func(ctx context.Context) *redis.Cmd {
		rdb := c.Redis()
		cmd := s.lua.Run(ctx, rdb, keys, args...)
		ReloadAfter(rdb, cmd.Err())
		return cmd
	})
}

// eval is run for a write: with Replication, it WAITs for the replicas
// after the script on the same connection (wait.go).
func (c *Client) eval(ctx context.Context, s *script, keys []string, args ...any) *redis.Cmd {
	if c.wait.N == 0 {
		return c.run(ctx, s, keys, args...)
	}
	return c.bound(ctx, func(ctx context.Context) *redis.Cmd {
		return evalWait(ctx, c.Redis(), c.wait, s.lua, keys, args...)
	})
}

// bound runs f, on a goroutine of its own when the client ignores
// deadlines, and returns once ctx ends, with an error wrapping ctx's.
func (c *Client) bound(ctx context.Context, f func(ctx context.Context) *redis.Cmd) *redis.Cmd {
	if !c.guard {
		return f(ctx)
	}
	done := make(chan *redis.Cmd, 1)
	go func() { done <- f(ctx) }()
	select {
	case cmd := <-done:
		return cmd
	case <-ctx.Done():
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(ctx.Err())
		return cmd
	}
}

// Do runs f, a call of the caller's own (a scan, a publish), within ctx
// as run does.
func (c *Client) Do(ctx context.Context, f func(ctx context.Context, rdb redis.UniversalClient) error) error {
	cmd := c.bound(ctx, func(ctx context.Context) *redis.Cmd {
		rdb := c.Redis()
		cmd := redis.NewCmd(ctx)
		if err := f(ctx, rdb); err != nil {
			cmd.SetErr(err)
		}
		ReloadAfter(rdb, cmd.Err())
		return cmd
	})
	return cmd.Err()
}

// ReloadAfter has a cluster client reload the cluster's layout after a
// call failed other than with an error reply: go-redis routes by the
// layout it last read, and a primary that died sends no MOVED, so that
// without a reload it dials the dead node until its
// ClusterStateReloadInterval (60 s by default) has passed. The reload
// runs in the background, at most one at a time.
func ReloadAfter(rdb redis.UniversalClient, err error) {
	if cc, ok := rdb.(*redis.ClusterClient); ok && err != nil && err != redis.Nil && !IsRedisError(err) {
		cc.ReloadState(context.Background())
	}
}

// IsRedisError reports whether err is an error reply of the server's,
// not of the connection.
func IsRedisError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
