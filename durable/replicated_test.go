package durable_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
)

// WithReplicated and WithShards panic on values they cannot take, and New
// on a client WithReplicated cannot route.
func TestClusterOptionsMisuse(t *testing.T) {
	mustPanic(t, "durable: WithReplicated: non-positive n 0", func() { durable.WithReplicated(0, time.Second) })
	mustPanic(t, "durable: WithReplicated: timeout 999µs under 1ms", func() { durable.WithReplicated(1, 999*time.Microsecond) })
	mustPanic(t, "durable: WithShards: k 0 not in [1, 256]", func() { durable.WithShards(0) })
	mustPanic(t, "durable: WithShards: k 257 not in [1, 256]", func() { durable.WithShards(257) })
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer ring.Close()
	mustPanic(t, "durable: New: WithReplicated needs a *redis.Client or *redis.ClusterClient, not *redis.Ring", func() {
		durable.New(ring, durable.WithReplicated(1, time.Second))
	})
}

// On a server without a replica, a Schedule WithReplicated waits out its
// timeout and returns ErrNotReplicated; the primary holds the job. A
// Cancel does the same.
func TestReplicatedWithoutReplica(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	q := newQueue(t, rdb, durable.WithReplicated(1, 50*time.Millisecond))
	ctx := context.Background()
	t0 := time.Now()
	_, err := q.Schedule(ctx, "a", "k", time.Now().Add(time.Hour), nil)
	if !errors.Is(err, durable.ErrNotReplicated) || time.Since(t0) < 50*time.Millisecond {
		t.Fatalf("Schedule: %v after %v; want ErrNotReplicated after 50ms", err, time.Since(t0))
	}
	if _, ok, err := q.Lookup(ctx, "a"); !ok || err != nil {
		t.Fatalf("Lookup: %v, %v; want the job", ok, err)
	}
	if _, err := q.Cancel(ctx, "a"); !errors.Is(err, durable.ErrNotReplicated) {
		t.Fatalf("Cancel: %v; want ErrNotReplicated", err)
	}
	if _, ok, _ := q.Lookup(ctx, "a"); ok {
		t.Fatal("the job outlived its Cancel")
	}
}

// A WAIT longer than the call timeout still ends in ErrNotReplicated:
// the call is bounded by the call timeout plus the WAIT, so a shortfall
// of replicas is not taken for Redis unreachable, and the breaker lets
// the next call through.
func TestReplicatedWaitOverCallTimeout(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	q := newQueue(t, rdb, durable.WithReplicated(1, 300*time.Millisecond), durable.WithCallTimeout(100*time.Millisecond))
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if _, err := q.Schedule(ctx, id, "k", time.Now().Add(time.Hour), nil); !errors.Is(err, durable.ErrNotReplicated) {
			t.Fatalf("Schedule %q: %v; want ErrNotReplicated", id, err)
		}
	}
	if _, err := q.Cancel(ctx, "a"); !errors.Is(err, durable.ErrNotReplicated) {
		t.Fatalf("Cancel: %v; want ErrNotReplicated", err)
	}
}

// WithReplicated on a server without a replica, MoveToShards still moves
// a job whole (it is found in its new shard, once) and stops with
// ErrNotReplicated.
func TestReplicatedMoveToShards(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	ctx := context.Background()
	old := newQueue(t, rdb, durable.WithName("mvr"), durable.WithKinds("k"))
	id := ""
	for i := 0; id == ""; i++ {
		if c := fmt.Sprint("j", i); shardOf(c, 3) != 0 {
			id = c
		}
	}
	if ok, err := old.Schedule(ctx, id, "k", time.Now().Add(time.Hour), nil); !ok || err != nil {
		t.Fatal(ok, err)
	}
	q := newQueue(t, rdb, durable.WithName("mvr"), durable.WithShards(3), durable.WithKinds("k"),
		durable.WithReplicated(1, 20*time.Millisecond))
	moved, left, err := q.MoveToShards(ctx)
	if moved != 1 || left != 0 || !errors.Is(err, durable.ErrNotReplicated) {
		t.Fatalf("MoveToShards = %d moved, %d left, %v; want 1, 0, ErrNotReplicated", moved, left, err)
	}
	if _, ok, err := q.Lookup(ctx, id); !ok || err != nil {
		t.Fatalf("Lookup %s in its shard: %v, %v", id, ok, err)
	}
	if _, ok, _ := old.Lookup(ctx, id); ok {
		t.Errorf("%s is still in shard 0 too", id)
	}
}

// On a server without a replica, the worker's ack WithReplicated waits
// out its timeout: the shortfall goes to the error handler as an "ack"
// wrapping ErrNotReplicated and is counted in Stats.Errors, while the
// job counts as run, once, and is gone from the store.
func TestReplicatedAckWithoutReplica(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r := newRuns()
	errs := make(chan error, 100)
	q := newQueue(t, rdb, durable.WithReplicated(1, 20*time.Millisecond), durable.WithHandler("k", r.handler),
		durable.WithErrorHandler(func(err error) {
			select {
			case errs <- err:
			default:
			}
		}))
	if _, err := q.Schedule(context.Background(), "a", "k", time.Now(), nil); !errors.Is(err, durable.ErrNotReplicated) {
		t.Fatalf("Schedule: %v; want ErrNotReplicated", err)
	}
	waitFor(t, 10*time.Second, "the job acked", func() bool { return q.Stats().Ran == 1 })
	var ce *durable.CallError
	for ce == nil || ce.Op != "ack" {
		select {
		case err := <-errs:
			if !errors.As(err, &ce) || !errors.Is(err, durable.ErrNotReplicated) {
				t.Fatalf("error handler got %v; want a CallError wrapping ErrNotReplicated", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no ack shortfall reported")
		}
	}
	if st := q.Stats(); st.Errors == 0 || st.Ran != 1 {
		t.Errorf("stats %+v; want the shortfall among Errors, the job Ran once", st)
	}
	if !empty(rdb, "durable") || r.count("a") != 1 {
		t.Errorf("after the ack: store empty %v, job ran %d times", empty(rdb, "durable"), r.count("a"))
	}
}
