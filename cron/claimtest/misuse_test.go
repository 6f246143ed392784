package claimtest_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/cron/claimtest"
	"github.com/timewheel/timewheel/internal/misusetest"
)

// memClaims is a Claimer in memory: the runs claimed so far.
type memClaims struct {
	mu      sync.Mutex
	claimed map[string]bool // guarded by mu
}

func (m *memClaims) Claim(_ context.Context, job string, at time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := job + " " + at.UTC().Format(time.RFC3339Nano)
	if m.claimed[key] {
		return false, nil
	}
	m.claimed[key] = true
	return true, nil
}

func newMemClaims() *memClaims { return &memClaims{claimed: map[string]bool{}} }

var start = time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)

func TestMisuse(t *testing.T) {
	sim := func(t *testing.T, cfg claimtest.Config) *claimtest.Sim {
		return claimtest.New(t, newMemClaims(), start, cfg)
	}
	for _, m := range []misusetest.Case{
		{Name: "zero Config", Do: func(t *testing.T) {
			s := sim(t, claimtest.Config{})
			s.Add("job", "* * * * *")
			s.RunUntil(start.Add(time.Hour))
			if tl := s.Tally("job", nil); tl.Stray != 60 {
				t.Errorf("zero Config: %s", tl)
			}
		}},
		{Name: "negative Replicas", Panic: "claimtest: New called with Config.Replicas -1; want 1 or more, or 0 for 3",
			Do: func(t *testing.T) { sim(t, claimtest.Config{Replicas: -1}) }},
		{Name: "negative MaxSkew", Panic: "claimtest: New called with Config.MaxSkew -1s; want 0 or more (0 for 4s)",
			Do: func(t *testing.T) { sim(t, claimtest.Config{MaxSkew: -time.Second}) }},
		{Name: "huge MaxSkew", Panic: "claimtest: New called with Config.MaxSkew 2562047h47m16.854775807s; want at most 1281023h53m38.427387903s",
			Do: func(t *testing.T) { sim(t, claimtest.Config{MaxSkew: math.MaxInt64}) }},
		{Name: "largest MaxSkew", Do: func(t *testing.T) { sim(t, claimtest.Config{MaxSkew: math.MaxInt64 / 2}) }},
		{Name: "negative SkewPeriod", Panic: "claimtest: New called with Config.SkewPeriod -1m0s; want more than 0 (0 for 10m)",
			Do: func(t *testing.T) { sim(t, claimtest.Config{SkewPeriod: -time.Minute}) }},
		{Name: "nil testing.TB", Panic: "claimtest: New called with a nil testing.TB",
			Do: func(t *testing.T) { claimtest.New(nil, newMemClaims(), start, claimtest.Config{}) }},
		{Name: "nil Claimer", Panic: "claimtest: New called with a nil cron.Claimer",
			Do: func(t *testing.T) { claimtest.New(t, nil, start, claimtest.Config{}) }},
		{Name: "Run(nil)", Panic: "claimtest: Run called with a nil newClaimer",
			Do: func(t *testing.T) { claimtest.Run(t, nil) }},
		{Name: "Scheduler out of range", Panic: "claimtest: Scheduler(3) of a Sim of 3 replicas",
			Do: func(t *testing.T) { sim(t, claimtest.Config{}).Scheduler(3) }},
		{Name: "Wheel out of range", Panic: "claimtest: Wheel(-1) of a Sim of 3 replicas",
			Do: func(t *testing.T) { sim(t, claimtest.Config{}).Wheel(-1) }},
		{Name: "RunUntil the past", Do: func(t *testing.T) {
			s := sim(t, claimtest.Config{})
			s.RunUntil(start.Add(-time.Hour))
			if !s.Now().Equal(start) {
				t.Errorf("RunUntil the past moved the true time to %v", s.Now())
			}
		}},
		{Name: "Restart with negative down time", Panic: "claimtest: Restart called with negative down time -1m0s",
			Do: func(t *testing.T) { sim(t, claimtest.Config{}).Restart(-time.Minute) }},
		{Name: "RunUntil from OnRun", Panic: "claimtest: RunUntil called from OnRun; call it after RunUntil returns",
			Do: func(t *testing.T) {
				var s *claimtest.Sim
				s = sim(t, claimtest.Config{OnRun: func(int, string, time.Time) { s.RunUntil(start.Add(time.Hour)) }})
				s.Add("job", "* * * * *")
				s.RunUntil(start.Add(time.Minute))
			}},
		{Name: "Restart from OnRun", Panic: "claimtest: Restart called from OnRun; call it after RunUntil returns",
			Do: func(t *testing.T) {
				var s *claimtest.Sim
				s = sim(t, claimtest.Config{OnRun: func(int, string, time.Time) { s.Restart(time.Minute) }})
				s.Add("job", "* * * * *")
				s.RunUntil(start.Add(time.Minute))
			}},
		{Name: "Add from OnRun", Panic: "claimtest: Add called from OnRun; call it after RunUntil returns",
			Do: func(t *testing.T) {
				var s *claimtest.Sim
				s = sim(t, claimtest.Config{OnRun: func(int, string, time.Time) { s.Add("other", "* * * * *") }})
				s.Add("job", "* * * * *")
				s.RunUntil(start.Add(time.Minute))
			}},
		{Name: "Stop, Runs and Tally from OnRun", Do: func(t *testing.T) {
			var s *claimtest.Sim
			var errs []error
			s = sim(t, claimtest.Config{OnRun: func(i int, job string, at time.Time) {
				errs = append(errs, s.Scheduler(i).Stop(context.Background()))
				s.Runs(job)
				s.Tally(job, nil)
			}})
			s.Add("job", "* * * * *")
			s.RunUntil(start.Add(time.Hour))
			// Each replica stops itself on its first run; the others go on.
			if len(errs) != 3 {
				t.Errorf("Stop from OnRun: %d errors, want one per replica", len(errs))
			}
			for _, err := range errs {
				if !errors.Is(err, cron.ErrInRun) || err.Error() != "cron: Stop called from a run, which it cannot wait for: 1 runs still going" {
					t.Errorf("Stop from OnRun: %v", err)
				}
			}
		}},
	} {
		t.Run(m.Name, func(t *testing.T) { misusetest.Check(t, m) })
	}
}

// A zero Sim has no replicas: Now, Runs and Tally work on it, the rest
// panics, naming the method.
func TestMisuseZeroSim(t *testing.T) {
	for _, m := range []misusetest.Case{
		{Name: "Now Runs Tally", Do: func(t *testing.T) {
			var s claimtest.Sim
			if !s.Now().IsZero() || len(s.Runs("job")) != 0 || s.Tally("job", nil).Instants != 0 {
				t.Error("a zero Sim has runs")
			}
		}},
		{Name: "Add", Panic: "claimtest: Add called on a zero Sim; make one with New",
			Do: func(t *testing.T) { new(claimtest.Sim).Add("job", "* * * * *") }},
		{Name: "RunUntil", Panic: "claimtest: RunUntil called on a zero Sim; make one with New",
			Do: func(t *testing.T) { new(claimtest.Sim).RunUntil(start) }},
		{Name: "Restart", Panic: "claimtest: Restart called on a zero Sim; make one with New",
			Do: func(t *testing.T) { new(claimtest.Sim).Restart(time.Minute) }},
		{Name: "Scheduler", Panic: "claimtest: Scheduler(0) of a Sim of 0 replicas",
			Do: func(t *testing.T) { new(claimtest.Sim).Scheduler(0) }},
		{Name: "Wheel", Panic: "claimtest: Wheel(0) of a Sim of 0 replicas",
			Do: func(t *testing.T) { new(claimtest.Sim).Wheel(0) }},
	} {
		t.Run(m.Name, func(t *testing.T) { misusetest.Check(t, m) })
	}
}

// A nil *Sim panics, naming the method. It used to die with a nil
// dereference.
func TestMisuseNilSim(t *testing.T) {
	var s *claimtest.Sim
	for _, m := range []misusetest.Case{
		{Name: "Now", Panic: "claimtest: Now called on a nil *Sim", Do: func(t *testing.T) { s.Now() }},
		{Name: "Runs", Panic: "claimtest: Runs called on a nil *Sim", Do: func(t *testing.T) { s.Runs("job") }},
		{Name: "Tally", Panic: "claimtest: Tally called on a nil *Sim", Do: func(t *testing.T) { s.Tally("job", nil) }},
		{Name: "Add", Panic: "claimtest: Add called on a nil *Sim", Do: func(t *testing.T) { s.Add("job", "* * * * *") }},
		{Name: "RunUntil", Panic: "claimtest: RunUntil called on a nil *Sim", Do: func(t *testing.T) { s.RunUntil(start) }},
		{Name: "Restart", Panic: "claimtest: Restart called on a nil *Sim", Do: func(t *testing.T) { s.Restart(time.Minute) }},
		{Name: "Scheduler", Panic: "claimtest: Scheduler called on a nil *Sim", Do: func(t *testing.T) { s.Scheduler(0) }},
		{Name: "Wheel", Panic: "claimtest: Wheel called on a nil *Sim", Do: func(t *testing.T) { s.Wheel(0) }},
	} {
		t.Run(m.Name, func(t *testing.T) { misusetest.Check(t, m) })
	}
}
