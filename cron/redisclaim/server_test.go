package redisclaim_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/internal/redisserver"
)

// startRedis starts a redis-server of the machine's for the test,
// without persistence (see redisserver.ForTest).
func startRedis(tb testing.TB) *redisserver.Server { return redisserver.ForTest(tb) }

// newClient returns a client of srv, closed when the test ends. Options
// change go-redis's defaults.
func newClient(tb testing.TB, srv *redisserver.Server, opts ...func(*redis.UniversalOptions)) redis.UniversalClient {
	tb.Helper()
	o := &redis.UniversalOptions{Addrs: []string{srv.Addr}}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewUniversalClient(o)
	tb.Cleanup(func() { c.Close() })
	return c
}

// failFast makes a client give up at once on a server that is down,
// instead of redialing for seconds.
func failFast(o *redis.UniversalOptions) {
	o.MaxRetries = -1
	o.DialerRetries = 1
}

// waitUp waits until c reaches its server again after a restart: go-redis
// probes a server it failed to dial once a second.
func waitUp(tb testing.TB, c redis.UniversalClient) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for c.Ping(ctx).Err() != nil {
		select {
		case <-ctx.Done():
			tb.Fatalf("Redis not back: %v", c.Ping(context.Background()).Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
