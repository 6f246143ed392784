package cron_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
)

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// fixture is a scheduler on a virtual clock whose wheel and jobs run
// inline, unless opts say otherwise: when Advance returns, every run due
// has returned.
type fixture struct {
	t      *testing.T
	inline bool
	clk    *clock.Virtual
	w      *timewheel.Wheel
	s      *cron.Scheduler
}

func newFixture(t *testing.T, start time.Time, opts ...cron.Option) *fixture {
	t.Helper()
	f := newGoroutineFixture(t, start, append(opts, cron.WithInline())...)
	f.inline = true
	return f
}

// newGoroutineFixture is newFixture with runs on goroutines of their own.
func newGoroutineFixture(t *testing.T, start time.Time, opts ...cron.Option) *fixture {
	t.Helper()
	f := &fixture{t: t, clk: clock.NewVirtual(start)}
	f.w = timewheel.New(timewheel.WithClock(f.clk), timewheel.WithExecutor(timewheel.Inline()))
	f.s = cron.New(append([]cron.Option{cron.WithWheel(f.w), cron.WithLocation(time.UTC)}, opts...)...)
	t.Cleanup(func() {
		f.s.Stop(context.Background())
		f.w.Close()
	})
	return f
}

// recorder is a job that records the time each run was scheduled for and
// the clock's time when it ran.
type recorder struct {
	mu    sync.Mutex
	clk   *clock.Virtual
	exact bool // runs are inline: the clock reads their time
	at    []time.Time
}

func (r *recorder) run(_ context.Context, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.clk.Now(); r.exact && !now.Equal(at) {
		panic(fmt.Sprintf("run for %v ran at %v", at, now))
	}
	r.at = append(r.at, at)
}

func (r *recorder) take() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := r.at
	r.at = nil
	return at
}

func (f *fixture) add(name, spec string, opts ...cron.JobOption) *recorder {
	f.t.Helper()
	r := &recorder{clk: f.clk, exact: f.inline}
	if _, err := f.s.Add(name, spec, r.run, opts...); err != nil {
		f.t.Fatal(err)
	}
	return r
}

// days returns 9:00 in loc of every day from one to another (exclusive)
// that keep says to keep.
func days(from, to time.Time, loc *time.Location, keep func(time.Time) bool) []time.Time {
	var want []time.Time
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		at := time.Date(d.Year(), d.Month(), d.Day(), 9, 0, 0, 0, loc)
		if keep(at) {
			want = append(want, at)
		}
	}
	return want
}

func wantTimes(t *testing.T, what string, got, want []time.Time) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d runs, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !got[i].Equal(want[i]) || got[i].Location().String() != want[i].Location().String() {
			t.Fatalf("%s: run %d at %v, want %v", what, i, got[i], want[i])
		}
	}
}

// The calendar jobs of the reference document, through three years of
// schedule, each run checked to the nanosecond and the year's count with
// it.
func TestCalendarYears(t *testing.T) {
	berlin, ny := zone(t, "Europe/Berlin"), zone(t, "America/New_York")
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(3, 0, 0)
	// Three years of a check a minute would be 1.6 million wakeups: one
	// an hour here.
	f := newFixture(t, from, cron.WithWallClockCheck(time.Hour))
	tuesday := f.add("tuesday", "0 9 * * TUE", cron.InZone("Europe/Berlin"))
	twelfth := f.add("twelfth", "0 9 12 * *", cron.InZone("America/New_York"))
	if n := f.w.Len(); n != 3 { // one a job, and the wall-clock check
		t.Fatalf("%d wheel timers for two jobs", n)
	}
	t0 := time.Now()
	f.clk.AdvanceTo(to)
	t.Logf("three years of schedule in %v", time.Since(t0))

	gotTue, gotTwelfth := tuesday.take(), twelfth.take()
	wantTimes(t, "every Tuesday 9:00 Berlin", gotTue,
		days(from, to, berlin, func(d time.Time) bool { return d.Weekday() == time.Tuesday }))
	wantTimes(t, "12th of each month 9:00 New York", gotTwelfth,
		days(from, to, ny, func(d time.Time) bool { return d.Day() == 12 }))
	perYear := map[int]int{}
	for _, at := range gotTue {
		perYear[at.Year()]++
	}
	if perYear[2026] != 52 || perYear[2027] != 52 || perYear[2028] != 52 {
		t.Fatalf("Tuesdays per year: %v", perYear)
	}
	if len(gotTwelfth) != 36 {
		t.Fatalf("%d runs on the 12th in three years", len(gotTwelfth))
	}
}

func TestDaylightSaving(t *testing.T) {
	ny, berlin := zone(t, "America/New_York"), zone(t, "Europe/Berlin")
	utc := func(s string) time.Time {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	for _, tc := range []struct {
		name, spec, zone string
		from, to         string // UTC
		want             []string
	}{{
		// New York springs forward at 2:00 EST (07:00Z) to 3:00 EDT.
		name: "skipped hour runs once at the change", spec: "30 2 * * *", zone: "America/New_York",
		from: "2026-03-06T00:00:00Z", to: "2026-03-10T00:00:00Z",
		want: []string{"2026-03-06T07:30:00Z", "2026-03-07T07:30:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"},
	}, {
		// New York falls back at 2:00 EDT (06:00Z) to 1:00 EST.
		name: "repeated hour runs once", spec: "30 1 * * *", zone: "America/New_York",
		from: "2026-10-30T12:00:00Z", to: "2026-11-03T00:00:00Z",
		want: []string{"2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"},
	}, {
		name: "every 30 minutes stays every 30 minutes through the skipped hour", spec: "*/30 * * * *", zone: "America/New_York",
		from: "2026-03-08T04:59:00Z", to: "2026-03-08T08:00:00Z",
		want: []string{"2026-03-08T05:00:00Z", "2026-03-08T05:30:00Z", "2026-03-08T06:00:00Z", "2026-03-08T06:30:00Z",
			"2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z", "2026-03-08T08:00:00Z"},
	}, {
		name: "every 30 minutes runs twice through the repeated hour", spec: "*/30 * * * *", zone: "America/New_York",
		from: "2026-11-01T04:59:00Z", to: "2026-11-01T07:30:00Z",
		want: []string{"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z",
			"2026-11-01T07:00:00Z", "2026-11-01T07:30:00Z"},
	}, {
		// Berlin springs forward at 2:00 CET (01:00Z) to 3:00 CEST.
		name: "Berlin skipped hour", spec: "30 2 * * *", zone: "Europe/Berlin",
		from: "2026-03-28T00:00:00Z", to: "2026-03-31T00:00:00Z",
		want: []string{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"},
	}, {
		// Berlin falls back at 3:00 CEST (01:00Z) to 2:00 CET.
		name: "Berlin repeated hour", spec: "30 2 * * *", zone: "Europe/Berlin",
		from: "2026-10-24T00:00:00Z", to: "2026-10-27T00:00:00Z",
		want: []string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"},
	}, {
		name: "hourly runs every real hour", spec: "@hourly", zone: "America/New_York",
		from: "2026-11-01T04:30:00Z", to: "2026-11-01T08:00:00Z",
		want: []string{"2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z", "2026-11-01T08:00:00Z"},
	}, {
		name: "daily midnight across both changes", spec: "@daily", zone: "America/New_York",
		from: "2026-03-07T12:00:00Z", to: "2026-03-10T00:00:00Z",
		want: []string{"2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, utc(tc.from))
			r := f.add("job", tc.spec, cron.InZone(tc.zone))
			f.clk.AdvanceTo(utc(tc.to))
			var want []time.Time
			loc := map[string]*time.Location{"America/New_York": ny, "Europe/Berlin": berlin}[tc.zone]
			for _, s := range tc.want {
				want = append(want, utc(s).In(loc))
			}
			wantTimes(t, tc.spec, r.take(), want)
		})
	}
}

func TestSecondsAndDescriptors(t *testing.T) {
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	f := newFixture(t, from)
	secs := f.add("secs", "*/20 * * * * *")
	every := f.add("every", "@every 90m")
	f.clk.Advance(3 * time.Hour)
	if n := len(secs.take()); n != 3*60*3 {
		t.Fatalf("*/20 seconds ran %d times in 3h", n)
	}
	wantTimes(t, "@every 90m", every.take(), []time.Time{from.Add(90 * time.Minute), from.Add(3 * time.Hour)})
}

type scheduleFunc func(time.Time) time.Time

func (f scheduleFunc) Next(t time.Time) time.Time { return f(t) }

func TestAddSchedule(t *testing.T) {
	tokyo := zone(t, "Asia/Tokyo")
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	f := newFixture(t, from)
	// Noon in whatever zone Next is given: the job's.
	noon := scheduleFunc(func(t time.Time) time.Time {
		n := time.Date(t.Year(), t.Month(), t.Day(), 12, 0, 0, 0, t.Location())
		if !n.After(t) {
			n = n.AddDate(0, 0, 1)
		}
		return n
	})
	r := &recorder{clk: f.clk, exact: true}
	j, err := f.s.AddSchedule("noon", noon, r.run, cron.InZone("Asia/Tokyo"))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 5, 1, 12, 0, 0, 0, tokyo); !j.Next().Equal(want) || j.Location().String() != "Asia/Tokyo" {
		t.Fatalf("Next = %v, want %v", j.Next(), want)
	}
	f.clk.Advance(48 * time.Hour)
	wantTimes(t, "noon in Tokyo", r.take(), []time.Time{time.Date(2026, 5, 1, 12, 0, 0, 0, tokyo), time.Date(2026, 5, 2, 12, 0, 0, 0, tokyo)})

	// A schedule that does not move forward ends the job instead of
	// firing forever.
	then := f.clk.Now().Add(time.Hour)
	stuck := scheduleFunc(func(time.Time) time.Time { return then })
	r = &recorder{clk: f.clk, exact: true}
	j, _ = f.s.AddSchedule("stuck", stuck, r.run)
	f.clk.Advance(48 * time.Hour)
	if !j.Next().IsZero() || len(r.take()) != 1 {
		t.Fatalf("stuck schedule: Next = %v", j.Next())
	}
	past := scheduleFunc(func(time.Time) time.Time { return from })
	if _, err := f.s.AddSchedule("past", past, r.run); !errors.Is(err, cron.ErrNever) {
		t.Fatalf("a schedule in the past: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	nop := func(context.Context, time.Time) {}
	for _, tc := range []struct {
		name, spec string
		opts       []cron.JobOption
		err        error
		msg        string
	}{
		{"a", "61 * * * *", nil, cron.ErrSpec, `cron: invalid spec "61 * * * *": end of range (61) above maximum (59): 61 (job "a")`},
		{"b", "every day", nil, cron.ErrSpec, `cron: invalid spec "every day": expected 5 to 6 fields, found 2: [every day] (job "b")`},
		{"c", "", nil, cron.ErrSpec, `cron: invalid spec "": empty spec string (job "c")`},
		{"d", "@fortnightly", nil, cron.ErrSpec, `cron: invalid spec "@fortnightly": unrecognized descriptor: @fortnightly (job "d")`},
		{"e", "0 9 * * *", []cron.JobOption{cron.InZone("Mars/Olympus_Mons")}, cron.ErrZone, `cron: unknown time zone "Mars/Olympus_Mons": unknown time zone Mars/Olympus_Mons (a program for machines without zone files imports time/tzdata in its main package) (job "e")`},
		{"f", "CRON_TZ=Mars/Olympus_Mons 0 9 * * *", nil, cron.ErrZone, `cron: unknown time zone "Mars/Olympus_Mons": unknown time zone Mars/Olympus_Mons (a program for machines without zone files imports time/tzdata in its main package) (job "f")`},
		{"g", "CRON_TZ=Europe/Berlin 0 9 * * *", []cron.JobOption{cron.InZone("Asia/Tokyo")}, cron.ErrSpec, `cron: invalid spec "CRON_TZ=Europe/Berlin 0 9 * * *": it names time zone "Europe/Berlin" and another zone was given (job "g")`},
		{"h", "0 0 30 2 *", nil, cron.ErrNever, `cron: schedule never fires (job "h")`},
		{"i", "CRON_TZ=UTC TZ=Asia/Tokyo 0 9 * * *", nil, cron.ErrSpec, `cron: invalid spec "CRON_TZ=UTC TZ=Asia/Tokyo 0 9 * * *": it names a time zone twice (job "i")`},
		{"j", "CRON_TZ=UTC TZ=UTC", nil, cron.ErrSpec, `cron: invalid spec "CRON_TZ=UTC TZ=UTC": it names a time zone twice (job "j")`},
	} {
		_, err := f.s.Add(tc.name, tc.spec, nop, tc.opts...)
		if !errors.Is(err, tc.err) || err.Error() != tc.msg {
			t.Errorf("Add(%q, %q): error %v, want %v: %q", tc.name, tc.spec, err, tc.err, tc.msg)
		}
	}
	if _, err := f.s.Add("ok", "CRON_TZ=Europe/Berlin 0 9 * * *", nop); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Add("ok", "0 9 * * *", nop); !errors.Is(err, cron.ErrDuplicate) || err.Error() != `cron: duplicate job name "ok"` {
		t.Fatalf("duplicate: %v", err)
	}
	if j, _ := f.s.Job("ok"); j.Location().String() != "Europe/Berlin" {
		t.Fatalf("CRON_TZ job in %v", j.Location())
	}
	if len(f.s.Jobs()) != 1 || f.w.Len() != 2 { // the job's and the wall-clock check's
		t.Fatalf("%d jobs, %d timers after failed Adds", len(f.s.Jobs()), f.w.Len())
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), `cron: Add: nil func for job "x"`) {
				t.Errorf("Add with nil func: panic %v", r)
			}
		}()
		f.s.Add("x", "* * * * *", nil)
	}()
	f.s.Stop(context.Background())
	if _, err := f.s.Add("late", "0 9 * * *", nop); !errors.Is(err, cron.ErrStopped) {
		t.Fatalf("Add after Stop: %v", err)
	}
}

func TestRemove(t *testing.T) {
	f := newFixture(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r := f.add("a", "@every 1m")
	f.clk.Advance(2 * time.Minute)
	if !f.s.Remove("a") || f.s.Remove("a") {
		t.Fatal("Remove: want true then false")
	}
	j := f.s.Jobs()
	f.clk.Advance(time.Hour)
	if n := len(r.take()); n != 2 || len(j) != 0 || f.w.Len() != 0 {
		t.Fatalf("%d runs, %d jobs, %d timers after Remove", n, len(j), f.w.Len())
	}
}

// blocker is a job whose runs announce themselves and then wait for
// release.
type blocker struct {
	started chan time.Time
	release chan struct{}
}

func newBlocker() *blocker {
	return &blocker{started: make(chan time.Time, 10), release: make(chan struct{})}
}

func (b *blocker) run(_ context.Context, at time.Time) {
	b.started <- at
	<-b.release
}

func TestOverlap(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	minute := func(n int) time.Time { return from.Add(time.Duration(n) * time.Minute) }
	for _, tc := range []struct {
		policy  cron.Overlap
		runs    []time.Time // in the order they start
		skipped int
	}{
		{cron.Skip, []time.Time{minute(1)}, 2},
		{cron.Queue, []time.Time{minute(1), minute(2), minute(3)}, 0},
		{cron.Allow, []time.Time{minute(1), minute(2), minute(3)}, 0},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			f := newGoroutineFixture(t, from)
			b := newBlocker()
			j, err := f.s.Add("slow", "@every 1m", b.run, cron.WithOverlap(tc.policy))
			if err != nil {
				t.Fatal(err)
			}
			var got []time.Time
			f.clk.Advance(time.Minute)
			got = append(got, <-b.started) // the first run is going
			f.clk.Advance(time.Minute)
			f.clk.Advance(time.Minute)
			if tc.policy == cron.Allow {
				got = append(got, <-b.started, <-b.started)
			}
			if st := j.Stats(); st.Skipped != tc.skipped || st.Runs != 0 {
				t.Fatalf("while the first run is going: %+v", st)
			}
			close(b.release)
			for len(got) < len(tc.runs) {
				got = append(got, <-b.started)
			}
			if err := f.s.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if tc.policy == cron.Allow {
				slices.SortFunc(got, time.Time.Compare)
			}
			wantTimes(t, tc.policy.String(), got, tc.runs)
			if st := j.Stats(); st.Runs != len(tc.runs) || st.Skipped != tc.skipped {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}
