package claimtest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/cron/claimtest"
)

// memClaimer is a Claimer on a map, the smallest store that passes the
// suite: the first Claim of a run wins it.
type memClaimer struct {
	mu   sync.Mutex
	runs map[string]bool
}

func (c *memClaimer) Claim(_ context.Context, job string, at time.Time) (bool, error) {
	key := job + "@" + at.UTC().Format(time.RFC3339Nano)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs[key] {
		return false, nil
	}
	c.runs[key] = true
	return true, nil
}

// A Claimer's own test runs the suite with a fresh store for each case.
// (An Example cannot make a *testing.T: this one only shows the call,
// which belongs in a TestXxx function of the Claimer's package.)
func ExampleRun() {
	_ = func(t *testing.T) {
		claimtest.Run(t, func(t *testing.T) cron.Claimer {
			return &memClaimer{runs: map[string]bool{}}
		})
	}
}

// A test of one's own: three replicas share the claimer for a day of a
// job every minute, and every minute runs once in total.
func ExampleNew() {
	_ = func(t *testing.T) {
		start := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
		sim := claimtest.New(t, &memClaimer{runs: map[string]bool{}}, start, claimtest.Config{})
		sim.Add("tick", "* * * * *")
		end := start.Add(24 * time.Hour)
		sim.RunUntil(end)
		var want []time.Time
		for at := start.Add(time.Minute); !at.After(end); at = at.Add(time.Minute) {
			want = append(want, at)
		}
		if tl := sim.Tally("tick", want); !tl.Exact() {
			t.Errorf("tick: %v", tl)
		}
	}
}
