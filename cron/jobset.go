package cron

import (
	"errors"
	"fmt"
	"time"

	rcron "github.com/robfig/cron/v3"
)

// ErrOption is returned, wrapped with what is wrong and the job's name, by
// Add, AddSchedule, Update and UpdateSchedule for job options that do not
// go together. Examples: a stop date before the start date; an interval
// from completion on a schedule that is not "@every", or with a Claimer.
var ErrOption = errors.New("cron: invalid job options")

// ErrNoJob is returned, wrapped with the name, by Update, UpdateSchedule
// and RunNow for a name that no job has.
var ErrNoJob = errors.New("cron: no such job")

// jobSet is what Add's or AddSchedule's arguments and options make of a
// job: its schedule and its policies. It is never changed once made:
// Update gives the job a new one, so that a run or a fire that took the
// old one under the lock goes on with it whole.
type jobSet struct {
	spec        string   // as given to Add; "" for AddSchedule
	sched       Schedule // on its grid, within its start and stop dates
	loc         *time.Location
	overlap     Overlap
	claimPolicy ClaimPolicy
	missed      Missed
	grace       time.Duration
	jitter      time.Duration
	limit       int           // runs; 0: no limit
	every       time.Duration // > 0: WithIntervalFromCompletion's period
	stop        time.Time     // WithStopAt's; zero: none
}

// makeSet returns the settings of the job name on sched in loc,
// configured by cfg, now being now.
func (s *Scheduler) makeSet(name, spec string, sched Schedule, loc *time.Location, cfg jobConfig, now time.Time) (*jobSet, error) {
	set := &jobSet{
		spec: spec, loc: loc, overlap: cfg.overlap, claimPolicy: s.claimPolicy,
		missed: cfg.missed, grace: DefaultGrace, jitter: cfg.jitter, limit: cfg.limit,
		stop: cfg.stop,
	}
	if cfg.claimPolicy != nil {
		set.claimPolicy = *cfg.claimPolicy
	}
	if cfg.grace != nil {
		set.grace = *cfg.grace
	}
	if cfg.fromEnd {
		d := period(sched)
		switch {
		case d <= 0:
			return nil, fmt.Errorf("%w: WithIntervalFromCompletion needs an \"@every\" schedule (job %q)", ErrOption, name)
		case s.claimer != nil:
			return nil, fmt.Errorf("%w: WithIntervalFromCompletion with a Claimer: replicas would not name the same instants (job %q)", ErrOption, name)
		}
		set.every = d
	}
	if !cfg.start.IsZero() && !cfg.stop.IsZero() && cfg.stop.Before(cfg.start) {
		return nil, fmt.Errorf("%w: stop date %v before start date %v (job %q)", ErrOption, cfg.stop, cfg.start, name)
	}
	set.sched = s.onGrid(sched, now)
	if !cfg.start.IsZero() || !cfg.stop.IsZero() {
		set.sched = window{set.sched, cfg.start, cfg.stop}
	}
	return set, nil
}

// firstRun returns the first run of set after now, or an error wrapping
// ErrNever if there is none within five years.
func (set *jobSet) firstRun(name string, now time.Time) (time.Time, error) {
	next := set.sched.Next(now.In(set.loc))
	if !next.After(now) || next.After(now.AddDate(neverYears, 0, 0)) {
		return time.Time{}, fmt.Errorf("%w (job %q)", ErrNever, name)
	}
	return next, nil
}

// period returns the period of an "@every" schedule or of robfig's
// constant delay, or 0 for any other.
func period(sched Schedule) time.Duration {
	switch c := sched.(type) {
	case everySchedule:
		return c.every
	case rcron.ConstantDelaySchedule:
		return c.Delay
	case *rcron.ConstantDelaySchedule:
		if c != nil {
			return c.Delay
		}
	}
	return 0
}

// window is a schedule cut to the runs at or after start and at or
// before stop; a zero start or stop is no bound.
type window struct {
	sched       Schedule
	start, stop time.Time
}

// Next returns the first run of the schedule after t within the window.
func (w window) Next(t time.Time) time.Time {
	if !w.start.IsZero() && t.Before(w.start) {
		t = w.start.Add(-time.Nanosecond).In(t.Location())
	}
	next := w.sched.Next(t)
	if !w.stop.IsZero() && next.After(w.stop) {
		return time.Time{}
	}
	return next
}

// count is passed for the window: it counts the times of its schedule
// up to its stop date.
func (w window) count(first, now time.Time, loc *time.Location) (int, time.Time) {
	upTo := now
	if !w.stop.IsZero() && w.stop.Before(now) {
		upTo = w.stop
	}
	n, next := passed(w.sched, first, upTo, loc)
	if !w.stop.IsZero() && next.After(w.stop) {
		next = time.Time{}
	}
	return n, next
}

// afterEnd returns the next run of a job whose interval counts from the
// end of its runs (WithIntervalFromCompletion), the last having ended at
// end: end plus the interval, or the zero time past the stop date.
func (set *jobSet) afterEnd(end time.Time) time.Time {
	next := end.Add(set.every)
	if !set.stop.IsZero() && next.After(set.stop) {
		return time.Time{}
	}
	return next
}

// At returns the schedule of a one-time job: its one run is at t. Its
// Next returns t for a time before t, else the zero time. A job on it
// ends after its run: it stays in the scheduler, with no next run, until
// removed. Across replicas (WithClaimer) the run is claimed as any run,
// so it runs on one of them. The complexity is O(1).
func At(t time.Time) Schedule { return atSchedule{t} }

// atSchedule runs once, at t.
type atSchedule struct{ t time.Time }

// Next returns the run if it is after t, else the zero time.
func (a atSchedule) Next(t time.Time) time.Time {
	if t.Before(a.t) {
		return a.t.In(t.Location())
	}
	return time.Time{}
}
