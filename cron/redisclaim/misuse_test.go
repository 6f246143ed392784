package redisclaim_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/cron/redisclaim"
	"github.com/timewheel/timewheel/internal/misusetest"
)

// Zero and nil Claimers, nil clients, contexts and options, an empty
// prefix or owner, TTLs at their extremes, and claims on a closed client,
// against a real Redis.
func TestMisuse(t *testing.T) {
	srv := startRedis(t)
	rdb := newClient(t, srv)
	ctx := context.Background()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	claim := func(c *redisclaim.Claimer) func(t *testing.T) error {
		return func(t *testing.T) error { _, err := c.Claim(ctx, "job", at); return err }
	}
	for _, m := range []misusetest.Case{
		{Name: "zero Claimer: Claim", Panic: "redisclaim: Claim called on a zero Claimer; make one with New", Call: claim(new(redisclaim.Claimer))},
		{Name: "zero Claimer: Key", Panic: "redisclaim: Key called on a zero Claimer; make one with New",
			Call: func(t *testing.T) error { new(redisclaim.Claimer).Key("job", at); return nil }},
		{Name: "nil Claimer: Claim", Panic: "redisclaim: Claim called on a nil *Claimer; make one with New", Call: claim(nil)},
		{Name: "nil Claimer: Key", Panic: "redisclaim: Key called on a nil *Claimer; make one with New",
			Call: func(t *testing.T) error { (*redisclaim.Claimer)(nil).Key("job", at); return nil }},
		{Name: "New(nil)", Panic: "redisclaim: New called with a nil client",
			Call: func(t *testing.T) error { redisclaim.New(nil); return nil }},
		{Name: "New(nil *redis.Client)", Panic: "redisclaim: New called with a nil client (*redis.Client)(nil)",
			Call: func(t *testing.T) error { redisclaim.New((*redis.Client)(nil)); return nil }},
		{Name: "New with a nil option", Panic: "redisclaim: New: option 1 is nil",
			Call: func(t *testing.T) error { redisclaim.New(rdb, redisclaim.WithPrefix("nil-option:"), nil); return nil }},
		{Name: "Claim(nil ctx)", Call: func(t *testing.T) error {
			won, err := redisclaim.New(rdb, redisclaim.WithPrefix("nil-ctx:")).Claim(nil, "job", at)
			if !won && err == nil {
				t.Error("Claim with a nil context lost a fresh claim")
			}
			return err
		}},
		{Name: "empty prefix", Call: func(t *testing.T) error {
			c := redisclaim.New(rdb, redisclaim.WithPrefix(""))
			if key := c.Key("empty-prefix", at); key != "empty-prefix:2026-01-01T00:00:00Z" {
				t.Errorf("key %q", key)
			}
			if _, err := c.Claim(ctx, "empty-prefix", at); err != nil {
				return err
			}
			if v, err := rdb.Exists(ctx, "empty-prefix:2026-01-01T00:00:00Z").Result(); v != 1 || err != nil {
				t.Errorf("the key without a prefix: %v, %v", v, err)
			}
			return nil
		}},
		{Name: "empty owner", Call: func(t *testing.T) error {
			c := redisclaim.New(rdb, redisclaim.WithPrefix("empty-owner:"), redisclaim.WithOwner(""))
			if _, err := c.Claim(ctx, "job", at); err != nil {
				return err
			}
			if v, err := rdb.Get(ctx, c.Key("job", at)).Result(); v != "" || err != nil {
				t.Errorf("owner %q, %v; want the empty owner asked for", v, err)
			}
			return nil
		}},
		{Name: "WithTTL(0)", Panic: "redisclaim: WithTTL called with a TTL under a millisecond: 0s",
			Call: func(t *testing.T) error { redisclaim.WithTTL(0); return nil }},
		{Name: "WithTTL(min)", Panic: "redisclaim: WithTTL called with a TTL under a millisecond: -2562047h47m16.854775808s",
			Call: func(t *testing.T) error { redisclaim.WithTTL(math.MinInt64); return nil }},
		{Name: "WithTTL(999µs)", Panic: "redisclaim: WithTTL called with a TTL under a millisecond: 999µs",
			Call: func(t *testing.T) error { redisclaim.WithTTL(999 * time.Microsecond); return nil }},
		{Name: "WithTTL(1500µs) rounds up", Call: ttl(srv.Addr, 1500*time.Microsecond, 2)},
		{Name: "WithTTL(max)", Call: ttl(srv.Addr, math.MaxInt64, int64(math.MaxInt64/time.Millisecond)+1)},
		{Name: "Claim on a closed client", Is: redis.ErrClosed, Msg: "redisclaim: claim cron:job:2026-01-01T00:00:00Z: redis: client is closed",
			Call: func(t *testing.T) error {
				closed := redis.NewClient(&redis.Options{Addr: srv.Addr})
				closed.Close()
				return claim(redisclaim.New(closed))(t)
			}},
	} {
		t.Run(m.Name, func(t *testing.T) { misusetest.Check(t, m) })
	}
}

// ttl claims with a TTL of d on a client of its own whose hook records
// the PX argument of the SET it sends to Redis, and checks it is wantMS:
// never less than d.
func ttl(addr string, d time.Duration, wantMS int64) func(t *testing.T) error {
	return func(t *testing.T) error {
		client := redis.NewClient(&redis.Options{Addr: addr})
		defer client.Close()
		var px []any
		client.AddHook(pxHook{&px})
		c := redisclaim.New(client, redisclaim.WithPrefix(fmt.Sprintf("ttl-%d:", d)), redisclaim.WithTTL(d))
		if _, err := c.Claim(context.Background(), "job", time.Unix(0, 0)); err != nil {
			return err
		}
		if len(px) != 1 || px[0] != wantMS {
			t.Errorf("WithTTL(%v): SET … PX %v, want %d", d, px, wantMS)
		}
		return nil
	}
}

// pxHook records the argument after "px" of each command a client sends.
type pxHook struct{ px *[]any }

func (pxHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h pxHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		for i := range len(args) - 1 {
			if args[i] == "px" {
				*h.px = append(*h.px, args[i+1])
			}
		}
		return next(ctx, cmd)
	}
}

func (pxHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
