package durable_test

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
)

// Every replica of a shop makes the same Queue on one Redis: an order's
// timeout runs on one of them, 30 minutes after the order, unless the
// order is paid first. (It needs a Redis server, so it is compiled, not
// run; go run ./durable/example shows it working.)
func ExampleNew() {
	ctx := context.Background()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
	q := durable.New(rdb, durable.WithHandler("cancel-unpaid", func(ctx context.Context, j durable.Job) error {
		// Cancel order string(j.Payload) if it is still unpaid. It may run
		// again after a crash: cancelling a cancelled order changes nothing.
		return nil
	}))
	defer q.Close(ctx)

	// On a new order: true the first time, false for the same ID again.
	q.ScheduleAfter(ctx, "order-42", "cancel-unpaid", 30*time.Minute, []byte("42"))
	// On its payment:
	q.Cancel(ctx, "order-42")
}
