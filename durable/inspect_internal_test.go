package durable

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/internal/redisserver"
)

// Counts reads at most maxRunningWalk of the jobs claimable within the
// lease, and says so when there were more.
func TestCountsWalkBound(t *testing.T) {
	srv := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	q := New(rdb, WithName("walk"))
	defer q.Close(context.Background())
	ctx := context.Background()
	for i := range 5 {
		q.ScheduleAfter(ctx, fmt.Sprint("j", i), "k", time.Second+time.Duration(i)*time.Millisecond, nil)
	}
	defer func(n int) { maxRunningWalk = n }(maxRunningWalk)
	for _, c := range []struct {
		walk    int
		atLeast bool
	}{{3, true}, {5, false}, {6, false}} {
		maxRunningWalk = c.walk
		n, err := q.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n.RunningAtLeast != c.atLeast || n.Pending != 5 || n.Running != 0 {
			t.Errorf("walk %d: Counts = %+v; want RunningAtLeast %v", c.walk, n, c.atLeast)
		}
	}
}
