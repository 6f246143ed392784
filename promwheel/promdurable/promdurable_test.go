package promdurable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
	"github.com/timewheel/timewheel/promwheel/promdurable"
)

// TestCollector runs two jobs through a queue on a real redis-server, one
// that succeeds and one that fails for good, and reads the counts back
// from a registry.
func TestCollector(t *testing.T) {
	srv := redisserver.ForTest(t)
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr}})
	defer rdb.Close()
	done := make(chan string, 2)
	q := durable.New(rdb, durable.WithName("promdurable"), durable.WithRetry(1, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithHandler("ok", func(_ context.Context, j durable.Job) error { done <- j.ID; return nil }),
		durable.WithHandler("fail", func(_ context.Context, j durable.Job) error { done <- j.ID; return errors.New("no") }))
	defer q.Close(context.Background())
	ctx := context.Background()
	for _, k := range []string{"ok", "fail"} {
		if _, err := q.ScheduleAfter(ctx, k+"-1", k, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the jobs did not run within 30 s")
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(promdurable.NewCollector("orders", q))
	want := `
# HELP timewheel_durable_scheduled_total Jobs Schedule and ScheduleAfter added.
# TYPE timewheel_durable_scheduled_total counter
timewheel_durable_scheduled_total{queue="orders"} 2
`
	// Ran and Dead are counted once the handler's result is in the store,
	// a moment after it returns.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := q.Stats()
		if st.Ran == 1 && st.Dead == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "timewheel_durable_scheduled_total"); err != nil {
		t.Error(err)
	}
	for name, v := range map[string]float64{
		"timewheel_durable_ran_total":     1,
		"timewheel_durable_dead_total":    1,
		"timewheel_durable_claimed_total": 2,
	} {
		if got := gathered(t, reg, name, ""); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	if got := gathered(t, reg, "timewheel_durable_late_attempts_total", "+Inf"); got != 2 {
		t.Errorf(`timewheel_durable_late_attempts_total{le="+Inf"} = %v, want 2`, got)
	}
}

// gathered returns the value of the metric name of the registry, the
// series with label le (or the only one if le is "").
func gathered(t *testing.T, reg *prometheus.Registry, name, le string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			match := le == ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "le" && l.GetValue() == le {
					match = true
				}
			}
			if match && m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			if match {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no %s{le=%q}", name, le)
	return 0
}

func TestNilQueue(t *testing.T) {
	for want, f := range map[string]func(){
		"promdurable: NewCollector: nil *durable.Queue":      func() { promdurable.NewCollector("x", nil) },
		"promdurable: NewQueueCollector: nil *durable.Queue": func() { promdurable.NewQueueCollector("x", nil) },
	} {
		func() {
			defer func() {
				if r, _ := recover().(string); r != want {
					t.Errorf("recover() = %q; want %q", r, want)
				}
			}()
			f()
		}()
	}
}

// TestQueueCollector reads a queue's figures from a real redis-server: a
// dead job, two due and three later ones, and no worker to claim them.
func TestQueueCollector(t *testing.T) {
	srv := redisserver.ForTest(t)
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr}})
	defer rdb.Close()
	ctx := context.Background()
	w := durable.New(rdb, durable.WithName("figures"), durable.WithRetry(1, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithHandler("fail", func(context.Context, durable.Job) error { return errors.New("no") }))
	w.ScheduleAfter(ctx, "dead-1", "fail", 0, nil)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, _ := w.Counts(ctx); c.Dead == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dead-1 not dead within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.Close(ctx)
	q := durable.New(rdb, durable.WithName("figures"))
	defer q.Close(ctx)
	for i := range 2 {
		q.Schedule(ctx, fmt.Sprint("due-", i), "k", time.Now().Add(-3*time.Second), nil)
	}
	for i := range 3 {
		q.ScheduleAfter(ctx, fmt.Sprint("later-", i), "k", time.Hour, nil)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(promdurable.NewQueueCollector("orders", q))
	want := `
# HELP timewheel_durable_jobs Jobs in the queue's store, by state: pending, running or dead.
# TYPE timewheel_durable_jobs gauge
timewheel_durable_jobs{queue="orders",state="dead"} 1
timewheel_durable_jobs{queue="orders",state="pending"} 5
timewheel_durable_jobs{queue="orders",state="running"} 0
# HELP timewheel_durable_due_jobs Jobs a worker may claim now and none has: pending ones due, and running ones whose lease ran out.
# TYPE timewheel_durable_due_jobs gauge
timewheel_durable_due_jobs{queue="orders"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "timewheel_durable_jobs", "timewheel_durable_due_jobs"); err != nil {
		t.Error(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "timewheel_durable_oldest_due_seconds" {
			if v := f.GetMetric()[0].GetGauge().GetValue(); v < 3 || v > 60 {
				t.Errorf("timewheel_durable_oldest_due_seconds = %v; want about 3", v)
			}
		}
	}
	q.Pause(ctx, "k")
	if got := gathered(t, reg, "timewheel_durable_paused", ""); got != 1 {
		t.Errorf(`timewheel_durable_paused{kind="k"} = %v; want 1`, got)
	}
	// Redis gone: the scrape fails with the error.
	srv.Stop()
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "durable: Counts") {
		t.Errorf("Gather with Redis down: %v; want the Counts error", err)
	}
}
