package cron_test

import (
	"context"
	"fmt"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
)

// newExample returns a virtual clock and a scheduler on it, runs inline,
// in UTC, with opts, and a func that stops them.
func newExample(start time.Time, opts ...cron.Option) (*clock.Virtual, *cron.Scheduler, func()) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	s := cron.New(append([]cron.Option{cron.WithWheel(w), cron.WithInline(), cron.WithLocation(time.UTC)}, opts...)...)
	return clk, s, func() { s.Stop(context.Background()); w.Close() }
}

// The laptop sleeps from 8:00 to 10:00 through the 9:00 run. On waking,
// the wall clock reads 10:00 but the timer, which counts on the monotonic
// clock, still waits its hour; the check of the wall clock, here every
// second, runs the missed run within a second of the resume.
func ExampleWithWallClockCheck() {
	clk, s, stop := newExample(time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC), cron.WithWallClockCheck(time.Second))
	defer stop()
	s.Add("standup", "0 9 * * *", func(_ context.Context, at time.Time) {
		fmt.Println("standup of", at.Format("15:04"), "ran at", clk.Now().Format("15:04:05"))
	})
	clk.Suspend(2 * time.Hour)
	clk.Advance(time.Second)
	// Output:
	// standup of 09:00 ran at 10:00:01
}

// Hourly billing makes up every hour a suspend missed; a reminder skips
// what is no longer worth doing.
func ExampleOnMissed() {
	clk, s, stop := newExample(time.Date(2026, 1, 5, 0, 30, 0, 0, time.UTC))
	defer stop()
	s.Add("bill", "0 * * * *", func(_ context.Context, at time.Time) {
		fmt.Println("bill the hour of", at.Format("15:04"))
	}, cron.OnMissed(cron.RunAll))
	s.Add("remind", "0 * * * *", func(_ context.Context, at time.Time) {
		fmt.Println("remind at", at.Format("15:04"))
	}, cron.OnMissed(cron.SkipMissed))
	clk.Suspend(3 * time.Hour) // wakes at 3:30
	clk.Advance(time.Minute)   // the wall-clock check
	j, _ := s.Job("remind")
	fmt.Println("reminders missed:", j.Stats().Missed)
	// Output:
	// bill the hour of 01:00
	// bill the hour of 02:00
	// bill the hour of 03:00
	// reminders missed: 3
}

// Many processes on the same schedule spread their calls over a minute.
// The run's at stays its scheduled time.
func ExampleWithJitter() {
	clk, s, stop := newExample(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	defer stop()
	s.Add("poll", "0 * * * *", func(_ context.Context, at time.Time) {
		late := clk.Now().Sub(at)
		fmt.Println("poll of", at.Format("15:04"), "within the minute:", late >= 0 && late < time.Minute)
	}, cron.WithJitter(time.Minute))
	clk.Advance(2*time.Hour + time.Minute)
	// Output:
	// poll of 01:00 within the minute: true
	// poll of 02:00 within the minute: true
}

// A one-time job, by spec or by At.
func ExampleAt() {
	clk, s, stop := newExample(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	defer stop()
	say := func(what string) cron.Func {
		return func(_ context.Context, at time.Time) { fmt.Println(what, at.Format("Jan 2 15:04 MST")) }
	}
	s.Add("launch", "@at 2026-01-06T09:00:00+01:00", say("launch"), cron.InZone("Europe/Berlin"))
	j, _ := s.AddSchedule("reminder", cron.At(time.Date(2026, 1, 5, 17, 0, 0, 0, time.UTC)), say("reminder"))
	clk.Advance(7 * 24 * time.Hour)
	fmt.Println("reminder's next run is zero:", j.Next().IsZero())
	// Output:
	// reminder Jan 5 17:00 UTC
	// launch Jan 6 09:00 CET
	// reminder's next run is zero: true
}

// A campaign that runs daily from the 10th to the 12th, and a job that
// ends after three runs.
func ExampleWithStopAt() {
	clk, s, stop := newExample(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	defer stop()
	day := func(d int) time.Time { return time.Date(2026, 1, d, 9, 0, 0, 0, time.UTC) }
	s.Add("campaign", "0 9 * * *", func(_ context.Context, at time.Time) {
		fmt.Println("campaign", at.Format("Jan 2"))
	}, cron.WithStartAt(day(10)), cron.WithStopAt(day(12)))
	s.Add("trial", "0 12 * * *", func(_ context.Context, at time.Time) {
		fmt.Println("trial", at.Format("Jan 2"))
	}, cron.WithLimitRuns(3))
	clk.Advance(31 * 24 * time.Hour)
	// Output:
	// trial Jan 5
	// trial Jan 6
	// trial Jan 7
	// campaign Jan 10
	// campaign Jan 11
	// campaign Jan 12
}

// A sync that takes 20 seconds runs a minute after the last one ended,
// not on the minute.
func ExampleWithIntervalFromCompletion() {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	clk, s, stop := newExample(start)
	defer stop()
	s.Add("sync", "@every 1m", func(_ context.Context, at time.Time) {
		fmt.Println("sync at", at.Sub(start))
		clk.Advance(20 * time.Second) // the run takes 20s
	}, cron.WithIntervalFromCompletion())
	clk.Advance(4 * time.Minute)
	// Output:
	// sync at 1m0s
	// sync at 2m20s
	// sync at 3m40s
}

// On the night New York's clocks skip 2:00 to 3:00, a 2:30 job runs at
// 3:00 by Vixie cron's rule, or not that night with SkipSkipped.
func ExampleOnSkippedTime() {
	ny, _ := time.LoadLocation("America/New_York")
	clk, s, stop := newExample(time.Date(2026, 3, 7, 12, 0, 0, 0, ny), cron.WithLocation(ny))
	defer stop()
	for name, rule := range map[string]cron.SkippedTime{"vixie": cron.RunAtChange, "skip": cron.SkipSkipped} {
		s.Add(name, "30 2 * * *", func(_ context.Context, at time.Time) {
			fmt.Println(name, at.Format("Jan 2 15:04 MST"))
		}, cron.OnSkippedTime(rule))
	}
	clk.Advance(48 * time.Hour)
	// Unordered output:
	// vixie Mar 8 03:00 EDT
	// vixie Mar 9 02:30 EDT
	// skip Mar 9 02:30 EDT
}

// At most one run of the scheduler's jobs at a time: of two jobs due at
// once, the second is dropped while the first runs (LimitWait would make
// it wait).
func ExampleWithConcurrencyLimit() {
	clk := clock.NewVirtual(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	// Runs on goroutines of their own, so that two could overlap.
	s := cron.New(cron.WithWheel(w), cron.WithConcurrencyLimit(1, cron.LimitSkip))
	started, release := make(chan bool), make(chan bool)
	job := func(context.Context, time.Time) {
		started <- true
		<-release
	}
	s.Add("export", "0 * * * *", job)
	s.Add("import", "0 * * * *", job)
	clk.Advance(time.Hour)
	<-started
	st := s.Stats()
	fmt.Println(st.Running, "running,", st.Limited, "dropped by the limit")
	close(release)
	s.Stop(context.Background())
	// Output:
	// 1 running, 1 dropped by the limit
}

// Run a job now, list its next runs, and change its schedule in place.
func ExampleScheduler_Update() {
	clk, s, stop := newExample(time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC))
	defer stop()
	j, _ := s.Add("report", "0 9 * * *", func(_ context.Context, at time.Time) {
		fmt.Println("report", at.Format("Jan 2 15:04"))
	})
	s.RunNow("report")
	for _, at := range j.NextRuns(2) {
		fmt.Println("next", at.Format("Jan 2 15:04"))
	}
	s.Update("report", "30 9 * * MON-FRI")
	fmt.Println("next", j.Next().Format("Jan 2 15:04"))
	clk.Advance(2 * time.Hour)
	// Output:
	// report Jan 5 08:00
	// next Jan 5 09:00
	// next Jan 6 09:00
	// next Jan 5 09:30
	// report Jan 5 09:30
}

// Hooks log every run, its duration and its error.
func ExampleWithHooks() {
	clk, s, stop := newExample(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), cron.WithHooks(cron.Hooks{
		After: func(job string, at time.Time, took time.Duration) {
			fmt.Println(job, at.Format("15:04"), "ok in", took)
		},
		AfterError: func(job string, at time.Time, took time.Duration, err error) {
			fmt.Println(job, at.Format("15:04"), "failed in", took, "with", err)
		},
	}))
	defer stop()
	fail := false
	s.Add("upload", "0 * * * *", cron.Returning(func(context.Context, time.Time) error {
		clk.Advance(3 * time.Second)
		if fail = !fail; fail {
			return fmt.Errorf("bucket full")
		}
		return nil
	}))
	clk.Advance(2 * time.Hour)
	fmt.Println(s.Stats().Errors, "error")
	// Output:
	// upload 01:00 failed in 3s with bucket full
	// upload 02:00 ok in 3s
	// 1 error
}
