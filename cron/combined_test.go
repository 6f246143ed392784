package cron_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
)

// runLog records, per job, each run's instant and the wall clock when it
// started.
type runLog struct {
	mu   sync.Mutex
	clk  *clock.Virtual
	runs map[string][]time.Time
	t    *testing.T
}

func (l *runLog) job(name string) cron.Func {
	return func(_ context.Context, at time.Time) {
		now := l.clk.Now()
		runtime.Gosched() // a run that takes a little while
		l.mu.Lock()
		defer l.mu.Unlock()
		if now.Before(at) {
			l.t.Errorf("%s: run for %v started early, at %v", name, at, now)
		}
		l.runs[name] = append(l.runs[name], at)
	}
}

// TestCombinedOptionsRace: jobs with jitter, Queue, RunAll and a
// concurrency limit that waits, runs on goroutines of their own, the
// wall clock stepping forward and the machine suspending at random, and
// RunNow and Update from another goroutine: no run starts early, none
// runs twice, none is missing. Run under -race.
func TestCombinedOptionsRace(t *testing.T) {
	f := newGoroutineFixture(t, jan5, cron.WithConcurrencyLimit(2, cron.LimitWait))
	log := &runLog{clk: f.clk, runs: map[string][]time.Time{}, t: t}
	periods := []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 7 * time.Minute}
	for _, p := range periods {
		name := fmt.Sprint("every ", p)
		_, err := f.s.Add(name, fmt.Sprint("@every ", p), log.job(name),
			cron.WithJitter(10*time.Second), cron.WithOverlap(cron.Queue), cron.OnMissed(cron.RunAll))
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.s.Add("manual", "0 0 1 1 *", log.job("manual"), cron.WithOverlap(cron.Queue)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Add("updated", "* * * * *", log.job("updated")); err != nil {
		t.Fatal(err)
	}
	const manual = 20
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range manual {
			if err := f.s.RunNow("manual"); err != nil {
				t.Error(err)
			}
			spec := []string{"* * * * *", "*/2 * * * *"}[i%2]
			if _, err := f.s.Update("updated", spec, cron.WithJitter(time.Duration(i)*time.Second)); err != nil {
				t.Error(err)
			}
			runtime.Gosched()
		}
	}()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		switch rng.IntN(20) {
		case 0:
			f.clk.StepWall(time.Duration(rng.IntN(5)+1) * time.Minute)
		case 1:
			f.clk.Suspend(time.Duration(rng.IntN(5)+1) * time.Minute)
		default:
			f.clk.Advance(time.Duration(rng.IntN(30)) * time.Second)
		}
	}
	<-done
	f.clk.Advance(10 * time.Minute) // no more jumps: everything due runs
	end := f.clk.Now()
	for f.s.Stats().Running > 0 {
		runtime.Gosched()
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, p := range periods {
		name := fmt.Sprint("every ", p)
		seen := map[time.Time]bool{}
		for _, at := range log.runs[name] {
			if seen[at] || at.Sub(jan5)%p != 0 || at.After(end) {
				t.Fatalf("%s: run at %v twice, off the grid or after the end %v", name, at, end)
			}
			seen[at] = true
		}
		for at := jan5.Add(p); !at.After(end.Add(-time.Minute)); at = at.Add(p) {
			if !seen[at] {
				t.Fatalf("%s: run at %v missing (end %v)", name, at, end)
			}
		}
	}
	seen := map[time.Time]bool{}
	for _, at := range log.runs["updated"] {
		if seen[at] || at.Second() != 0 {
			t.Fatalf("updated: run at %v twice or off the minute", at)
		}
		seen[at] = true
	}
	if n := len(log.runs["manual"]); n != manual {
		t.Fatalf("%d runs of RunNow, want %d", n, manual)
	}
	for _, p := range append(periods, 0) {
		name := fmt.Sprint("every ", p)
		if p == 0 {
			name = "manual"
		}
		j, _ := f.s.Job(name)
		if st := j.Stats(); st.Skipped != 0 || st.Limited != 0 || st.Missed != 0 {
			t.Fatalf("%s: runs dropped: %+v", name, st)
		}
	}
}
