package durable_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
)

// Bill every customer at 09:00 New York time, once across the replicas,
// each run a durable job that survives a replica killed as it runs.
// Every replica upserts the same schedule at start-up: the second and
// later calls change nothing. (Compiled, not run: it needs a Redis
// server.)
func ExampleSchedules_Upsert() {
	ctx := context.Background()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
	q := durable.New(rdb, durable.WithHandler("bill", func(ctx context.Context, j durable.Job) error {
		// j.ID is durable.RunID("billing", the instant): the same on
		// every replica, so a run is billed once.
		return nil
	}))
	defer q.Close(ctx)
	_, err := q.Schedules().Upsert(ctx, durable.Periodic{
		Name:    "billing",
		Spec:    "0 9 * * *",
		Zone:    "America/New_York",
		Kind:    "bill",
		Missed:  durable.MissedRunLast, // after downtime, bill once, late
		Overlap: durable.OverlapSkip,   // never two billings at once
	})
	if err != nil {
		fmt.Println(err)
	}
}

// What each live worker runs now, and the workers that stopped
// heartbeating, with when the jobs they held run again. (Compiled, not
// run.)
func ExampleQueue_Workers() {
	ctx := context.Background()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
	q := durable.New(rdb)
	defer q.Close(ctx)
	workers, now, err := q.Workers(ctx, 100)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range workers {
		fmt.Printf("%s on %s: %d running, last beat %v ago, gone %v\n", w.ID, w.Host, w.Running, now.Sub(w.Beat).Round(time.Second), w.Gone)
	}
}

// How late the last hour's jobs of a kind started, minute by minute: the
// figure no other job queue shows. (Compiled, not run.)
func ExampleQueue_History() {
	ctx := context.Background()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
	q := durable.New(rdb)
	defer q.Close(ctx)
	points, err := q.History(ctx, "webhook", false)
	if err != nil {
		fmt.Println(err)
		return
	}
	hour := points[max(0, len(points)-60):]
	for _, p := range hour {
		fmt.Printf("%s started %d, died %d, p99 late %v\n", p.At.Format("15:04"), p.Started, p.Died, p.Quantile(0.99))
	}
	all := durable.Sum(hour)
	fmt.Printf("the hour: %d started, p99 late %v, at most %v\n", all.Started, all.Quantile(0.99), all.LateMax)
}
