package cron_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
)

// A year of "every Tuesday at 9:00" in Berlin, on a virtual clock: the
// clock stops at each run, and at each check of the wall clock, here one
// an hour, so the year takes milliseconds.
func Example() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	s := cron.New(cron.WithWheel(w), cron.WithInline(), cron.WithWallClockCheck(time.Hour))
	defer s.Stop(context.Background())

	var runs []time.Time
	s.Add("report", "0 9 * * TUE", func(_ context.Context, at time.Time) {
		runs = append(runs, at)
	}, cron.InZone("Europe/Berlin"))

	clk.AdvanceTo(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(len(runs), "runs")
	fmt.Println(runs[0])
	fmt.Println(runs[len(runs)-1])
	// Output:
	// 52 runs
	// 2026-01-06 09:00:00 +0100 CET
	// 2026-12-29 09:00:00 +0100 CET
}

// The 12th of each month at 9:00.
func ExampleScheduler_Add() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	s := cron.New(cron.WithWheel(w), cron.WithInline(), cron.WithLocation(time.UTC))
	defer s.Stop(context.Background())

	j, err := s.Add("invoices", "0 9 12 * *", func(_ context.Context, at time.Time) {
		fmt.Println("billing", at.Format("Jan 2 15:04"))
	})
	if err != nil {
		panic(err)
	}
	clk.AdvanceTo(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println("next", j.Next().Format("Jan 2 15:04"))

	_, err = s.Add("typo", "0 9 12 * * * *", func(context.Context, time.Time) {})
	fmt.Println(err)
	// Output:
	// billing Jan 12 09:00
	// billing Feb 12 09:00
	// billing Mar 12 09:00
	// next Apr 12 09:00
	// cron: invalid spec "0 9 12 * * * *": expected 5 to 6 fields, found 7: [0 9 12 * * * *] (job "typo")
}

// A job at 2:30 in New York runs once on the night the clocks skip from
// 2:00 to 3:00, at 3:00, and once, not twice, on the night 1:30 repeats.
func ExampleParse() {
	ny, _ := time.LoadLocation("America/New_York")
	show := func(spec string, from time.Time) {
		sched, err := cron.Parse(spec, ny)
		if err != nil {
			panic(err)
		}
		at := from
		for range 3 {
			at = sched.Next(at)
			fmt.Println(spec, "→", at.Format("Jan 2 15:04 MST"))
		}
	}
	show("30 2 * * *", time.Date(2026, 3, 7, 0, 0, 0, 0, ny))
	show("30 1 * * *", time.Date(2026, 10, 31, 0, 0, 0, 0, ny))
	// Output:
	// 30 2 * * * → Mar 7 02:30 EST
	// 30 2 * * * → Mar 8 03:00 EDT
	// 30 2 * * * → Mar 9 02:30 EDT
	// 30 1 * * * → Oct 31 01:30 EDT
	// 30 1 * * * → Nov 1 01:30 EDT
	// 30 1 * * * → Nov 2 01:30 EST
}

// "@every" takes any positive duration, sub-second ones too: a job runs
// every d from when it was added, each run at the first tick of the wheel
// at or after its instant. A duration that is not positive is an error.
func ExampleParse_every() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	s := cron.New(cron.WithWheel(w), cron.WithInline())
	defer s.Stop(context.Background())

	s.Add("poll", "@every 1500ms", func(_ context.Context, at time.Time) {
		fmt.Println("poll at", at.Sub(start))
	})
	clk.Advance(5 * time.Second)

	_, err := s.Add("never", "@every 0s", func(context.Context, time.Time) {})
	fmt.Println(err)
	// Output:
	// poll at 1.5s
	// poll at 3s
	// poll at 4.5s
	// cron: invalid spec "@every 0s": the duration must be positive (job "never")
}

// A job may stop its own scheduler. Stop called from a run does not wait
// for the runs, the caller's among them: it returns at once with an error
// wrapping ErrInRun. A Stop from outside waits for them.
func ExampleScheduler_Stop() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	s := cron.New(cron.WithWheel(w))
	done := make(chan struct{})
	s.Add("last", "@every 1m", func(ctx context.Context, at time.Time) {
		defer close(done)
		err := s.Stop(context.Background())
		fmt.Println(errors.Is(err, cron.ErrInRun), err)
		fmt.Println("run's context:", ctx.Err())
	})
	clk.Advance(time.Hour) // one run: the first stops the scheduler
	<-done
	fmt.Println("from outside:", s.Stop(context.Background()), s.Stats().Runs, "run")
	// Output:
	// true cron: Stop called from a run, which it cannot wait for: 1 runs still going
	// run's context: context canceled
	// from outside: <nil> 1 run
}

// A snapshot taken at shutdown lets the restarted process run what fell
// due while it was down.
func ExampleScheduler_Snapshot() {
	start := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	old := cron.New(cron.WithWheel(timewheel.New(timewheel.WithClock(clock.NewVirtual(start)))), cron.WithLocation(time.UTC))
	nop := func(context.Context, time.Time) {}
	old.Add("backup", "0 3 * * *", nop)
	var file bytes.Buffer
	if err := old.Snapshot(&file); err != nil {
		panic(err)
	}
	old.Stop(context.Background())

	// Restarted a day later, after the 3:00 backup should have run.
	clk := clock.NewVirtual(start.Add(24 * time.Hour))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	s := cron.New(cron.WithWheel(w), cron.WithInline(), cron.WithLocation(time.UTC))
	defer s.Stop(context.Background())
	s.Add("backup", "0 3 * * *", func(_ context.Context, at time.Time) {
		fmt.Println("backup for", at.Format("Jan 2 15:04"), "ran at", clk.Now().Format("Jan 2 15:04"))
	})
	if err := s.Restore(&file); err != nil {
		panic(err)
	}
	clk.Advance(24 * time.Hour)
	// Output:
	// backup for Jan 6 03:00 ran at Jan 6 12:00
	// backup for Jan 7 03:00 ran at Jan 7 03:00
}

// Two replicas of a service share a Claimer, so each run of their jobs
// happens once, on the replica that claims it first. Here the claimer is
// memClaims, a set of claimed runs under a lock (claim_test.go); across
// processes, the module cron/redisclaim claims on Redis.
func ExampleWithClaimer() {
	claims := newMemClaims()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	replica := func(name string) (*clock.Virtual, *cron.Scheduler) {
		clk := clock.NewVirtual(start)
		w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
		s := cron.New(cron.WithWheel(w), cron.WithInline(), cron.WithLocation(time.UTC), cron.WithClaimer(claims))
		s.Add("report", "0 9 * * *", func(_ context.Context, at time.Time) {
			fmt.Println(name, "ran the report of", at.Format("Jan 2 15:04"))
		})
		return clk, s
	}
	aClk, a := replica("a")
	bClk, b := replica("b")
	defer a.Stop(context.Background())
	defer b.Stop(context.Background())

	nine := func(day int) time.Time { return time.Date(2026, 1, day, 9, 0, 0, 0, time.UTC) }
	aClk.AdvanceTo(nine(1)) // a's clock reaches 9:00 first on the 1st,
	bClk.AdvanceTo(nine(1))
	bClk.AdvanceTo(nine(2)) // b's on the 2nd
	aClk.AdvanceTo(nine(2))
	for name, s := range map[string]*cron.Scheduler{"a": a, "b": b} {
		st := s.Stats()
		fmt.Printf("%s: %d run, %d claimed by the other\n", name, st.Runs, st.ClaimsLost)
	}
	// Unordered output:
	// a ran the report of Jan 1 09:00
	// b ran the report of Jan 2 09:00
	// a: 1 run, 1 claimed by the other
	// b: 1 run, 1 claimed by the other
}
