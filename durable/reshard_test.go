package durable_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// shardOf returns the shard of id in a queue of k shards, as durable
// computes it.
func shardOf(id string, k int) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(k))
}

// A queue of one shard goes to three: MoveToShards moves the dead jobs,
// and the pending ones due more than 10 s ahead, whose IDs map to shards
// 1 and 2, and leaves those due sooner; Lookup, Cancel and Reschedule of
// the new layout then find every moved job, and the jobs run once, from
// their new shards or from shard 0. A copy left by a call that stopped
// half way is taken for the job's own; a second call moves nothing more.
func TestMoveToShards(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	ctx := context.Background()
	const name = "mv"
	r := newRuns()
	fail := func(context.Context, durable.Job) error { return errors.New("bad") }
	worker := newQueue(t, rdb, durable.WithName(name),
		durable.WithHandler("bad", fail, durable.Retry(1, durable.Exponential(time.Millisecond, time.Millisecond))))
	for i := range 20 {
		if ok, err := worker.Schedule(ctx, fmt.Sprint("dead-", i), "bad", time.Now(), nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	waitFor(t, 10*time.Second, "20 dead jobs", func() bool { return worker.Stats().Dead == 20 })
	if err := worker.Close(ctx); err != nil {
		t.Fatal(err)
	}
	old := newQueue(t, rdb, durable.WithName(name), durable.WithKinds("k"))
	far := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	soon := time.Now().Add(3 * time.Second)
	for i := range 200 {
		if ok, err := old.Schedule(ctx, fmt.Sprint("far-", i), "k", far, []byte(fmt.Sprint("p", i))); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	for i := range 20 {
		mustSchedule(t, old, fmt.Sprint("soon-", i), soon)
	}
	// A copy of the first far job of shards 1 and 2 in its new shard, as
	// a call that stopped after the copy would have left it.
	half := ""
	for i := 0; half == ""; i++ {
		if id := fmt.Sprint("far-", i); shardOf(id, 3) != 0 {
			half = id
		}
	}
	p0, pt := "{"+name+"}:", "{"+durable.ShardTags(name, 3)[shardOf(half, 3)]+"}:"
	rdb.HSet(ctx, pt+"job", half, rdb.HGet(ctx, p0+"job", half).Val())
	rdb.ZAdd(ctx, pt+"due", redis.Z{Score: rdb.ZScore(ctx, p0+"due", half).Val(), Member: half})

	q := newQueue(t, rdb, durable.WithName(name), durable.WithShards(3), durable.WithKinds("k", "bad"))
	want := map[string]bool{} // the jobs of shards 1 and 2 it moves
	wantLeft := 0
	for i := range 200 {
		if id := fmt.Sprint("far-", i); shardOf(id, 3) != 0 {
			want[id] = true
		}
	}
	for i := range 20 {
		if id := fmt.Sprint("dead-", i); shardOf(id, 3) != 0 {
			want[id] = true
		}
		if shardOf(fmt.Sprint("soon-", i), 3) != 0 {
			wantLeft++
		}
	}
	moved, left, err := q.MoveToShards(ctx)
	if err != nil || moved != len(want) || left != wantLeft {
		t.Fatalf("MoveToShards: %d moved, %d left, %v; want %d, %d", moved, left, err, len(want), wantLeft)
	}
	for i := range 200 {
		id := fmt.Sprint("far-", i)
		info, ok, err := q.Lookup(ctx, id)
		if !ok || err != nil || info.State != durable.Pending || !info.Due.Equal(far) || string(info.Payload) != fmt.Sprint("p", i) {
			t.Fatalf("Lookup %s: %+v, %v, %v", id, info, ok, err)
		}
	}
	for i := range 20 {
		id := fmt.Sprint("dead-", i)
		if info, ok, err := q.Lookup(ctx, id); !ok || err != nil || info.State != durable.Dead || info.Err != "bad" {
			t.Fatalf("Lookup %s: %+v, %v, %v", id, info, ok, err)
		}
	}
	if n := rdb.HLen(ctx, p0+"job").Val(); n != int64(240-len(want)) {
		t.Errorf("shard 0 holds %d jobs, want %d", n, 240-len(want))
	}
	if moved, left, err := q.MoveToShards(ctx); moved != 0 || left != wantLeft || err != nil {
		t.Errorf("again: %d moved, %d left, %v; want 0, %d", moved, left, err, wantLeft)
	}

	// The new layout's calls reach the moved jobs; a worker of 3 shards
	// runs them and those left in shard 0, each once.
	newQueue(t, rdb, durable.WithName(name), durable.WithShards(3), durable.WithHandler("k", r.handler))
	for i := range 200 {
		id := fmt.Sprint("far-", i)
		var ok bool
		if i%2 == 0 {
			ok, err = q.Cancel(ctx, id)
		} else {
			ok, err = q.Reschedule(ctx, id, time.Now())
		}
		if !ok || err != nil {
			t.Fatalf("%s: %v, %v", id, ok, err)
		}
	}
	waitFor(t, 20*time.Second, "the rescheduled and the soon jobs run", func() bool { return r.total() >= 120 })
	time.Sleep(100 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, at := range r.at {
		if len(at) != 1 {
			t.Errorf("%s ran %d times", id, len(at))
		}
	}
	if len(r.at) != 120 {
		t.Errorf("%d jobs ran, want 120", len(r.at))
	}
}

// clusterMoveRuns counts the runs of TestClusterMoveToShards.
var clusterMoveRuns int

// On a cluster, MoveToShards moves a queue of one shard's jobs to three
// shards on three primaries: each script runs on its own shard's node.
func TestClusterMoveToShards(t *testing.T) {
	c := redisserver.SharedCluster(t)
	rdb := clusterClient(t, c)
	ctx := context.Background()
	// The cluster lasts for the process: a fresh queue for each run, so
	// that -count=2 works.
	clusterMoveRuns++
	name := fmt.Sprint("c-move-to-3-", clusterMoveRuns)
	old := newQueue(t, rdb, durable.WithName(name), durable.WithKinds("k"))
	at := time.Now().Add(time.Hour)
	want := 0
	for i := range 100 {
		id := fmt.Sprint("j", i)
		if ok, err := old.Schedule(ctx, id, "k", at, nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if shardOf(id, 3) != 0 {
			want++
		}
	}
	q := newQueue(t, rdb, durable.WithName(name), durable.WithShards(3), durable.WithKinds("k"))
	if moved, left, err := q.MoveToShards(ctx); moved != want || left != 0 || err != nil {
		t.Fatalf("MoveToShards: %d moved, %d left, %v; want %d, 0", moved, left, err, want)
	}
	for i := range 100 {
		if _, ok, err := q.Lookup(ctx, fmt.Sprint("j", i)); !ok || err != nil {
			t.Errorf("Lookup j%d: %v, %v", i, ok, err)
		}
	}
	for _, tag := range durable.ShardTags(name, 3) {
		p, err := c.Primary(redisserver.Slot("{" + tag + "}"))
		if err != nil {
			t.Fatal(err)
		}
		if v, err := p.Do("HLEN", "{"+tag+"}:job"); err != nil || v == int64(0) {
			t.Errorf("shard {%s} on %s holds %v jobs, %v", tag, p.Addr, v, err)
		}
	}
}
