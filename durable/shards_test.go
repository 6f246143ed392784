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
	// The claims that carry jobs go to the jobs' shards: each shard's
	// worker claims for its own.
	t.Logf("claims for 300 jobs by 3 replicas: %d with 1 shard, %d with 3", claims[1], claims[3])
}

// An idle worker claims only when something comes within reach, however
// many shards its queue has: over the same idle interval, a queue of 3
// shards sends no more claims than one of 1, at the default poll (none)
// and at a poll of 1 s (a replica's safety-net claims, spread over its
// shards). Then jobs scheduled on the idle queues, due at once and past
// the horizon, run once, none early.
func TestIdleClaimsDoNotGrowWithShards(t *testing.T) {
	for _, poll := range []time.Duration{0, time.Second} {
		t.Run(fmt.Sprint("poll=", poll), func(t *testing.T) { testIdleClaims(t, poll) })
	}
}

func testIdleClaims(t *testing.T, poll time.Duration) {
	rdb := newClient(t, startRedis(t).Addr)
	const idle = 3 * time.Second
	r := newRuns()
	qs := map[int]*durable.Queue{}
	for _, k := range []int{1, 3} {
		opts := []durable.Option{durable.WithName(fmt.Sprint("idle", k)), durable.WithShards(k),
			durable.WithWorkerID("w"), durable.WithHandler("k", r.handler)}
		if poll > 0 {
			opts = append(opts, durable.WithPoll(poll))
		}
		qs[k] = newQueue(t, rdb, opts...)
	}
	// Each shard's worker claims as it starts, and once subscribed: wait
	// for the subscriptions, then for the counts to stay put a while.
	var inboxes []any
	for _, k := range []int{1, 3} {
		for _, tag := range durable.ShardTags(fmt.Sprint("idle", k), k) {
			inboxes = append(inboxes, "{"+tag+"}:ev:w")
		}
	}
	waitFor(t, 10*time.Second, "every worker subscribed", func() bool {
		v, err := rdb.Do(context.Background(), append([]any{"pubsub", "shardnumsub"}, inboxes...)...).Slice()
		for i := 1; err == nil && i < len(v); i += 2 {
			if v[i] != int64(1) {
				return false
			}
		}
		return err == nil && len(v) == 2*len(inboxes)
	})
	before := map[int]uint64{}
	for settled := 0; settled < 30; settled++ {
		if b := (map[int]uint64{1: qs[1].Stats().Claims, 3: qs[3].Stats().Claims}); b[1] != before[1] || b[3] != before[3] {
			before, settled = b, 0
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(idle)
	claims := map[int]uint64{}
	for k, q := range qs {
		claims[k] = q.Stats().Claims - before[k]
	}
	t.Logf("claims over %v idle: %d with 1 shard, %d with 3", idle, claims[1], claims[3])
	if claims[3] > claims[1]+1 {
		t.Errorf("idle claims: %d with 3 shards, %d with 1; want no more with 3", claims[3], claims[1])
	}

	due := map[string]time.Time{}
	now := time.Now()
	for k, q := range qs {
		for i := range 6 {
			id := fmt.Sprintf("idle%d-%d", k, i)
			due[id] = now.Add(time.Duration(i%2) * 3 * time.Second) // at once, or past the horizon
			if ok, err := q.Schedule(context.Background(), id, "k", due[id], nil); !ok || err != nil {
				t.Fatalf("Schedule %s: %v, %v", id, ok, err)
			}
		}
	}
	waitFor(t, 20*time.Second, "every job run", func() bool { return r.total() == len(due) })
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, at := range r.at {
		if len(at) != 1 || at[0].Before(due[id]) {
			t.Errorf("%s ran at %v, due %v", id, at, due[id])
		}
	}
}
