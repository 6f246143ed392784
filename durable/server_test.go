package durable_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// startRedis starts a redis-server of the machine's for the test, with
// the persistence args say, none by default (see redisserver.ForTest).
func startRedis(tb testing.TB, args ...string) *redisserver.Server {
	return redisserver.ForTest(tb, args...)
}

// newClient returns a client of addr, closed when the test ends.
func newClient(tb testing.TB, addr string) redis.UniversalClient {
	tb.Helper()
	c := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{addr}})
	tb.Cleanup(func() { c.Close() })
	return c
}

// newQueue returns a Queue on rdb, closed when the test ends.
func newQueue(tb testing.TB, rdb redis.UniversalClient, opts ...durable.Option) *durable.Queue {
	tb.Helper()
	q := durable.New(rdb, opts...)
	tb.Cleanup(func() {
		if err := q.Close(context.Background()); err != nil && !errors.Is(err, durable.ErrClosed) {
			tb.Error(err)
		}
	})
	return q
}

// waitUp waits until c reaches its server again after a restart.
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

// waitFor waits until cond holds, polling every 10ms, and fails the test
// with what if it does not within limit: a bound on a hang, not a
// measurement.
func waitFor(tb testing.TB, limit time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("not within %v: %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// empty reports whether the store of queue name holds no job.
func empty(rdb redis.UniversalClient, name string) bool {
	ctx := context.Background()
	return rdb.ZCard(ctx, "{"+name+"}:due").Val() == 0 && rdb.HLen(ctx, "{"+name+"}:job").Val() == 0 &&
		rdb.HLen(ctx, "{"+name+"}:run").Val() == 0
}
