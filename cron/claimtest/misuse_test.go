package claimtest_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/cron/claimtest"
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

// misuse is a mistake a user can make with the package, and the panic it
// must raise ("" for none: it works).
type misuse struct {
	name  string
	call  func(t *testing.T)
	panic string
}

func checkMisuse(t *testing.T, m misuse) {
	t.Helper()
	p := func() (p any) {
		defer func() { p = recover() }()
		m.call(t)
		return nil
	}()
	switch {
	case m.panic == "" && p != nil:
		t.Errorf("%s: panic %q, want none", m.name, fmt.Sprint(p))
	case m.panic != "" && fmt.Sprint(p) != m.panic:
		t.Errorf("%s: panic %q, want %q", m.name, fmt.Sprint(p), m.panic)
	}
}

func TestMisuse(t *testing.T) {
	sim := func(t *testing.T, cfg claimtest.Config) *claimtest.Sim {
		return claimtest.New(t, newMemClaims(), start, cfg)
	}
	for _, m := range []misuse{
		{name: "zero Config", call: func(t *testing.T) {
			s := sim(t, claimtest.Config{})
			s.Add("job", "* * * * *")
			s.RunUntil(start.Add(time.Hour))
			if tl := s.Tally("job", nil); tl.Stray != 60 {
				t.Errorf("zero Config: %s", tl)
			}
		}},
		{name: "negative Replicas", panic: "claimtest: New called with Config.Replicas -1; want 1 or more, or 0 for 3",
			call: func(t *testing.T) { sim(t, claimtest.Config{Replicas: -1}) }},
		{name: "negative MaxSkew", panic: "claimtest: New called with Config.MaxSkew -1s; want 0 or more (0 for 4s)",
			call: func(t *testing.T) { sim(t, claimtest.Config{MaxSkew: -time.Second}) }},
		{name: "huge MaxSkew", panic: "claimtest: New called with Config.MaxSkew 2562047h47m16.854775807s; want at most 1281023h53m38.427387903s",
			call: func(t *testing.T) { sim(t, claimtest.Config{MaxSkew: math.MaxInt64}) }},
		{name: "largest MaxSkew", call: func(t *testing.T) { sim(t, claimtest.Config{MaxSkew: math.MaxInt64 / 2}) }},
		{name: "negative SkewPeriod", panic: "claimtest: New called with Config.SkewPeriod -1m0s; want more than 0 (0 for 10m)",
			call: func(t *testing.T) { sim(t, claimtest.Config{SkewPeriod: -time.Minute}) }},
		{name: "nil testing.TB", panic: "claimtest: New called with a nil testing.TB",
			call: func(t *testing.T) { claimtest.New(nil, newMemClaims(), start, claimtest.Config{}) }},
		{name: "nil Claimer", panic: "claimtest: New called with a nil cron.Claimer",
			call: func(t *testing.T) { claimtest.New(t, nil, start, claimtest.Config{}) }},
		{name: "Run(nil)", panic: "claimtest: Run called with a nil newClaimer",
			call: func(t *testing.T) { claimtest.Run(t, nil) }},
		{name: "Scheduler out of range", panic: "claimtest: Scheduler(3) of a Sim of 3 replicas",
			call: func(t *testing.T) { sim(t, claimtest.Config{}).Scheduler(3) }},
		{name: "Wheel out of range", panic: "claimtest: Wheel(-1) of a Sim of 3 replicas",
			call: func(t *testing.T) { sim(t, claimtest.Config{}).Wheel(-1) }},
		{name: "RunUntil the past", call: func(t *testing.T) {
			s := sim(t, claimtest.Config{})
			s.RunUntil(start.Add(-time.Hour))
			if !s.Now().Equal(start) {
				t.Errorf("RunUntil the past moved the true time to %v", s.Now())
			}
		}},
		{name: "Restart with negative down time", panic: "claimtest: Restart called with negative down time -1m0s",
			call: func(t *testing.T) { sim(t, claimtest.Config{}).Restart(-time.Minute) }},
		{name: "RunUntil from OnRun", panic: "claimtest: RunUntil called from OnRun; call it after RunUntil returns",
			call: func(t *testing.T) {
				var s *claimtest.Sim
				s = sim(t, claimtest.Config{OnRun: func(int, string, time.Time) { s.RunUntil(start.Add(time.Hour)) }})
				s.Add("job", "* * * * *")
				s.RunUntil(start.Add(time.Minute))
			}},
		{name: "Restart from OnRun", panic: "claimtest: Restart called from OnRun; call it after RunUntil returns",
			call: func(t *testing.T) {
				var s *claimtest.Sim
				s = sim(t, claimtest.Config{OnRun: func(int, string, time.Time) { s.Restart(time.Minute) }})
				s.Add("job", "* * * * *")
				s.RunUntil(start.Add(time.Minute))
			}},
		{name: "Add from OnRun", panic: "claimtest: Add called from OnRun; call it after RunUntil returns",
			call: func(t *testing.T) {
				var s *claimtest.Sim
				s = sim(t, claimtest.Config{OnRun: func(int, string, time.Time) { s.Add("other", "* * * * *") }})
				s.Add("job", "* * * * *")
				s.RunUntil(start.Add(time.Minute))
			}},
		{name: "Stop, Runs and Tally from OnRun", call: func(t *testing.T) {
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
		t.Run(m.name, func(t *testing.T) { checkMisuse(t, m) })
	}
}

// A zero Sim has no replicas: Now, Runs and Tally work on it, the rest
// panics, naming the method.
func TestMisuseZeroSim(t *testing.T) {
	for _, m := range []misuse{
		{name: "Now Runs Tally", call: func(t *testing.T) {
			var s claimtest.Sim
			if !s.Now().IsZero() || len(s.Runs("job")) != 0 || s.Tally("job", nil).Instants != 0 {
				t.Error("a zero Sim has runs")
			}
		}},
		{name: "Add", panic: "claimtest: Add called on a zero Sim; make one with New",
			call: func(t *testing.T) { new(claimtest.Sim).Add("job", "* * * * *") }},
		{name: "RunUntil", panic: "claimtest: RunUntil called on a zero Sim; make one with New",
			call: func(t *testing.T) { new(claimtest.Sim).RunUntil(start) }},
		{name: "Restart", panic: "claimtest: Restart called on a zero Sim; make one with New",
			call: func(t *testing.T) { new(claimtest.Sim).Restart(time.Minute) }},
		{name: "Scheduler", panic: "claimtest: Scheduler(0) of a Sim of 0 replicas",
			call: func(t *testing.T) { new(claimtest.Sim).Scheduler(0) }},
		{name: "Wheel", panic: "claimtest: Wheel(0) of a Sim of 0 replicas",
			call: func(t *testing.T) { new(claimtest.Sim).Wheel(0) }},
	} {
		t.Run(m.name, func(t *testing.T) { checkMisuse(t, m) })
	}
}

// A nil *Sim panics, naming the method. It used to die with a nil
// dereference.
func TestMisuseNilSim(t *testing.T) {
	var s *claimtest.Sim
	for _, m := range []misuse{
		{name: "Now", panic: "claimtest: Now called on a nil *Sim", call: func(t *testing.T) { s.Now() }},
		{name: "Runs", panic: "claimtest: Runs called on a nil *Sim", call: func(t *testing.T) { s.Runs("job") }},
		{name: "Tally", panic: "claimtest: Tally called on a nil *Sim", call: func(t *testing.T) { s.Tally("job", nil) }},
		{name: "Add", panic: "claimtest: Add called on a nil *Sim", call: func(t *testing.T) { s.Add("job", "* * * * *") }},
		{name: "RunUntil", panic: "claimtest: RunUntil called on a nil *Sim", call: func(t *testing.T) { s.RunUntil(start) }},
		{name: "Restart", panic: "claimtest: Restart called on a nil *Sim", call: func(t *testing.T) { s.Restart(time.Minute) }},
		{name: "Scheduler", panic: "claimtest: Scheduler called on a nil *Sim", call: func(t *testing.T) { s.Scheduler(0) }},
		{name: "Wheel", panic: "claimtest: Wheel called on a nil *Sim", call: func(t *testing.T) { s.Wheel(0) }},
	} {
		t.Run(m.name, func(t *testing.T) { checkMisuse(t, m) })
	}
}
