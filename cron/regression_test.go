package cron_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
)

// A job whose seconds, minutes or hours field starts with '*' runs on
// real time, as the package documentation and Vixie cron (MIN_STAR,
// HR_STAR: the field's first character) say, also when the field has a
// step, which robfig/cron's star bit does not record: "*/15 1 * * *" runs
// through both 1:00-1:59 of a fall-back night, "0 */2 * * *" has no run
// for the 2:00 that a spring-forward night skips, and "*/30 30 2 * * *"
// none for its 2:30, where a wall-clock job would run at the change.
func TestStepFieldRunsOnRealTime(t *testing.T) {
	ny := zone(t, "America/New_York")
	utc := func(s string) time.Time {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	// New York falls back at 2:00 EDT (06:00Z) to 1:00 EST on 2026-11-01:
	// 1:00-1:59 happens twice, 05:00Z-05:59Z and 06:00Z-06:59Z. It springs
	// forward at 2:00 EST (07:00Z) to 3:00 EDT on 2026-03-08.
	var fallBack []string
	for m := 0; m < 120; m += 15 {
		fallBack = append(fallBack, time.Date(2026, 11, 1, 5, m, 0, 0, time.UTC).Format(time.RFC3339))
	}
	for _, tc := range []struct {
		spec     string
		from, to string // UTC
		want     []string
	}{
		{"*/15 1 * * *", "2026-11-01T04:59:00Z", "2026-11-01T08:00:00Z", fallBack},
		{"0 */15 1 * * *", "2026-11-01T04:59:00Z", "2026-11-01T08:00:00Z", fallBack},
		{"0 */2 * * *", "2026-03-08T04:30:00Z", "2026-03-08T11:00:00Z",
			[]string{"2026-03-08T05:00:00Z", "2026-03-08T08:00:00Z", "2026-03-08T10:00:00Z"}},
		{"*/30 30 2 * * *", "2026-03-07T07:00:00Z", "2026-03-09T08:00:00Z",
			[]string{"2026-03-07T07:30:00Z", "2026-03-07T07:30:30Z", "2026-03-09T06:30:00Z", "2026-03-09T06:30:30Z"}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			f := newFixture(t, utc(tc.from))
			r := f.add("job", tc.spec, cron.InZone("America/New_York"))
			f.clk.AdvanceTo(utc(tc.to))
			var want []time.Time
			for _, s := range tc.want {
				want = append(want, utc(s).In(ny))
			}
			wantTimes(t, tc.spec, r.take(), want)
		})
	}
}

// Real-time schedules (robfig/cron's own Next) in zones whose clocks
// change at midnight or by half an hour: "0 * * * *" must run at every
// instant whose wall clock reads :00, once, in order, and never loop.
func TestRealTimeHourlyAcrossZones(t *testing.T) {
	for _, name := range []string{"America/Santiago", "America/Havana", "Australia/Lord_Howe", "Africa/Casablanca"} {
		t.Run(name, func(t *testing.T) {
			loc := zone(t, name)
			for _, spec := range []string{"0 * * * *", "*/30 * * * *"} {
				s, err := cron.Parse(spec, loc)
				if err != nil {
					t.Fatal(err)
				}
				step := time.Hour
				if spec[0] == '*' {
					step = 30 * time.Minute
				}
				from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Second)
				to := from.AddDate(1, 0, 0)
				// every instant of the period whose wall clock is on the step
				want := []time.Time{}
				// every zone here is offset from UTC by whole quarter hours
				for at := from.Truncate(15 * time.Minute).Add(15 * time.Minute); at.Before(to); at = at.Add(15 * time.Minute) {
					if l := at.In(loc); l.Second() == 0 && time.Duration(l.Minute())*time.Minute%step == 0 {
						want = append(want, at)
					}
				}
				i := 0
				prev := from
				for at := s.Next(from); at.Before(to); at = s.Next(at) {
					if !at.After(prev) {
						t.Fatalf("%q: Next(%v) = %v, not after it", spec, prev, at)
					}
					if i >= len(want) || !at.Equal(want[i]) {
						w := "none"
						if i < len(want) {
							w = want[i].In(loc).String()
						}
						t.Fatalf("%q: run %d after %v is %v, want %v", spec, i, prev.In(loc), at.In(loc), w)
					}
					i++
					prev = at
				}
				if i != len(want) {
					t.Fatalf("%q: %d runs, want %d", spec, i, len(want))
				}
			}
		})
	}
}

// Stop with a context that ends while a Queue job has runs queued: the
// queued runs are dropped, Stop returns the context's error, and a job
// added/removed while runs are going does not disturb the count.
func TestStopQueueAndRemoveWhileRunning(t *testing.T) {
	f := newGoroutineFixture(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	release := make(chan struct{})
	started := make(chan time.Time, 10)
	var mu sync.Mutex
	runs := 0
	slow := func(ctx context.Context, at time.Time) {
		started <- at
		<-release
		mu.Lock()
		runs++
		mu.Unlock()
	}
	if _, err := f.s.Add("q", "@every 1m", slow, cron.WithOverlap(cron.Queue)); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Minute)
	<-started
	f.clk.Advance(2 * time.Minute) // two runs queued
	// remove and re-add under the same name while its run is going
	if !f.s.Remove("q") {
		t.Fatal("Remove")
	}
	if _, err := f.s.Add("q", "@every 1m", slow, cron.WithOverlap(cron.Queue)); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Minute)
	<-started // the new job's first run, beside the old job's run
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.s.Stop(ctx) }()
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || err.Error() != "cron: Stop: 2 runs still going: context canceled" {
		t.Fatalf("Stop: %v", err)
	}
	close(release)
	if err := f.s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if runs != 2 {
		t.Fatalf("%d runs returned, want 2 (queued runs of a removed job must be dropped)", runs)
	}
	select {
	case at := <-started:
		t.Fatalf("a run for %v started after Stop", at)
	default:
	}
}

// With WithInline, a panic handler that re-panics ends the run with its
// panic, on the wheel's executor, but the run still counts as ended: under
// Skip the job's later runs go on, the run is counted in Stats, and Stop
// does not wait for it.
func TestInlinePanicHandlerPanic(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	s := cron.New(cron.WithWheel(w), cron.WithInline(), cron.WithPanicHandler(func(job string, v any) { panic(v) }))
	n := 0
	j, err := s.Add("flaky", "@every 1m", func(context.Context, time.Time) {
		n++
		if n == 1 {
			panic("first run fails")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if r := recover(); r != "first run fails" {
				t.Errorf("Advance: panic %v, want the handler's", r)
			}
		}()
		clk.Advance(time.Minute)
	}()
	clk.Advance(10 * time.Minute)
	if st := j.Stats(); n != 11 || st != (cron.Stats{Runs: 11, Panics: 1}) {
		t.Errorf("job ran %d times in 11 minutes, stats %+v", n, st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second) // deadlock watchdog
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Errorf("Stop with nothing running: %v", err)
	}
}

// A job that ends its goroutine (runtime.Goexit, as t.FailNow does) still
// ends its run: it is counted, and Stop does not wait for it.
func TestJobGoexit(t *testing.T) {
	// Not newGoroutineFixture, whose cleanup would wait on a wedged Stop.
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	s := cron.New(cron.WithWheel(w))
	j, err := s.Add("exits", "@every 1m", func(context.Context, time.Time) { runtime.Goexit() })
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // deadlock watchdog
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if st := j.Stats(); st != (cron.Stats{Runs: 1}) {
		t.Fatalf("stats %+v, want one run", st)
	}
}
