package durable_test

import (
	"context"
	"log"
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

// A kind with its own timeout and retry policy; a handler's panic and
// the worker's Redis errors go to the program's logger. (Compiled, not
// run: it needs a Redis server.)
func ExampleWithHandler() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
	q := durable.New(rdb,
		durable.WithHandler("webhook", func(ctx context.Context, j durable.Job) error {
			// Deliver string(j.Payload); ctx ends after 30s.
			return nil
		}, durable.Timeout(30*time.Second), durable.Retry(10, durable.Exponential(time.Minute, 6*time.Hour))),
		durable.WithErrorHandler(func(err error) { log.Print(err) }),
		durable.WithPanicHandler(func(j durable.Job, p any, stack []byte) {
			log.Printf("job %s of kind %s panicked: %v\n%s", j.ID, j.Kind, p, stack)
		}))
	defer q.Close(context.Background())
}

// Pause a kind on every replica while its downstream is down; its due
// jobs wait, and run once it is resumed. (Compiled, not run.)
func ExampleQueue_Pause() {
	ctx := context.Background()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
	q := durable.New(rdb)
	q.Pause(ctx, "webhook")
	paused, _ := q.Paused(ctx) // ["webhook"]
	_ = paused
	q.Resume(ctx, "webhook")
}
