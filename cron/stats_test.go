package cron_test

import (
	"context"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
)

// TestSchedulerStats: the scheduler's totals after runs that panic, are
// skipped and are queued until they start late, and after a job with
// counts is removed.
func TestSchedulerStats(t *testing.T) {
	f := newGoroutineFixture(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		cron.WithPanicHandler(func(string, any) {}))
	booms := make(chan struct{}, 2)
	boom, _ := f.s.Add("boom", "@every 1m", func(context.Context, time.Time) {
		booms <- struct{}{}
		panic("oops")
	}, cron.WithOverlap(cron.Allow))
	skip, queue := newBlocker(), newBlocker()
	f.s.Add("skip", "@every 1m", skip.run)
	f.s.Add("queue", "@every 1m", queue.run, cron.WithOverlap(cron.Queue))
	if st := f.s.Stats(); st != (cron.SchedulerStats{Jobs: 3}) {
		t.Fatalf("stats %+v before any run", st)
	}
	f.clk.Advance(time.Minute)
	<-skip.started
	<-queue.started
	<-booms                    // started, on time, before the clock moves on
	f.clk.Advance(time.Minute) // skip skips, queue queues
	<-booms
	if st := f.s.Stats(); st.Skipped != 1 || st.Running < 2 || st.Late != 0 {
		t.Fatalf("stats %+v with two runs blocked", st) // boom's runs may be going, or not
	}
	f.clk.Advance(30 * time.Second)
	close(skip.release)
	close(queue.release) // the queued run starts now, 30 s late
	<-queue.started
	f.s.Remove("boom")
	if err := f.s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := cron.SchedulerStats{Stats: cron.Stats{Runs: 5, Panics: 2, Skipped: 1}, Jobs: 2, Late: 1}
	if st := f.s.Stats(); st != want || boom.Stats().Runs != 2 {
		t.Fatalf("stats %+v after Stop, want %+v", st, want)
	}
}
