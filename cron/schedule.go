package cron

import (
	"errors"
	"fmt"
	"strings"
	"time"

	rcron "github.com/robfig/cron/v3"
)

// Schedule says when a job runs: Next returns the first run time after t,
// or the zero time if there is none. It is robfig/cron/v3's Schedule, so
// the schedules of that package, and any other, fit.
type Schedule interface {
	Next(t time.Time) time.Time
}

// ErrSpec is returned, wrapped with the expression and what is wrong with
// it, for a cron expression that does not parse.
var ErrSpec = errors.New("cron: invalid spec")

// ErrNever is returned, wrapped with the job's name, by Add and
// AddSchedule for a schedule with no run in the next five years. Such is
// "0 0 30 2 *" (February 30th), or one whose first run is not in the
// future.
var ErrNever = errors.New("cron: schedule never fires")

// neverYears is how far ahead a job's first run may be: ErrNever's five
// years, robfig/cron's horizon too.
const neverYears = 5

// ErrZone is returned, wrapped with the name, for a time zone that
// time.LoadLocation does not know.
var ErrZone = errors.New("cron: unknown time zone")

// parser reads the standard five fields, an optional leading seconds
// field, and descriptors (@daily, @every 1h30m, ...).
var parser = rcron.NewParser(rcron.SecondOptional | rcron.Minute | rcron.Hour |
	rcron.Dom | rcron.Month | rcron.Dow | rcron.Descriptor)

// starBit is robfig/cron's mark, in a field's bits, of a '*' in that
// field. robfig clears it for a step over 1 ("*/15"), so it tells
// descriptors apart (@hourly has it in its hours) but not expressions.
const starBit = 1 << 63

// Parse returns the schedule of a cron expression, read by robfig/cron/v3's
// parser in the time zone loc (time.Local if nil). It accepts:
//
//   - the standard five fields, "minute hour day-of-month month day-of-week"
//     ("0 9 * * TUE": every Tuesday at 9:00; "0 9 12 * *": the 12th of each
//     month at 9:00), with an optional leading seconds field;
//   - descriptors: @yearly, @monthly, @weekly, @daily, @hourly and
//     "@every <duration>";
//   - "@at <RFC 3339 time>", one run at that instant (see [At]);
//   - a leading "CRON_TZ=<zone>" or "TZ=<zone>", which sets the zone in
//     place of loc, as time.LoadLocation reads it ("CRON_TZ= " is UTC);
//     naming a zone both ways, or twice, is an error.
//
// "@every d" takes any positive duration that time.ParseDuration reads:
// "@every 1500ms" and "@every 100us" as well as "@every 1h30m". This
// package reads it itself. (robfig's parser truncates d to whole seconds,
// and takes a d under a second for one second.) Its schedule's Next(t) is
// t+d. A job on it runs on a grid, every d from when it was added (with a
// Claimer, on the multiples of d since the Unix epoch; see [WithClaimer]).
// The wheel rounds each run up to its first tick at or after the run's
// instant, never early. The job is called at most a tick (see
// [timewheel.WithTick]) plus the driver's delay after it, with at the
// instant itself, on the grid. A d shorter than the tick runs at most once
// a tick. It runs at the first instant of the grid after the tick that
// fired the one before, as a run delayed by a stalled process does.
//
// The schedule handles daylight-saving changes as cron does (see the
// package documentation). Parse returns an error wrapping ErrSpec for an
// expression that does not parse, "@every" with a duration that is not
// positive included, and ErrZone for an unknown zone.
func Parse(spec string, loc *time.Location) (Schedule, error) {
	return parse(spec, loc, false)
}

// parse is Parse; skip makes a spec at fixed hours skip a time that a
// spring-forward change skips, instead of running at the change.
func parse(spec string, loc *time.Location, skip bool) (Schedule, error) {
	zone, rest, named := splitZone(spec)
	if named {
		if loc != nil {
			return nil, fmt.Errorf("%w %q: it names time zone %q and another zone was given", ErrSpec, spec, zone)
		}
		var err error
		if loc, err = loadZone(zone); err != nil {
			return nil, err
		}
	}
	if loc == nil {
		loc = time.Local
	}
	if strings.HasPrefix(rest, "CRON_TZ=") || strings.HasPrefix(rest, "TZ=") {
		// robfig's parser would take the second zone, or panic on a
		// prefix with nothing after it.
		return nil, fmt.Errorf("%w %q: it names a time zone twice", ErrSpec, spec)
	}
	if at, ok, err := parseAt(rest); ok {
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrSpec, spec, err)
		}
		return at, nil
	}
	if every, ok, err := parseEvery(rest); ok {
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrSpec, spec, err)
		}
		return every, nil
	}
	s, err := parser.Parse(rest)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrSpec, spec, err)
	}
	return inZone(s, loc, realTime(rest, s), skip), nil
}

// parseAt reads "@at <RFC 3339 time>", and reports whether spec is one.
func parseAt(spec string) (Schedule, bool, error) {
	fields := strings.Fields(spec)
	if len(fields) == 0 || fields[0] != "@at" {
		return nil, false, nil
	}
	if len(fields) != 2 {
		return nil, true, errors.New(`@at takes one RFC 3339 time, such as "@at 2026-03-01T09:00:00+01:00"`)
	}
	t, err := time.Parse(time.RFC3339Nano, fields[1])
	if err != nil {
		return nil, true, err
	}
	return At(t), true, nil
}

// everySchedule is "@every d": Next(t) is t+d.
type everySchedule struct {
	every time.Duration
}

// Next returns t+d.
func (e everySchedule) Next(t time.Time) time.Time { return t.Add(e.every) }

// parseEvery reads "@every <duration>", and reports whether spec is one.
func parseEvery(spec string) (everySchedule, bool, error) {
	fields := strings.Fields(spec)
	if len(fields) == 0 || fields[0] != "@every" {
		return everySchedule{}, false, nil
	}
	if len(fields) != 2 {
		return everySchedule{}, true, errors.New(`@every takes one duration, such as "@every 1h30m"`)
	}
	d, err := time.ParseDuration(fields[1])
	switch {
	case err != nil:
		return everySchedule{}, true, err
	case d <= 0:
		return everySchedule{}, true, errors.New("the duration must be positive")
	}
	return everySchedule{d}, true, nil
}

// realTime reports whether the parsed spec runs on real time: whether its
// seconds, minutes or hours field starts with '*' (or '?', robfig's
// synonym). Vixie cron decides so by MIN_STAR and HR_STAR. "*/15 1 * * *"
// and "0 */2 * * *" count as well as "* * * * *". The field text decides,
// since robfig's star bit is lost with a step; for a descriptor, which has
// no text to read, the bits do (@hourly).
func realTime(spec string, s rcron.Schedule) bool {
	sp, ok := s.(*rcron.SpecSchedule)
	if !ok {
		return false
	}
	spec = strings.TrimSpace(spec) // Parse took off any CRON_TZ=
	if strings.HasPrefix(spec, "@") {
		return (sp.Second|sp.Minute|sp.Hour)&starBit != 0
	}
	fields := strings.Fields(spec)
	if len(fields) == 5 { // no seconds field: robfig's is "0"
		fields = fields[:2]
	} else {
		fields = fields[:3]
	}
	for _, f := range fields {
		if f[0] == '*' || f[0] == '?' {
			return true
		}
	}
	return false
}

// splitZone splits a leading CRON_TZ= or TZ= off spec, and reports
// whether there was one; its zone may be "", UTC for time.LoadLocation.
func splitZone(spec string) (zone, rest string, named bool) {
	spec = strings.TrimSpace(spec)
	for _, p := range []string{"CRON_TZ=", "TZ="} {
		if after, ok := strings.CutPrefix(spec, p); ok {
			zone, rest, _ = strings.Cut(after, " ")
			return zone, rest, true
		}
	}
	return "", spec, false
}

// loadZone is time.LoadLocation with an error naming the zone.
func loadZone(name string) (*time.Location, error) {
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v (a program for machines without zone files imports time/tzdata in its main package)", ErrZone, name, err)
	}
	return loc, nil
}

// inZone gives a parsed schedule its zone and cron's daylight-saving
// rules. A spec at fixed hours and minutes runs on the wall clock
// (wallSchedule); a real-time one, whose seconds, minutes or hours field
// starts with '*' (see realTime), runs on real time (realSchedule).
func inZone(s rcron.Schedule, loc *time.Location, realTime, skip bool) Schedule {
	spec, ok := s.(*rcron.SpecSchedule)
	if !ok {
		return s // not made by robfig's parser, which Parse reads @every before
	}
	sp := *spec
	sp.Location = time.UTC // the wall clock, with no transitions
	if realTime {
		return &realSchedule{spec: sp, loc: loc}
	}
	return &wallSchedule{spec: sp, loc: loc, skip: skip}
}

// maxSegments bounds how many zone segments realSchedule.Next crosses
// looking for a run; robfig/cron gives up after five years, and zones
// change their offset at most a few times a year.
const maxSegments = 64

// realSchedule runs a spec on real time in loc: at every instant at which
// loc's wall clock reads a time the spec names, as it happens. In an hour
// that clocks skip it does not run; in an hour that repeats it runs in
// both. It works one stretch of constant UTC offset (a zone segment) at a
// time, on that segment's wall clock, so that transitions at midnight or
// of half an hour do not confuse it. (robfig/cron's own Next steps hours
// in the zone. It can run a job on a day its spec excludes when midnight
// is skipped, and on :30 for the rest of the day after a half-hour
// shift.)
type realSchedule struct {
	spec rcron.SpecSchedule // in UTC, read as the wall clock of one segment
	loc  *time.Location
}

// Next returns the first run after t, in loc.
func (s *realSchedule) Next(t time.Time) time.Time {
	t = t.In(s.loc)
	wall := civil(t) // runs are strictly after this reading
	for range maxSegments {
		_, end := t.ZoneBounds()
		next := s.spec.Next(wall)
		if next.IsZero() {
			return next
		}
		at := time.Unix(next.Unix()-int64(offset(t)), int64(next.Nanosecond())).In(s.loc)
		if end.IsZero() || at.Before(end) {
			return at
		}
		// Not in this segment: read on from the next one's wall clock, a
		// nanosecond early so that a run at its very start counts.
		t = end.In(s.loc)
		wall = civil(t).Add(-time.Nanosecond)
	}
	return time.Time{}
}

// wallSchedule runs a spec at fixed times of loc's wall clock. It finds
// the next wall-clock time the spec names, then the instant that time
// stands for:
//   - A time that a transition skips stands for the transition itself:
//     the job runs once, as the clocks jump.
//   - A time that occurs twice stands for its first occurrence, so the
//     job runs once, not twice. It stands for its second if the first is
//     already past.
type wallSchedule struct {
	spec rcron.SpecSchedule // in UTC, read as loc's wall clock
	loc  *time.Location
	skip bool // a skipped time is not run (OnSkippedTime(SkipSkipped))
}

// Next returns the first run after t, in loc.
func (s *wallSchedule) Next(t time.Time) time.Time {
	wall := civil(t.In(s.loc))
	for {
		wall = s.spec.Next(wall)
		if wall.IsZero() {
			return wall
		}
		first, second := instants(wall, s.loc)
		if s.skip && !civil(first).Equal(wall) {
			continue // the clocks jumped over wall
		}
		if first.After(t) {
			return first
		}
		if !second.IsZero() && second.After(t) {
			return second
		}
	}
}

// civil returns t's wall-clock reading as a time in UTC.
func civil(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	return time.Date(y, mo, d, h, mi, sec, t.Nanosecond(), time.UTC)
}

// instants returns the instants at which loc's wall clock reads wall (given
// in UTC): one, or two in the hour that repeats when clocks are set back,
// earlier first. For a reading that a transition skips, it returns the
// transition.
func instants(wall time.Time, loc *time.Location) (first, second time.Time) {
	t := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), loc)
	start, end := t.ZoneBounds()
	offsets := []int{offset(t)}
	if !start.IsZero() {
		offsets = append(offsets, offset(start.Add(-time.Nanosecond)))
	}
	if !end.IsZero() {
		offsets = append(offsets, offset(end))
	}
	for _, o := range offsets {
		c := time.Unix(wall.Unix()-int64(o), int64(wall.Nanosecond())).In(loc)
		switch {
		case !civil(c).Equal(wall) || c.Equal(first) || c.Equal(second):
		case first.IsZero():
			first = c
		case c.Before(first):
			first, second = c, first
		default:
			second = c
		}
	}
	if first.IsZero() { // skipped: the clocks jumped over wall
		if civil(t).After(wall) {
			return start, time.Time{}
		}
		return end, time.Time{}
	}
	return first, second
}

func offset(t time.Time) int {
	_, o := t.Zone()
	return o
}
