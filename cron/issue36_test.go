package cron_test

import (
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
)

// Combinations a user makes, each against what the options' docs say.

// WithIntervalFromCompletion and WithLimitRuns together: two runs, then
// none. limitLocked cut the made-up runs at a negative length and the
// wheel's executor died of it.
func TestFromCompletionWithLimit(t *testing.T) {
	f := newFixture(t, jan5)
	r := f.add("j", "@every 50ms", cron.WithIntervalFromCompletion(), cron.WithLimitRuns(2))
	f.clk.Advance(time.Second)
	if n := len(r.take()); n != 2 {
		t.Fatalf("%d runs, want 2", n)
	}
	j, _ := f.s.Job("j")
	if next := j.Next(); !next.IsZero() {
		t.Fatalf("Next %v after the last run, want zero", next)
	}
}

// WithIntervalFromCompletion and WithStopAt: no run after the stop.
func TestFromCompletionWithStop(t *testing.T) {
	f := newFixture(t, jan5)
	stop := jan5.Add(120 * time.Millisecond)
	r := f.add("j", "@every 50ms", cron.WithIntervalFromCompletion(), cron.WithStopAt(stop))
	f.clk.Advance(600 * time.Millisecond)
	at := r.take()
	if len(at) != 2 {
		t.Fatalf("%d runs (%v), want 2, at 50ms and 100ms", len(at), at)
	}
	for _, a := range at {
		if a.After(stop) {
			t.Fatalf("run at %v, after the stop %v", a, stop)
		}
	}
}

// NextRuns of a job counted from completion stops at the stop date.
func TestNextRunsFromCompletionStop(t *testing.T) {
	f := newFixture(t, jan5)
	stop := jan5.Add(35 * time.Minute)
	f.add("j", "@every 10m", cron.WithIntervalFromCompletion(), cron.WithStopAt(stop))
	j, _ := f.s.Job("j")
	runs := j.NextRuns(5)
	if len(runs) != 3 {
		t.Fatalf("NextRuns(5) = %v, want the 3 before the stop %v", runs, stop)
	}
}

// RunAll after a suspend of 600 periods: MaxCatchUp made up, the rest
// counted in Stats.Missed.
func TestRunAllCountsPastMaxCatchUp(t *testing.T) {
	f := newFixture(t, jan5)
	r := f.addLate("j", "@every 1m", cron.OnMissed(cron.RunAll))
	f.clk.Suspend(10 * time.Hour)
	f.clk.Advance(time.Minute)
	at, _ := r.take()
	ran := len(at)
	j, _ := f.s.Job("j")
	st := j.Stats()
	if ran != cron.MaxCatchUp {
		t.Fatalf("%d runs made up, want MaxCatchUp (%d)", ran, cron.MaxCatchUp)
	}
	if due := 601; ran+st.Missed+st.Skipped != due {
		t.Fatalf("%d ran, %d missed, %d skipped: want the %d due accounted for", ran, st.Missed, st.Skipped, due)
	}
}

// A jitter longer than the period: every time that falls due is run,
// skipped or missed.
func TestJitterLongerThanPeriodCounts(t *testing.T) {
	f := newFixture(t, jan5)
	f.addLate("j", "@every 1m", cron.WithJitter(time.Hour))
	f.clk.Advance(10 * time.Hour)
	j, _ := f.s.Job("j")
	st := j.Stats()
	ran := st.Runs
	next := j.Next()
	due := int(next.Sub(jan5)/time.Minute) - 1 // the times before next
	if ran+st.Missed+st.Skipped != due {
		t.Fatalf("%d ran, %d missed, %d skipped, next %v: want the %d due before it accounted for", ran, st.Missed, st.Skipped, next, due)
	}
}
