package durable

import (
	"testing"
	"time"
)

// A run's ID names its schedule and instant, and parses back, whatever
// colons the name holds.
func TestRunID(t *testing.T) {
	at := time.Date(2026, 3, 9, 13, 0, 0, 0, time.FixedZone("X", 3600))
	for _, name := range []string{"report", "billing:monthly", "a:b:c:d", "2026-03-09T13:00:00Z"} {
		id := RunID(name, at)
		n, got, delayed, ok := parseRun(id)
		if !ok || n != name || !got.Equal(at) || delayed {
			t.Errorf("parseRun(%q) = %q, %v, %v, %v", id, n, got, delayed, ok)
		}
		if _, _, delayed, ok := parseRun(id + delayedSuffix); !ok || !delayed {
			t.Errorf("parseRun(%q): delayed %v, ok %v", id+delayedSuffix, delayed, ok)
		}
	}
	if got := RunID("report", at); got != "sched:report:2026-03-09T12:00:00Z" {
		t.Errorf("RunID = %q", got)
	}
	for _, id := range []string{"order-42", "sched:", "sched:x", "sched:x:yesterday"} {
		if _, _, ok := ParseRunID(id); ok {
			t.Errorf("ParseRunID(%q) ok", id)
		}
	}
}

// plan drops the instants past the grace as the policy says, and keeps
// those within it.
func TestPlan(t *testing.T) {
	base := time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC)
	now := base.Add(10*time.Second + 500*time.Millisecond) // instants 1..9 missed (10 is within the grace)
	for _, tc := range []struct {
		missed  Missed
		catchUp int
		next    time.Duration
		dropped int
	}{
		{MissedSkip, 0, 10 * time.Second, 9},
		{MissedRunLast, 0, 9 * time.Second, 8},
		{MissedRunAll, 100, 1 * time.Second, 0},
		{MissedRunAll, 3, 7 * time.Second, 6},
	} {
		c, err := def{Spec: "@every 1s", Missed: tc.missed, CatchUp: tc.catchUp, Grace: time.Second}.compile()
		if err != nil {
			t.Fatal(err)
		}
		next, dropped := c.plan(base, now)
		if want := base.Add(tc.next); !next.Equal(want) || dropped != tc.dropped {
			t.Errorf("%v, catch-up %d: plan = %v, %d dropped; want %v, %d", tc.missed, tc.catchUp, next, dropped, want, tc.dropped)
		}
		if next, dropped := c.plan(now, now); !next.Equal(base.Add(11*time.Second)) || dropped != 0 {
			t.Errorf("%v on time: plan = %v, %d", tc.missed, next, dropped)
		}
	}
}
