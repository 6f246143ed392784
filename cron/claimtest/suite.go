package claimtest

import (
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
)

// Run runs the suite on claimers made by newClaimer. Each subtest calls
// it once, for a claimer with no claims yet (a fresh key prefix will do),
// which the subtest's replicas share; the subtests run in parallel. Each
// subtest logs its Tally.
//
// The subtests: five replicas with clocks up to 4s off, their skews
// drawn anew every 10 minutes, running "* * * * *" for a day, "0 9 * * *"
// in New York from March to November (both daylight-saving changes) and
// "@every 10s" for a day, every instant exactly once in total and each
// replica running some; and three replicas restarted together after ten
// minutes down, which catch up the first missed run once.
func Run(t *testing.T, newClaimer func(t *testing.T) cron.Claimer) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// Starts and ends 5s off every instant, more than the 4s skew, so that
	// every replica fires every instant between.
	day := time.Date(2026, 3, 7, 0, 0, 5, 0, time.UTC)
	for _, tc := range []struct {
		name, spec, zone string
		from, to         time.Time
		step             func(time.Time) time.Time
		first            time.Time
	}{
		{"every minute for a day", "* * * * *", "", day, day.Add(24 * time.Hour),
			func(t time.Time) time.Time { return t.Add(time.Minute) }, day.Truncate(time.Minute).Add(time.Minute)},
		{"9:00 New York, March to November", "0 9 * * *", "America/New_York",
			time.Date(2026, 3, 1, 0, 0, 5, 0, ny), time.Date(2026, 11, 15, 0, 0, 5, 0, ny),
			func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day()+1, 9, 0, 0, 0, ny) },
			time.Date(2026, 3, 1, 9, 0, 0, 0, ny)},
		{"every 10s for a day", "@every 10s", "", day, day.Add(24 * time.Hour),
			func(t time.Time) time.Time { return t.Add(10 * time.Second) }, day.Add(5 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim := New(t, newClaimer(t), tc.from, Config{Replicas: 5})
			sim.Add("job", tc.spec, zoneOpt(tc.zone)...)
			sim.RunUntil(tc.to)
			want := instants(tc.first, tc.to, tc.step)
			tl := sim.Tally("job", want)
			t.Logf("%s", tl)
			check(t, tl)
			var lost, runs int
			for i := range 5 {
				st := sim.Scheduler(i).Stats()
				runs += st.Runs
				lost += st.ClaimsLost
				if st.ClaimErrors != 0 {
					t.Errorf("replica %d: %d claim errors", i, st.ClaimErrors)
				}
			}
			if runs != len(want) || lost != 4*len(want) {
				t.Errorf("stats: %d runs, %d claims lost; want %d and %d", runs, lost, len(want), 4*len(want))
			}
		})
	}
	t.Run("restart catches up a missed run once", func(t *testing.T) {
		t.Parallel()
		sim := New(t, newClaimer(t), day, Config{Replicas: 3})
		sim.Add("job", "* * * * *")
		sim.RunUntil(day.Add(time.Hour))
		sim.Restart(10 * time.Minute) // down from 1:00:05 to 1:10:05
		sim.RunUntil(day.Add(2 * time.Hour))
		minute := func(t time.Time) time.Time { return t.Add(time.Minute) }
		want := instants(day.Add(55*time.Second), day.Add(time.Hour), minute)
		want = append(want, day.Add(time.Hour+55*time.Second)) // 1:01, caught up
		want = append(want, instants(day.Add(70*time.Minute+55*time.Second), day.Add(2*time.Hour), minute)...)
		tl := sim.Tally("job", want)
		t.Logf("%s", tl)
		check(t, tl)
	})
}

// check fails the test unless every instant ran exactly once, nothing
// else ran, and every replica ran something.
func check(t *testing.T, tl Tally) {
	t.Helper()
	if !tl.Exact() {
		t.Errorf("not exactly once: %s", tl)
	}
	for i, n := range tl.PerReplica {
		if n == 0 {
			t.Errorf("replica %d ran nothing: %s", i, tl)
		}
	}
}

func zoneOpt(zone string) []cron.JobOption {
	if zone == "" {
		return nil
	}
	return []cron.JobOption{cron.InZone(zone)}
}

// instants returns first, step(first), … up to to (inclusive).
func instants(first, to time.Time, step func(time.Time) time.Time) []time.Time {
	var at []time.Time
	for t := first; !t.After(to); t = step(t) {
		at = append(at, t)
	}
	return at
}
