package durable_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// On Redis Sentinel, through go-redis's failover client: the primary
// killed (SIGKILL) while jobs run, the Sentinel promotes its replica, and
// every job a Queue WithReplicated had acknowledged runs, none early.
func TestSentinelFailover(t *testing.T) {
	ss := redisserver.SentinelsForTest(t, "durable-test")
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: ss.Name, SentinelAddrs: []string{ss.Addr()}})
	t.Cleanup(func() { rdb.Close() })
	r := newRuns()
	q := newQueue(t, rdb, durable.WithName("s"), durable.WithHandler("k", r.handler),
		durable.WithReplicated(1, time.Second), durable.WithLease(time.Second))
	ctx := context.Background()
	const n = 300
	start := time.Now().Add(500 * time.Millisecond)
	due := map[string]time.Time{}
	for i := range n {
		id := fmt.Sprint("job-", i)
		due[id] = start.Add(time.Duration(i) * 1500 * time.Millisecond / n)
		if ok, err := q.Schedule(ctx, id, "k", due[id], nil); !ok || err != nil {
			t.Fatalf("Schedule %s: %v, %v", id, ok, err)
		}
	}
	time.Sleep(time.Until(start.Add(500 * time.Millisecond)))
	ran := r.total()
	down, err := ss.KillPrimary()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "every job run", func() bool {
		for id := range due {
			if r.count(id) == 0 {
				return false
			}
		}
		return true
	})
	twice := 0
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, at := range r.at {
		if at[0].Before(due[id]) {
			t.Errorf("%s started %v early", id, due[id].Sub(at[0]))
		}
		if len(at) > 1 {
			twice++
		}
	}
	t.Logf("%d jobs ran before the kill; no primary for %v; all %d ran, %d of them twice", ran, down.Round(time.Millisecond), n, twice)
}
