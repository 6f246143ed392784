// Package redisclaim claims the runs of cron jobs on Redis, so that the
// replicas of a service, each with a [cron.Scheduler] and the same jobs,
// run each run once between them:
//
//	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
//	s := cron.New(cron.WithClaimer(redisclaim.New(rdb)))
//
// A claim is one command, SET key owner NX PX ttl, for the key
//
//	prefix + job + ":" + the run's instant in UTC, RFC 3339 with nanoseconds
//	cron:report:2026-03-09T13:00:00Z
//
// The replica whose SET stores the key runs the run; the others find it
// there and skip. The key is never deleted: it expires after the TTL.
// The TTL must outlast the skew between the replicas' clocks, so that a
// replica late by the skew still finds it. It must also outlast the time
// a replica may be down before it restarts and catches up a missed run
// (see Scheduler.Restore). The default, a day, outlasts both by far. Its
// cost is one key per run for a day, about 100 bytes of Redis memory each
// (MEMORY USAGE). A job every 10 seconds holds 8,640 keys, about a
// megabyte.
//
// # Claims against lock-and-release
//
// A lock taken for the run and released when it returns, as gocron's
// distributed locker does, works only while every replica's timer fires
// before the fastest replica's run has returned. Take a job that takes a
// millisecond and a replica whose clock is a second behind. The lock is
// free again when the late replica asks, and the job runs twice (gocron
// issue 841). A claim is not released, so the late replica finds it
// taken however late it is, up to the TTL.
//
// # When Redis fails
//
// A claim that fails (Redis down, a timeout) is an error for the
// scheduler, whose ClaimPolicy (package cron) decides the run; the next
// run is claimed afresh. A replica that claims a run and then dies loses
// that run: no other replica runs it, since the claim stands. A Redis that
// loses keys forgets the claims of the last moments. (It was restarted
// without persistence, or failed over to a replica that had not received
// them.) A replica late by the skew may then run again a run another has
// just run.
//
// The scheduler's claim timeout (cron.WithClaimTimeout) reaches the SET
// as its context's deadline. go-redis bounds its socket waits by that
// deadline only with ContextTimeoutEnabled in the client's options;
// otherwise by its ReadTimeout and WriteTimeout. With go-redis's default
// retries, a claim on a Redis that is down redials for up to seconds
// before failing; the claim timeout cuts it short.
package redisclaim

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultPrefix starts every key unless WithPrefix says otherwise.
const DefaultPrefix = "cron:"

// DefaultTTL is how long a claim lasts unless WithTTL says otherwise.
const DefaultTTL = 24 * time.Hour

// Claimer claims runs on Redis; it implements cron.Claimer. It is safe
// for concurrent use, as its client is.
//
// The zero Claimer has no client: its Claim and Key panic. Make one with
// New.
type Claimer struct {
	client   redis.UniversalClient
	prefix   string
	ttl      time.Duration
	ttlMS    int64 // ttl in milliseconds, rounded up
	owner    string
	ownerSet bool // by WithOwner
}

// An Option configures a Claimer made by New.
type Option func(*Claimer)

// WithPrefix sets the start of every key (default DefaultPrefix), to keep
// the claims of different services, or of tests, apart. With "", keys
// start with the job's name.
func WithPrefix(p string) Option {
	return func(c *Claimer) { c.prefix = p }
}

// WithTTL sets how long a claim lasts (default DefaultTTL): longer than
// the clocks of the replicas can differ, and than a replica may be down
// before it catches up a missed run. It is stored in milliseconds, rounded
// up, so that a claim never lasts less than d. WithTTL panics if d is less
// than a millisecond.
func WithTTL(d time.Duration) Option {
	if d < time.Millisecond {
		panic(fmt.Sprintf("redisclaim: WithTTL called with a TTL under a millisecond: %v", d))
	}
	return func(c *Claimer) { c.ttl = d }
}

// WithOwner sets the value stored in each key this Claimer sets, to tell
// which replica ran a run (default: the host name and the process id,
// "host:pid"); "" stores an empty value.
func WithOwner(name string) Option {
	return func(c *Claimer) { c.owner, c.ownerSet = name, true }
}

// New returns a Claimer on client: a single server, Sentinel or Cluster
// (each key stands alone). New panics if client is nil, or a nil pointer
// such as a (*redis.Client)(nil), or if an option is nil, as New does
// in every package of the module.
func New(client redis.UniversalClient, opts ...Option) *Claimer {
	if client == nil {
		panic("redisclaim: New called with a nil client")
	}
	if v := reflect.ValueOf(client); v.Kind() == reflect.Pointer && v.IsNil() {
		panic(fmt.Sprintf("redisclaim: New called with a nil client (%T)(nil)", client))
	}
	c := &Claimer{client: client, prefix: DefaultPrefix, ttl: DefaultTTL}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("redisclaim: New: option %d is nil", i))
		}
		o(c)
	}
	if !c.ownerSet {
		host, _ := os.Hostname()
		c.owner = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	c.ttlMS = int64(c.ttl / time.Millisecond)
	if c.ttl%time.Millisecond != 0 {
		c.ttlMS++
	}
	return c
}

// Key returns the key that claims the run of job at at. Key panics on a
// zero or nil Claimer. The complexity is O(len(job)).
func (c *Claimer) Key(job string, at time.Time) string {
	c.check("Key")
	return c.key(job, at)
}

func (c *Claimer) key(job string, at time.Time) string {
	return c.prefix + job + ":" + at.UTC().Format(time.RFC3339Nano)
}

// check panics if c was not made by New.
func (c *Claimer) check(fn string) {
	switch {
	case c == nil:
		panic(fmt.Sprintf("redisclaim: %s called on a nil *Claimer; make one with New", fn))
	case c.client == nil:
		panic(fmt.Sprintf("redisclaim: %s called on a zero Claimer; make one with New", fn))
	}
}

// Claim claims the run of job at at with one SET key owner NX PX ttl. It
// returns true if this call stored the key, false if the key was there.
// It returns an error, wrapped with the key, if Redis did not answer, such
// as one wrapping redis.ErrClosed once the client is closed. A nil ctx is
// context.Background(). Claim panics on a zero or nil Claimer. The cost is
// one round trip to Redis.
func (c *Claimer) Claim(ctx context.Context, job string, at time.Time) (bool, error) {
	c.check("Claim")
	if ctx == nil {
		ctx = context.Background()
	}
	key := c.key(job, at)
	cmd := redis.NewBoolCmd(ctx, "set", key, c.owner, "nx", "px", c.ttlMS)
	_ = c.client.Process(ctx, cmd)
	won, err := cmd.Result()
	if err != nil {
		return false, fmt.Errorf("redisclaim: claim %s: %w", key, err)
	}
	return won, nil
}
