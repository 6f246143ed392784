package redisclaim_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/cron/claimtest"
	"github.com/timewheel/timewheel/cron/redisclaim"
)

// minutes returns the minutes from one to another after midnight of start's
// day, inclusive.
func minutes(start time.Time, from, to int) []time.Time {
	day := start.Truncate(24 * time.Hour)
	var at []time.Time
	for m := from; m <= to; m++ {
		at = append(at, day.Add(time.Duration(m)*time.Minute))
	}
	return at
}

// Redis is stopped for ten minutes in the middle of an hour, and started
// again empty. A job under AtMostOnce (the default) skips the runs that
// fall due meanwhile; one under AtLeastOnce runs them on every replica.
// Every failed claim reaches the handler and the stats; the runs after
// the restart are claimed again, once each.
func TestRedisDown(t *testing.T) {
	srv := startRedis(t)
	rdb := newClient(t, srv, failFast)
	var mu sync.Mutex
	handled := 0
	handler := cron.WithClaimErrorHandler(func(string, time.Time, error) {
		mu.Lock()
		handled++
		mu.Unlock()
	})
	start := time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC) // 5s off the minutes, beyond the 4s skew
	sim := claimtest.New(t, redisclaim.New(rdb), start, claimtest.Config{Replicas: 3, Options: []cron.Option{handler}})
	sim.Add("at-most-once", "* * * * *")
	sim.Add("at-least-once", "* * * * *", cron.OnClaimFailure(cron.AtLeastOnce))

	sim.RunUntil(start.Add(20 * time.Minute))
	srv.Stop()
	sim.RunUntil(start.Add(30 * time.Minute)) // 0:21 to 0:30, Redis down
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitUp(t, rdb)
	sim.RunUntil(start.Add(time.Hour))

	up := append(minutes(start, 1, 20), minutes(start, 31, 60)...)
	down := minutes(start, 21, 30)
	tl := sim.Tally("at-most-once", up)
	t.Logf("at most once: %s", tl)
	if !tl.Exact() {
		t.Errorf("at most once: the runs while Redis was up must run once each, the others never: %s", tl)
	}
	tl = sim.Tally("at-least-once", up)
	t.Logf("at least once, Redis up: %s", tl)
	if tl.Once != len(up) || tl.More != 0 || tl.Never != 0 || tl.Stray != 3*len(down) {
		t.Errorf("at least once: the runs while Redis was up must run once each, the others on all 3 replicas: %s", tl)
	}
	if tl := sim.Tally("at-least-once", down); tl.More != len(down) {
		t.Errorf("at least once, Redis down: %s", tl)
	}
	errs := 0
	for i := range 3 {
		st := sim.Scheduler(i).Stats()
		t.Logf("replica %d: %+v", i, st)
		errs += st.ClaimErrors
	}
	if want := 3 * 2 * len(down); errs != want || handled != want {
		t.Errorf("%d claim errors counted, %d handled; want %d", errs, handled, want)
	}
}

// The same replicas with a lock taken for each run and released a
// millisecond after it starts, as lock-and-release schedulers do (gocron
// issue 841): a replica whose clock is behind by more than the run takes
// finds the lock free and runs the job again.
func TestLockAndReleaseRunsTwice(t *testing.T) {
	rdb := newClient(t, startRedis(t))
	lock := redisclaim.New(rdb, redisclaim.WithPrefix("lock:"))
	start := time.Date(2026, 3, 7, 0, 0, 5, 0, time.UTC)
	var sim *claimtest.Sim
	sim = claimtest.New(t, lock, start, claimtest.Config{Replicas: 5,
		OnRun: func(i int, job string, at time.Time) {
			sim.Wheel(i).AfterFunc(time.Millisecond, func() { rdb.Del(context.Background(), lock.Key(job, at)) })
		}})
	sim.Add("job", "* * * * *")
	sim.RunUntil(start.Add(24 * time.Hour))
	tl := sim.Tally("job", minutes(start, 1, 24*60))
	t.Logf("lock-and-release: %s", tl)
	if tl.More < tl.Instants*9/10 {
		t.Errorf("lock-and-release ran fewer instants twice than expected: %s", tl)
	}
}

// Three schedulers as in production, each run on a goroutine of its own
// with its claim, each scheduler's clock advanced by a goroutine of its
// own, at once, with jobs that take a millisecond: every second of five
// minutes runs exactly once.
func TestConcurrentReplicas(t *testing.T) {
	rdb := newClient(t, startRedis(t))
	c := redisclaim.New(rdb)
	start := time.Date(2026, 1, 1, 0, 0, 0, 500_000_000, time.UTC)
	skews := []time.Duration{0, 1500 * time.Millisecond, -2 * time.Second}
	const steps = 300
	var mu sync.Mutex
	ran := map[time.Time][]int{}
	var wg sync.WaitGroup
	for i, skew := range skews {
		clk := clock.NewVirtual(start.Add(skew))
		w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
		defer w.Close()
		s := cron.New(cron.WithWheel(w), cron.WithClaimer(c), cron.WithLocation(time.UTC))
		_, err := s.Add("tick", "* * * * * *", func(_ context.Context, at time.Time) {
			time.Sleep(time.Millisecond) // the job's work
			mu.Lock()
			ran[at.UTC()] = append(ran[at.UTC()], i)
			mu.Unlock()
		}, cron.WithOverlap(cron.Allow))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for range steps {
				clk.Advance(time.Second)
			}
			if err := s.Stop(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// Every second some clock passed: from the one furthest behind's
	// first to the one furthest ahead's last.
	first := start.Add(-2 * time.Second).Truncate(time.Second).Add(time.Second)
	last := start.Add(1500*time.Millisecond + steps*time.Second).Truncate(time.Second)
	perReplica := make([]int, len(skews))
	want := 0
	for at := first; !at.After(last); at = at.Add(time.Second) {
		want++
		if n := len(ran[at]); n != 1 {
			t.Errorf("%v ran %d times", at, n)
		}
	}
	for _, rs := range ran {
		for _, r := range rs {
			perReplica[r]++
		}
	}
	if len(ran) != want {
		t.Errorf("%d instants ran, want %d", len(ran), want)
	}
	t.Logf("%d instants, each once; runs per replica %v", want, perReplica)
}
