package cron_test

import (
	"testing"
	"time"

	rcron "github.com/robfig/cron/v3"

	"github.com/timewheel/timewheel/cron"
)

// specMatches reports whether wall (a wall-clock reading, in UTC) is one
// that the spec names, by robfig's own fields.
func specMatches(sp *rcron.SpecSchedule, wall time.Time) bool {
	const star = 1 << 63
	bit := func(f uint64, v int) bool { return f&(1<<uint(v)) != 0 }
	if !bit(sp.Second, wall.Second()) || !bit(sp.Minute, wall.Minute()) || !bit(sp.Hour, wall.Hour()) || !bit(sp.Month, int(wall.Month())) {
		return false
	}
	dom, dow := bit(sp.Dom, wall.Day()), bit(sp.Dow, int(wall.Weekday()))
	if sp.Dom&star != 0 || sp.Dow&star != 0 {
		return dom && dow
	}
	return dom || dow
}

// parseBoth parses spec with robfig's parser, for its fields, and with
// Parse in loc, for the schedule under test.
func parseBoth(t *testing.T, spec string, loc *time.Location) (*rcron.SpecSchedule, cron.Schedule) {
	t.Helper()
	p := rcron.NewParser(rcron.SecondOptional | rcron.Minute | rcron.Hour | rcron.Dom | rcron.Month | rcron.Dow | rcron.Descriptor)
	parsed, err := p.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cron.Parse(spec, loc)
	if err != nil {
		t.Fatal(err)
	}
	return parsed.(*rcron.SpecSchedule), s
}

func wallOf(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, 0, time.UTC)
}

// TestRealTimeRunsOnlyOnNamedDays: a real-time spec ("*/2" hours) runs
// only at instants whose wall clock the spec names, through
// spring-forwards that skip midnight (America/Havana 2026-03-08 00:00 ->
// 01:00, America/Santiago 2026-09-06 00:00 -> 01:00). robfig/cron's own
// Next steps its hours across the skipped midnight without checking the
// day again, and so ran a Saturdays-only job on the Sunday after.
func TestRealTimeRunsOnlyOnNamedDays(t *testing.T) {
	for _, zn := range []string{"America/Havana", "America/Santiago", "Australia/Lord_Howe"} {
		loc := zone(t, zn)
		for _, spec := range []string{"0 */2 * * SAT", "*/30 */2 * * 6", "0 */3 7 * *", "0 */2 5 9 *"} {
			sp, s := parseBoth(t, spec, loc)
			from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			to := from.AddDate(1, 0, 0)
			for at := s.Next(from); !at.IsZero() && at.Before(to); at = s.Next(at) {
				if w := wallOf(at.In(loc)); !specMatches(sp, w) {
					t.Errorf("%s %q: runs at %v (%v), a time the spec does not name", zn, spec, at.In(loc), at.In(loc).Weekday())
				}
			}
		}
	}
}

// TestRealTimeLordHowe: real time means a run at every instant whose wall
// clock the spec names, once each, checked minute by minute over a year
// in Lord Howe, whose clocks move by 30 minutes (2:00 -> 2:30 on
// 2026-10-04, 2:00 -> 1:30 on 2026-04-05). robfig/cron's Next assumes a
// wall hour starts at :00 after a change and stepped on :30 afterwards,
// losing runs for days or running outside the spec's hours.
func TestRealTimeLordHowe(t *testing.T) {
	loc := zone(t, "Australia/Lord_Howe")
	for _, spec := range []string{"*/15 1 * * *", "0 */2 * * *", "*/30 0 * * *", "* 0 * * SUN", "*/15 2 * * *"} {
		sp, s := parseBoth(t, spec, loc)
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		to := from.AddDate(1, 0, 0)
		var want, got []time.Time
		for m := from; m.Before(to); m = m.Add(time.Minute) {
			if specMatches(sp, wallOf(m.In(loc))) {
				want = append(want, m)
			}
		}
		for at := s.Next(from.Add(-time.Second)); !at.IsZero() && at.Before(to); at = s.Next(at) {
			got = append(got, at)
		}
		for i := range max(len(got), len(want)) {
			var g, w time.Time
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !g.Equal(w) {
				t.Errorf("%q: run %d is %v, want %v", spec, i, g.In(loc), w.In(loc))
				break
			}
		}
	}
}

// TestSchedulerSaturdayJobAcrossMidnightShift: the same through the
// scheduler on the virtual clock: a Saturdays-only job in Havana does not
// run on Sunday 2026-03-08, the day midnight is skipped.
func TestSchedulerSaturdayJobAcrossMidnightShift(t *testing.T) {
	havana := zone(t, "America/Havana")
	f := newFixture(t, time.Date(2026, 3, 7, 20, 0, 0, 0, havana))
	r := f.add("sat", "0 */2 * * SAT", cron.InZone("America/Havana"))
	f.clk.AdvanceTo(time.Date(2026, 3, 9, 0, 0, 0, 0, havana))
	for _, at := range r.take() {
		if at.Weekday() != time.Saturday {
			t.Errorf("Saturday job ran at %v (%v)", at, at.Weekday())
		}
	}
}

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
