package durable_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel/durable"
)

// A Schedule on a Redis that is connected but stalled (CLIENT PAUSE)
// returns within WithCallTimeout and a margin, with a client at
// go-redis's defaults (ContextTimeoutEnabled false), and its error says
// which call and how long; the breaker then fails the next call at once.
func TestScheduleBoundOnStalledRedis(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	q := newQueue(t, rdb, durable.WithKinds("k"))
	ctx := context.Background()
	if _, err := q.Schedule(ctx, "warm", "k", time.Now().Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Do(ctx, "CLIENT", "PAUSE", 3000, "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err := q.Schedule(ctx, "a", "k", time.Now().Add(time.Hour), nil)
	took := time.Since(t0)
	// The bound is 1 s (WithCallTimeout's default); 2 s is generous, and
	// under the pause's 3 s, which a call that ignores its deadline waits.
	if err == nil || took > 2*time.Second || !strings.Contains(err.Error(), "schedule: no reply from Redis within 1s") {
		t.Fatalf("Schedule on a paused Redis: %v after %v; want an error within 2s that names the call and 1s", err, took)
	}
	if _, err := q.Schedule(ctx, "b", "k", time.Now().Add(time.Hour), nil); !errors.Is(err, durable.ErrUnavailable) {
		t.Errorf("the next Schedule: %v; want ErrUnavailable", err)
	}
	// A PING sent now returns once the pause ends, after the calls before
	// it: the test ends with no call in flight.
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}
