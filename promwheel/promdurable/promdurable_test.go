package promdurable_test

import (
	"context"
	"errors"
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
			if match {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no %s{le=%q}", name, le)
	return 0
}

func TestNilQueue(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "promdurable: NewCollector: nil *durable.Queue") {
			t.Fatalf("recover() = %v", r)
		}
	}()
	promdurable.NewCollector("x", nil)
}
