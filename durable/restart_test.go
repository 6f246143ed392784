package durable_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// redis-server with AOF everysec is killed (SIGKILL) and started again
// while a worker runs: the jobs that finished more than a second before
// do not run again, and every job scheduled before the kill runs,
// including those due while Redis was down. Then the same with a
// shutdown (SIGTERM), which writes the AOF out first.
func TestRedisRestartAOF(t *testing.T) {
	for _, stop := range []string{"kill", "shutdown"} {
		t.Run(stop, func(t *testing.T) {
			srv := startRedis(t, redisserver.AOFEverySec...)
			rdb := newClient(t, srv.Addr)
			r := newRuns()
			q := newQueue(t, rdb, durable.WithHandler("k", r.handler), durable.WithLease(time.Second))
			ctx := context.Background()
			for i := range 100 {
				mustSchedule(t, q, fmt.Sprint("done-", i), time.Now())
			}
			waitFor(t, 10*time.Second, "the first jobs run and acked", func() bool { return q.Stats().Ran == 100 })
			time.Sleep(1100 * time.Millisecond) // the acks older than a second when Redis goes
			soon := time.Now().Add(1500 * time.Millisecond)
			for i := range 100 {
				if ok, err := q.Schedule(ctx, fmt.Sprint("pending-", i), "k", soon.Add(time.Duration(i)*time.Millisecond), nil); !ok || err != nil {
					t.Fatal(ok, err)
				}
			}
			time.Sleep(1100 * time.Millisecond) // the schedules older than a second
			if stop == "kill" {
				srv.Stop()
			} else {
				srv.Shutdown()
			}
			time.Sleep(500 * time.Millisecond) // down while the jobs come due
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			waitUp(t, rdb)
			waitFor(t, 20*time.Second, "the pending jobs run", func() bool { return r.total() >= 200 })
			waitFor(t, 10*time.Second, "the store empty", func() bool { return empty(rdb, "durable") })
			for i := range 100 {
				for _, id := range []string{fmt.Sprint("done-", i), fmt.Sprint("pending-", i)} {
					if n := r.count(id); n != 1 {
						t.Errorf("%s ran %d times, want 1", id, n)
					}
				}
			}
			t.Logf("stats %+v", q.Stats())
		})
	}
}
