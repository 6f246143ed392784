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
