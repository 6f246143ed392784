package durable_test

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
)

// An operator's look at a queue from Redis: its figures, then its dead
// jobs a page at a time, retried once their bug is fixed. (It needs a
// Redis server, so it is compiled, not run.)
func ExampleQueue_List() {
	ctx := context.Background()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
	q := durable.New(rdb, durable.WithName("orders")) // no handler: no worker
	c, err := q.Counts(ctx)
	if err != nil {
		return
	}
	fmt.Printf("%d pending, %d due (the oldest waited %v), %d running, %d dead\n", c.Pending, c.Due, c.Lateness, c.Running, c.Dead)
	for cursor := ""; ; {
		jobs, next, err := q.List(ctx, durable.Dead, cursor, 100)
		if err != nil {
			return
		}
		for _, j := range jobs {
			fmt.Println(j.ID, j.Kind, j.Err)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	q.RetryAllDead(ctx, "charge") // after the fix
}
