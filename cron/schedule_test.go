package cron

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// The grid of "@every" holds however far a time lies from its origin:
// offsetFar, which Next takes past 292 years, agrees with the int64
// arithmetic where both work, and far from the origin Next lands on the
// grid, counted in half seconds (which do not overflow), after t and at
// most a period later.
func TestGridFarFromOrigin(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	epoch := time.Unix(0, 0)
	for range 10000 {
		g := gridSchedule{origin: epoch.Add(time.Duration(rng.Int64())), every: time.Duration(1 + rng.Int64N(math.MaxInt64))}
		at := epoch.Add(time.Duration(rng.Int64()))
		if span := at.Sub(g.origin); span == math.MinInt64 || span == math.MaxInt64 {
			continue
		}
		if fast, far := g.offset(at), g.offsetFar(at); fast != far {
			t.Fatalf("origin %v, every %v, t %v: offset %v, offsetFar %v", g.origin, g.every, at, fast, far)
		}
	}
	const half = time.Second / 2
	for _, tc := range []struct {
		every time.Duration // a multiple of half a second
		at    time.Time
	}{
		{time.Hour, time.Date(2400, 1, 1, 0, 30, 0, 0, time.UTC)},
		{7 * time.Second, time.Time{}},
		{1500 * time.Millisecond, time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{time.Duration(math.MaxInt64) / half * half, time.Date(-5000, 1, 1, 0, 0, 0, 1, time.UTC)},
	} {
		next := gridSchedule{origin: epoch, every: tc.every}.Next(tc.at)
		halves := next.Unix()*2 + int64(next.Nanosecond()/int(half)) // since the epoch
		if !next.After(tc.at) || next.Sub(tc.at) > tc.every || next.Nanosecond()%int(half) != 0 || mod(halves, int64(tc.every/half)) != 0 {
			t.Errorf("every %v after %v: %v, not the next multiple of the period since the epoch", tc.every, tc.at, next)
		}
	}
}

func mod(a, b int64) int64 { return (a%b + b) % b }
