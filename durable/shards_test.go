package durable_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/timewheel/timewheel/durable"
)

// A queue of 1 and of 3 shards on one server, run by 3 replicas: 300
// jobs due 5 ms apart run once each, none early, each shard holding about
// a third; an ID-based call reaches its job's shard; Pause and Resume
// reach every shard.
func TestShards(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	ctx := context.Background()
	claims := map[int]uint64{}
	for _, k := range []int{1, 3} {
		name := fmt.Sprint("sh", k)
		r := newRuns()
		var qs []*durable.Queue
		for i := range 3 {
			qs = append(qs, newQueue(t, rdb, durable.WithName(name), durable.WithShards(k),
				durable.WithWorkerID(fmt.Sprint("w", i)), durable.WithHandler("k", r.handler)))
		}
		admin := newQueue(t, rdb, durable.WithName(name), durable.WithShards(k), durable.WithKinds("k"))
		const n = 300
		start := time.Now().Add(2500 * time.Millisecond)
		due := map[string]time.Time{}
		for i := range n {
			id := fmt.Sprint("job-", i)
			due[id] = start.Add(time.Duration(i) * 5 * time.Millisecond)
			mustSchedule(t, admin, id, due[id])
		}
		for _, tag := range durable.ShardTags(name, k) {
			if c := rdb.ZCard(ctx, "{"+tag+"}:due").Val(); c < int64(n/k/2) {
				t.Errorf("shard {%s} holds %d of %d jobs", tag, c, n)
			}
		}
		for i := range n {
			id := fmt.Sprint("job-", i)
			if info, ok, err := admin.Lookup(ctx, id); !ok || err != nil || info.Kind != "k" {
				t.Fatalf("Lookup %s: %+v, %v, %v", id, info, ok, err)
			}
		}
		waitFor(t, 20*time.Second, "every job run", func() bool { return r.total() == n })
		for _, q := range qs {
			claims[k] += q.Stats().Claims
		}
		r.mu.Lock()
		for id, at := range r.at {
			if len(at) != 1 || at[0].Before(due[id]) {
				t.Errorf("%s ran at %v, due %v", id, at, due[id])
			}
		}
		r.mu.Unlock()
		waitFor(t, 10*time.Second, "the store empty", func() bool { return shardsEmpty(rdb, name, k) })

		// Pause reaches every shard: nothing runs until Resume.
		if err := admin.Pause(ctx, ""); err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			id := fmt.Sprint("p-", i)
			mustSchedule(t, admin, id, time.Now())
			if i%10 == 0 { // Cancel reaches the job's shard: cancelled, it can be scheduled again
				if ok, err := admin.Cancel(ctx, id); !ok || err != nil {
					t.Fatalf("Cancel %s: %v, %v", id, ok, err)
				}
				mustSchedule(t, admin, id, time.Now())
			}
		}
		time.Sleep(300 * time.Millisecond)
		if got := r.total(); got != n {
			t.Errorf("%d jobs ran while the queue was paused", got-n)
		}
		if err := admin.Resume(ctx, ""); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for r.total() < n+30 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if r.total() != n+30 {
			p := "{" + name + "}:"
			t.Fatalf("k=%d: %d of 30 paused jobs ran; due %v job %v run %v paused %v parked %v %v", k, r.total()-n,
				rdb.ZCard(ctx, p+"due").Val(), rdb.HLen(ctx, p+"job").Val(), rdb.HGetAll(ctx, p+"run").Val(),
				rdb.SMembers(ctx, p+"paused").Val(), rdb.SMembers(ctx, p+"parked").Val(), rdb.ZRangeWithScores(ctx, p+"due", 0, 3).Val())
		}
	}
	// The claims that carry jobs go to the jobs' shards; each shard's
	// worker also claims once a poll (a second) to find the jobs that
	// entered its horizon, so the idle claims grow with the shards.
	t.Logf("claims for 300 jobs by 3 replicas: %d with 1 shard, %d with 3", claims[1], claims[3])
}
