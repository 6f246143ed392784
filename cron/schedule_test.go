package cron

import (
	"fmt"
	"testing"
	"time"
)

// Daily jobs at every half hour of the night, in zones whose clocks change
// by an hour, by half an hour (Lord Howe) and at midnight (Santiago), run
// exactly once per local day for three years: at their wall-clock time, or
// at the transition on a day that skips it.
func TestWallScheduleOncePerDay(t *testing.T) {
	for _, name := range []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago", "UTC"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, hm := range [][2]int{{0, 0}, {0, 30}, {1, 30}, {1, 45}, {2, 0}, {2, 15}, {2, 30}, {3, 0}, {23, 30}} {
			spec := fmt.Sprintf("%d %d * * *", hm[1], hm[0])
			sched, err := Parse(spec, loc)
			if err != nil {
				t.Fatal(err)
			}
			from := time.Date(2026, 1, 1, 0, 0, 0, 0, loc).Add(-time.Second)
			to := time.Date(2029, 1, 1, 0, 0, 0, 0, loc)
			days := 0
			prev := from
			for at := sched.Next(from); at.Before(to); at = sched.Next(at) {
				days++
				want := time.Date(prev.Year(), prev.Month(), prev.Day()+1, 12, 0, 0, 0, time.UTC) // the next date
				if prev == from {
					want = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
				}
				if y, m, d := at.Date(); y != want.Year() || m != want.Month() || d != want.Day() {
					t.Fatalf("%s %q: run after %v falls on %v, want the next day", name, spec, prev, at)
				}
				if h, mi, _ := at.Clock(); h != hm[0] || mi != hm[1] {
					if start, _ := at.ZoneBounds(); !start.Equal(at) {
						t.Fatalf("%s %q: run at %v, neither at its time nor at a transition", name, spec, at)
					}
				}
				prev = at
			}
			if days != 3*365+1 {
				t.Fatalf("%s %q: %d runs in three years", name, spec, days)
			}
		}
	}
}
