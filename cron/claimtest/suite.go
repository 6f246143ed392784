package claimtest

import (
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
)

// Run runs the suite on claimers made by newClaimer. Each subtest calls
// it once, for a claimer with no claims yet (a fresh key prefix will do),
// which the subtest's replicas share; the subtests run in parallel. Each
// subtest logs its Tally. Run panics if newClaimer is nil.
//
// The subtests:
//   - five replicas with clocks up to 4s off, their skews drawn anew
//     every 10 minutes, run each instant exactly once in total, and each
//     replica runs some. They run "* * * * *" for a day, "0 9 * * *" in
//     New York from March to November (both daylight-saving changes),
//     "@every 10s" for a day and "@every 1500ms" for half an hour;
//   - a one-time job ("@at") runs once;
//   - jobs with jitter, a limit of runs and a concurrency limit run every
//     instant once;
//   - three replicas restarted together after ten minutes down make up
//     every missed run once (OnMissed(RunAll)), or catch up the first
//     missed run once (the default).
func Run(t *testing.T, newClaimer func(t *testing.T) cron.Claimer) {
	if newClaimer == nil {
		panic("claimtest: Run called with a nil newClaimer")
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// Starts and ends 5s off every instant, more than the 4s skew, so that
	// every replica fires every instant between; but for a period under
	// the skew, whose instants near the start and the end some replicas
	// fire and others do not.
	day := time.Date(2026, 3, 7, 0, 0, 5, 0, time.UTC)
	const skew = 4 * time.Second
	for _, tc := range []struct {
		name, spec, zone string
		from, to         time.Time
		step             func(time.Time) time.Time
		first, last      time.Time     // the instants every replica fires
		edge             time.Duration // the period, for a spec whose instants near from and to not every replica fires
	}{
		{"every minute for a day", "* * * * *", "", day, day.Add(24 * time.Hour),
			func(t time.Time) time.Time { return t.Add(time.Minute) }, day.Truncate(time.Minute).Add(time.Minute), day.Add(24 * time.Hour), 0},
		{"9:00 New York, March to November", "0 9 * * *", "America/New_York",
			time.Date(2026, 3, 1, 0, 0, 5, 0, ny), time.Date(2026, 11, 15, 0, 0, 5, 0, ny),
			func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day()+1, 9, 0, 0, 0, ny) },
			time.Date(2026, 3, 1, 9, 0, 0, 0, ny), time.Date(2026, 11, 15, 0, 0, 5, 0, ny), 0},
		{"every 10s for a day", "@every 10s", "", day, day.Add(24 * time.Hour),
			func(t time.Time) time.Time { return t.Add(10 * time.Second) }, day.Add(5 * time.Second), day.Add(24 * time.Hour), 0},
		// The grid of 1.5s through the epoch (and through midnight): the
		// first instant after day+4s is 00:00:10.5.
		{"every 1500ms for half an hour", "@every 1500ms", "", day, day.Add(30 * time.Minute),
			func(t time.Time) time.Time { return t.Add(1500 * time.Millisecond) },
			day.Add(5500 * time.Millisecond), day.Add(30*time.Minute - skew), 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A wall-clock check an hour, not a minute: eight months of
			// five replicas would be 1.8 million checks.
			sim := New(t, newClaimer(t), tc.from, Config{Replicas: 5, MaxSkew: skew,
				Options: []cron.Option{cron.WithWallClockCheck(time.Hour)}})
			sim.Add("job", tc.spec, zoneOpt(tc.zone)...)
			sim.RunUntil(tc.to)
			want := instants(tc.first, tc.last, tc.step)
			tl := sim.Tally("job", want)
			t.Logf("%s", tl)
			if tc.edge == 0 {
				check(t, tl)
			} else {
				checkEdges(t, tl, sim.Runs("job"), want, tc.edge)
			}
			var lost, runs int
			for i := range 5 {
				st := sim.Scheduler(i).Stats()
				runs += st.Runs
				lost += st.ClaimsLost
				if st.ClaimErrors != 0 {
					t.Errorf("replica %d: %d claim errors", i, st.ClaimErrors)
				}
			}
			if runs != len(sim.Runs("job")) || tc.edge == 0 && (runs != len(want) || lost != 4*len(want)) {
				t.Errorf("stats: %d runs, %d claims lost; want %d and %d", runs, lost, len(want), 4*len(want))
			}
		})
	}
	t.Run("restart catches up a missed run once", func(t *testing.T) {
		t.Parallel()
		// Seed 2: seed 1's skews, with the wall-clock checks' steps, put
		// replica 0 behind the others in every skew period.
		sim := New(t, newClaimer(t), day, Config{Replicas: 3, Seed: 2})
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
	t.Run("restart makes up every missed run once (RunAll)", func(t *testing.T) {
		t.Parallel()
		sim := New(t, newClaimer(t), day, Config{Replicas: 3})
		sim.Add("job", "* * * * *", cron.OnMissed(cron.RunAll))
		sim.RunUntil(day.Add(time.Hour))
		sim.Restart(10 * time.Minute) // down from 1:00:05 to 1:10:05
		sim.RunUntil(day.Add(2 * time.Hour))
		want := instants(day.Add(55*time.Second), day.Add(2*time.Hour), func(t time.Time) time.Time { return t.Add(time.Minute) })
		tl := sim.Tally("job", want)
		t.Logf("%s", tl)
		if !tl.Exact() {
			t.Errorf("not exactly once: %s", tl)
		}
	})
	t.Run("one-time job runs once", func(t *testing.T) {
		t.Parallel()
		sim := New(t, newClaimer(t), day, Config{Replicas: 5, MaxSkew: skew})
		at := day.Add(time.Hour).Truncate(time.Hour) // 1:00
		sim.Add("once", "@at "+at.Format(time.RFC3339))
		sim.RunUntil(day.Add(2 * time.Hour))
		tl := sim.Tally("once", []time.Time{at})
		t.Logf("%s", tl)
		if !tl.Exact() {
			t.Errorf("not exactly once: %s", tl)
		}
	})
	t.Run("jitter, a limit of runs and a concurrency limit", func(t *testing.T) {
		t.Parallel()
		sim := New(t, newClaimer(t), day, Config{Replicas: 5, MaxSkew: skew,
			Options: []cron.Option{cron.WithConcurrencyLimit(1, cron.LimitWait)}})
		sim.Add("job", "* * * * *", cron.WithJitter(20*time.Second), cron.WithLimitRuns(30))
		sim.Add("other", "*/2 * * * *", cron.WithOverlap(cron.Queue))
		sim.RunUntil(day.Add(time.Hour))
		minute := func(t time.Time) time.Time { return t.Add(time.Minute) }
		first := day.Truncate(time.Minute).Add(time.Minute)
		for _, c := range []struct {
			job  string
			want []time.Time
		}{
			{"job", instants(first, first.Add(29*time.Minute), minute)},
			{"other", instants(first.Add(time.Minute), day.Add(time.Hour), func(t time.Time) time.Time { return t.Add(2 * time.Minute) })},
		} {
			tl := sim.Tally(c.job, c.want)
			t.Logf("%s: %s", c.job, tl)
			if !tl.Exact() {
				t.Errorf("%s: not exactly once: %s", c.job, tl)
			}
		}
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

// checkEdges is check for a spec whose instants near the start and the
// end only some replicas fire: every instant of want (which every replica
// fires) ran exactly once, every replica ran something, and the runs
// outside want were at instants of the grid of period, before or after
// want, each once.
func checkEdges(t *testing.T, tl Tally, runs []Record, want []time.Time, period time.Duration) {
	t.Helper()
	if tl.Once != tl.Instants || tl.More != 0 || tl.Never != 0 {
		t.Errorf("not exactly once: %s", tl)
	}
	for i, n := range tl.PerReplica {
		if n == 0 {
			t.Errorf("replica %d ran nothing: %s", i, tl)
		}
	}
	seen := map[int64]bool{}
	for _, r := range runs {
		if !r.At.Before(want[0]) && !r.At.After(want[len(want)-1]) {
			continue
		}
		if ns := r.At.UnixNano(); ns%int64(period) != 0 || seen[ns] {
			t.Errorf("replica %d ran %v, off the grid of %v or a second time", r.Replica, r.At, period)
		}
		seen[r.At.UnixNano()] = true
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
