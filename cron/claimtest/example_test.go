package claimtest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/cron/claimtest"
)

// memClaimer is a Claimer on a sync.Map, the smallest store that passes
// the suite: the first Claim of a run wins it.
type memClaimer struct{ runs sync.Map }

func (c *memClaimer) Claim(_ context.Context, job string, at time.Time) (bool, error) {
	_, taken := c.runs.LoadOrStore(job+"@"+at.UTC().Format(time.RFC3339Nano), true)
	return !taken, nil
}

// A Claimer's own test runs the suite with a fresh store for each case.
// (An Example cannot make a *testing.T: this one only shows the call,
// which belongs in a TestXxx function of the Claimer's package.)
func ExampleRun() {
	_ = func(t *testing.T) {
		claimtest.Run(t, func(t *testing.T) cron.Claimer {
			return &memClaimer{}
		})
	}
}

// A test of one's own: three replicas share the claimer for a day of a
// job every minute, and every minute runs once in total.
func ExampleNew() {
	_ = func(t *testing.T) {
		start := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
		sim := claimtest.New(t, &memClaimer{}, start, claimtest.Config{})
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
