package cron_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
)

// panicRecorder is a panic handler that records "job: value" for each
// panic it gets, safe for concurrent use.
type panicRecorder struct {
	mu     sync.Mutex
	panics []string
}

// option returns the scheduler option that installs r.
func (r *panicRecorder) option() cron.Option {
	return cron.WithPanicHandler(func(job string, v any) {
		r.mu.Lock()
		r.panics = append(r.panics, fmt.Sprint(job, ": ", v))
		r.mu.Unlock()
	})
}

// take returns what r has recorded and forgets it.
func (r *panicRecorder) take() (panics []string) {
	r.mu.Lock()
	panics, r.panics = r.panics, nil
	r.mu.Unlock()
	return panics
}

// A job that panics is reported and goes on running, and so do the others,
// inline and on goroutines alike.
func TestPanic(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprint("inline=", inline), func(t *testing.T) {
			rec := &panicRecorder{}
			handler := rec.option()
			newF := newGoroutineFixture
			if inline {
				newF = newFixture
			}
			f := newF(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), handler)
			// Allow: on goroutines, a run may not have returned when
			// the next falls due.
			allow := cron.WithOverlap(cron.Allow)
			boom, _ := f.s.Add("boom", "@every 1m", func(context.Context, time.Time) { panic("oops") }, allow)
			ok := f.add("ok", "@every 1m", allow)
			for range 3 {
				f.clk.Advance(time.Minute)
			}
			if err := f.s.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := len(ok.take()); n != 3 {
				t.Fatalf("ok ran %d times", n)
			}
			if st := boom.Stats(); st.Runs != 3 || st.Panics != 3 {
				t.Fatalf("boom stats %+v", st)
			}
			if panics := rec.take(); !slices.Equal(panics, []string{"boom: oops", "boom: oops", "boom: oops"}) {
				t.Fatalf("panics %v", panics)
			}
		})
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
