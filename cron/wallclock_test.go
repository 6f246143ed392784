package cron_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
)

// lateRecorder records each run's instant and the wall clock when it ran.
type lateRecorder struct {
	mu  sync.Mutex
	clk *clock.Virtual
	at  []time.Time
	ran []time.Time
}

func (r *lateRecorder) run(_ context.Context, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at = append(r.at, at)
	r.ran = append(r.ran, r.clk.Now())
}

func (r *lateRecorder) take() (at, ran []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ran = r.at, r.ran
	r.at, r.ran = nil, nil
	return at, ran
}

func (f *fixture) addLate(name, spec string, opts ...cron.JobOption) *lateRecorder {
	f.t.Helper()
	r := &lateRecorder{clk: f.clk}
	if _, err := f.s.Add(name, spec, r.run, opts...); err != nil {
		f.t.Fatal(err)
	}
	return r
}

// jumps are the ways the wall clock moves ahead of the monotonic clock.
var jumps = []struct {
	name string
	jump func(*clock.Virtual, time.Duration)
}{
	{"forward step", (*clock.Virtual).StepWall},
	{"suspend", (*clock.Virtual).Suspend},
}

// TestWallClockJumpForward: after a forward step of the wall clock or a
// resume from suspend, a job whose time the jump passed runs at the next
// wall-clock check, once, with its own time as at, and its next run is
// on time. A job's timer counts on the monotonic clock, which neither
// moves: without the check, the 9:00 run came at 11:00, as late as the
// jump.
func TestWallClockJumpForward(t *testing.T) {
	for _, j := range jumps {
		for _, check := range []time.Duration{cron.DefaultWallClockCheck, time.Second} {
			t.Run(fmt.Sprint(j.name, " check ", check), func(t *testing.T) {
				eight := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
				f := newFixture(t, eight, cron.WithWallClockCheck(check))
				r := f.addLate("daily", "0 9 * * *")
				j.jump(f.clk, 2*time.Hour) // 10:00 on the wall
				f.clk.Advance(check)
				at, ran := r.take()
				wantTimes(t, "after the jump", at, []time.Time{eight.Add(time.Hour)})
				if late := ran[0].Sub(eight.Add(2 * time.Hour)); late > check {
					t.Fatalf("ran %v after the jump, want at most the check's %v", late, check)
				}
				if check < time.Minute {
					return // a day of checks a second: 86,400 wakeups
				}
				f.clk.AdvanceTo(eight.Add(25 * time.Hour))
				at, ran = r.take()
				wantTimes(t, "the day after", at, []time.Time{eight.Add(25 * time.Hour)})
				wantTimes(t, "the day after, ran", ran, at)
			})
		}
	}
}

// TestWallClockCheckOff: WithWallClockCheck(0) leaves a job's timer as
// set: a forward step makes its run as late as the step.
func TestWallClockCheckOff(t *testing.T) {
	eight := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	f := newFixture(t, eight, cron.WithWallClockCheck(0))
	r := f.addLate("daily", "0 9 * * *")
	if n := f.w.Len(); n != 1 {
		t.Fatalf("%d wheel timers, want the job's alone", n)
	}
	f.clk.StepWall(2 * time.Hour)
	f.clk.Advance(59 * time.Minute)
	if at, _ := r.take(); len(at) != 0 {
		t.Fatalf("ran %v with the check off", at)
	}
	f.clk.Advance(time.Minute)
	at, ran := r.take()
	wantTimes(t, "with the check off", at, []time.Time{eight.Add(time.Hour)})
	wantTimes(t, "with the check off, ran", ran, []time.Time{eight.Add(3 * time.Hour)})
}

// TestWallClockStepBackward: after a backward step, no run is early and
// none runs twice: a run already made does not come again when the wall
// clock reads its time again, and the next runs come at their times.
func TestWallClockStepBackward(t *testing.T) {
	start := time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)
	f := newFixture(t, start)
	hourly := f.addLate("hourly", "0 * * * *")
	fast := f.addLate("fast", "*/10 * * * *")
	f.clk.AdvanceTo(start.Add(45 * time.Minute)) // 9:15
	hourly.take()
	fast.take()
	f.clk.StepWall(-time.Hour) // 8:15 again
	f.clk.AdvanceTo(start.Add(90 * time.Minute))
	at, ran := hourly.take()
	wantTimes(t, "hourly", at, []time.Time{start.Add(90 * time.Minute)})
	wantTimes(t, "hourly, ran", ran, at)
	at, ran = fast.take()
	var want []time.Time
	for m := 20; m <= 60; m += 10 { // 9:20 to 10:00, after the 9:10 before the step
		want = append(want, start.Add(time.Duration(30+m)*time.Minute))
	}
	wantTimes(t, "every 10 minutes", at, want)
	wantTimes(t, "every 10 minutes, ran", ran, at)
}

// TestWallClockCheckIdle: a scheduler whose jobs are an hour away wakes
// at most once a minute for the check, and not at all once it has no
// jobs.
func TestWallClockCheckIdle(t *testing.T) {
	start := time.Date(2026, 1, 5, 8, 0, 1, 0, time.UTC)
	f := newFixture(t, start)
	for i := range 10 {
		f.add(fmt.Sprint("job", i), "0 * * * *")
	}
	if n := f.clk.Advance(59 * time.Minute); n > 59 {
		t.Fatalf("%d wakeups in 59 minutes with jobs an hour away, want at most 59", n)
	}
	for _, j := range f.s.Jobs() {
		f.s.Remove(j.Name())
	}
	f.clk.Advance(time.Hour) // the last check finds no job
	if n := f.clk.Advance(time.Hour); n != 0 || f.w.Len() != 0 {
		t.Fatalf("%d wakeups, %d wheel timers in an hour without jobs, want none", n, f.w.Len())
	}
	f.add("again", "0 * * * *")
	if f.w.Len() != 2 {
		t.Fatalf("%d wheel timers for a job added again, want its own and the check", f.w.Len())
	}
}

// TestMissedPolicies: runs that a suspend made the process miss, more
// than the grace period late, are run once, skipped or all run, as the
// job's OnMissed policy says; a run within the grace period is on time.
func TestMissedPolicies(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 30, 0, time.UTC)
	hour := func(h int) time.Time { return time.Date(2026, 1, 5, h, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name    string
		opts    []cron.JobOption
		suspend time.Duration
		want    []time.Time
		missed  int
	}{
		{"run once", nil, 5 * time.Hour, []time.Time{hour(3)}, 4},
		{"skip missed", []cron.JobOption{cron.OnMissed(cron.SkipMissed)}, 5 * time.Hour, nil, 5},
		{"run all", []cron.JobOption{cron.OnMissed(cron.RunAll)}, 5 * time.Hour, []time.Time{hour(3), hour(4), hour(5), hour(6), hour(7)}, 0},
		{"skip, within grace", []cron.JobOption{cron.OnMissed(cron.SkipMissed), cron.WithGrace(2 * time.Hour)}, time.Hour, []time.Time{hour(3)}, 0},
		{"skip, past grace", []cron.JobOption{cron.OnMissed(cron.SkipMissed), cron.WithGrace(20 * time.Minute)}, time.Hour, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, start)
			r := f.addLate("hourly", "0 * * * *", tc.opts...)
			f.clk.AdvanceTo(hour(2).Add(30 * time.Minute))
			r.take()
			f.clk.Suspend(tc.suspend) // wakes at 3:30 or 7:30
			f.clk.Advance(cron.DefaultWallClockCheck)
			at, _ := r.take()
			wantTimes(t, "after the resume", at, tc.want)
			j, _ := f.s.Job("hourly")
			if st := j.Stats(); st.Missed != tc.missed {
				t.Fatalf("Stats.Missed = %d, want %d", st.Missed, tc.missed)
			}
			next := hour(3).Add(tc.suspend)
			f.clk.AdvanceTo(next)
			at, ran := r.take()
			wantTimes(t, "next", at, []time.Time{next})
			wantTimes(t, "next, ran", ran, at)
		})
	}
}

// TestMissedRunAllBounded: RunAll makes up at most MaxCatchUp runs, the
// oldest, in order, and counts the others it looked at as missed.
func TestMissedRunAllBounded(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 30, 0, time.UTC)
	f := newFixture(t, start)
	r := f.addLate("minutely", "* * * * *", cron.OnMissed(cron.RunAll))
	f.clk.Suspend(10 * time.Hour)
	f.clk.Advance(cron.DefaultWallClockCheck)
	at, _ := r.take()
	if len(at) != cron.MaxCatchUp || !at[0].Equal(start.Add(30*time.Second)) {
		t.Fatalf("%d runs made up from %v, want %d from the first missed", len(at), at[0], cron.MaxCatchUp)
	}
	for i := 1; i < len(at); i++ {
		if at[i].Sub(at[i-1]) != time.Minute {
			t.Fatalf("made-up runs %v then %v, want a minute apart, in order", at[i-1], at[i])
		}
	}
}

// TestRestoreMissedPolicy: Restore applies the job's OnMissed policy to
// the runs that fell due while the process was down.
func TestRestoreMissedPolicy(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 30, 0, 0, time.UTC)
	hour := func(h int) time.Time { return time.Date(2026, 1, 5, h, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		policy cron.Missed
		want   []time.Time
	}{
		{cron.RunOnce, []time.Time{hour(1)}},
		{cron.SkipMissed, nil},
		{cron.RunAll, []time.Time{hour(1), hour(2), hour(3)}},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			old := newFixture(t, start)
			old.add("hourly", "0 * * * *")
			var buf bytes.Buffer
			if err := old.s.Snapshot(&buf); err != nil {
				t.Fatal(err)
			}
			f := newFixture(t, hour(3).Add(30*time.Minute)) // down from 0:30 to 3:30
			r := f.addLate("hourly", "0 * * * *", cron.OnMissed(tc.policy))
			if err := f.s.Restore(&buf); err != nil {
				t.Fatal(err)
			}
			f.clk.Advance(0)
			at, _ := r.take()
			wantTimes(t, "caught up", at, tc.want)
			f.clk.AdvanceTo(hour(4))
			at, _ = r.take()
			wantTimes(t, "next", at, []time.Time{hour(4)})
		})
	}
}
