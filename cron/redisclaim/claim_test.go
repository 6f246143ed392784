package redisclaim_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/cron/claimtest"
	"github.com/timewheel/timewheel/cron/redisclaim"
)

// The claim suite against a real Redis: five replicas on clocks up to 4s
// apart, every instant of "* * * * *" for a day, "0 9 * * *" in New York
// from March to November and "@every 10s" for a day exactly once in all,
// and a restart of every replica catching up a missed run once.
func TestClaimSuite(t *testing.T) {
	rdb := newClient(t, startRedis(t))
	claimtest.Run(t, func(t *testing.T) cron.Claimer {
		return redisclaim.New(rdb, redisclaim.WithPrefix(t.Name()+":"))
	})
}

// One SET NX PX per claim: the first stores the key with its owner and
// TTL, the next finds it, whatever the zone the instant is given in.
func TestClaim(t *testing.T) {
	ctx := context.Background()
	rdb := newClient(t, startRedis(t))
	c := redisclaim.New(rdb, redisclaim.WithTTL(90*time.Minute), redisclaim.WithOwner("replica-a"))
	ny, _ := time.LoadLocation("America/New_York")
	at := time.Date(2026, 3, 9, 9, 0, 0, 0, ny)
	if key := c.Key("report", at); key != "cron:report:2026-03-09T13:00:00Z" {
		t.Errorf("key %q", key)
	}
	if won, err := c.Claim(ctx, "report", at); !won || err != nil {
		t.Fatalf("first claim: %v, %v", won, err)
	}
	if won, err := c.Claim(ctx, "report", at.UTC()); won || err != nil {
		t.Fatalf("second claim: %v, %v", won, err)
	}
	if won, err := redisclaim.New(rdb).Claim(ctx, "report", at.Add(time.Nanosecond)); !won || err != nil {
		t.Fatalf("claim of another instant: %v, %v", won, err)
	}
	if v, err := rdb.Get(ctx, "cron:report:2026-03-09T13:00:00.000000001Z").Result(); err != nil || !strings.Contains(v, ":") {
		t.Errorf("default owner %q, %v; want host:pid", v, err)
	}
	key := c.Key("report", at)
	if v := rdb.Get(ctx, key).Val(); v != "replica-a" {
		t.Errorf("owner %q", v)
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 89*time.Minute || ttl > 90*time.Minute {
		t.Errorf("TTL %v, want 90m", ttl)
	}
	if n, err := rdb.MemoryUsage(ctx, key).Result(); err == nil {
		t.Logf("%s: %d bytes", key, n)
	}
}

// A claim on a Redis that is down is an error that names the key; the
// same Claimer claims again once Redis is back.
func TestClaimError(t *testing.T) {
	ctx := context.Background()
	srv := startRedis(t)
	rdb := newClient(t, srv, failFast)
	c := redisclaim.New(rdb)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	srv.Stop()
	won, err := c.Claim(ctx, "job", at)
	if won || err == nil || !strings.HasPrefix(err.Error(), "redisclaim: claim cron:job:2026-01-01T00:00:00Z: ") {
		t.Fatalf("claim with Redis down: %v, %v", won, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Claim(ctx, "job", at); !errors.Is(err, context.Canceled) {
		t.Errorf("claim with a canceled context: %v", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitUp(t, rdb)
	if won, err := c.Claim(context.Background(), "job", at); !won || err != nil {
		t.Fatalf("claim after restart: %v, %v", won, err)
	}
}
