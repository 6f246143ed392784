package cron

import (
	"fmt"
	"time"
)

// The options of one job, given to Add, AddSchedule, Update and
// UpdateSchedule. The scheduler's own options, given to New, are in
// options.go.

// A JobOption configures one job added by Add or AddSchedule.
type JobOption func(*jobConfig)

type jobConfig struct {
	zone        *string // nil: not set
	overlap     Overlap
	claimPolicy *ClaimPolicy
	missed      Missed
	grace       *time.Duration // nil: DefaultGrace
	jitter      time.Duration
	start, stop time.Time
	limit       int
	fromEnd     bool
	skipDST     bool
}

// WithJitter delays each run of the job by a random duration in [0, d),
// drawn anew for each run (default 0, no jitter). Jobs of many
// processes on the same schedule do not all hit a shared service at once.
// The run's at is still its scheduled time, the same on every
// replica, so claims are unchanged; lateness and the grace period count
// from the delayed time. A job waits for one run at a time: with a d
// longer than the gap between two times, the times that pass while a run
// waits for its delay are counted in Stats.Missed. WithJitter panics if d
// is negative. It costs one random number a run.
func WithJitter(d time.Duration) JobOption {
	if d < 0 {
		panic(fmt.Sprintf("cron: WithJitter: negative jitter %v", d))
	}
	return func(c *jobConfig) { c.jitter = d }
}

// WithStartAt makes the job's first run its first time at or after t
// (default: its first time after it is added). WithStartAt panics if t is
// the zero time.
func WithStartAt(t time.Time) JobOption {
	if t.IsZero() {
		panic("cron: WithStartAt: zero time")
	}
	return func(c *jobConfig) { c.start = t }
}

// WithStopAt makes the job's last run its last time at or before t: it
// has no run after. Add returns an error wrapping ErrOption for a stop
// date before the start date (WithStartAt), and ErrNever for one already
// past. WithStopAt panics if t is the zero time.
func WithStopAt(t time.Time) JobOption {
	if t.IsZero() {
		panic("cron: WithStopAt: zero time")
	}
	return func(c *jobConfig) { c.stop = t }
}

// WithLimitRuns ends the job after n times of its schedule have fallen
// due: it has no run after the nth. Every time counts, whether it ran
// here, was claimed by another replica, skipped by the overlap policy or
// dropped as missed. Replicas with the same limit end at the same
// time. Runs made up by RunAll count, and are cut at the limit. RunNow
// does not count. The count is kept in snapshots. An n of 0 is no limit,
// the default. WithLimitRuns panics if n is negative.
func WithLimitRuns(n int) JobOption {
	if n < 0 {
		panic(fmt.Sprintf("cron: WithLimitRuns: negative limit %d", n))
	}
	return func(c *jobConfig) { c.limit = n }
}

// WithIntervalFromCompletion counts an "@every d" job's period from the end
// of each run instead of on a grid: the next run is d after the last
// returned, so runs never overlap however long they take. Next returns the
// zero time while a run goes. A stop date ([WithStopAt]) and a limit of
// runs ([WithLimitRuns]) hold as on a grid. It is for "@every" specs and
// robfig's constant delays (Every) only, and not for schedulers with a
// Claimer, whose replicas must name the same instants: Add returns an error
// wrapping ErrOption otherwise.
func WithIntervalFromCompletion() JobOption {
	return func(c *jobConfig) { c.fromEnd = true }
}

// SkippedTime is a rule for a job at a fixed time of day that a
// spring-forward change of the clocks skips (2:30 on a night that jumps
// from 2:00 to 3:00).
type SkippedTime uint8

const (
	// RunAtChange runs it once, at the change (3:00 on that night), as
	// Vixie cron does (the default).
	RunAtChange SkippedTime = iota
	// SkipSkipped does not run it that day.
	SkipSkipped
)

// String returns "run at change" or "skip skipped".
func (r SkippedTime) String() string {
	switch r {
	case RunAtChange:
		return "run at change"
	case SkipSkipped:
		return "skip skipped"
	}
	return fmt.Sprintf("SkippedTime(%d)", uint8(r))
}

// OnSkippedTime sets the rule for a run at a time of day that a
// spring-forward change skips (default RunAtChange); see [SkippedTime].
// It applies to specs at fixed hours and minutes given to Add. Specs on
// real time ("*/15 * * * *") have no run in the skipped hour either way,
// and AddSchedule's schedules are the caller's. OnSkippedTime panics if r
// is neither RunAtChange nor SkipSkipped.
func OnSkippedTime(r SkippedTime) JobOption {
	if r > SkipSkipped {
		panic(fmt.Sprintf("cron: OnSkippedTime called with unknown rule %v; use RunAtChange or SkipSkipped", r))
	}
	return func(c *jobConfig) { c.skipDST = r == SkipSkipped }
}

// Missed is a policy for the runs a job missed. A run is missed when it is
// found more than the job's grace period ([WithGrace]) after its time. Its
// time passed while the process was down (see [Scheduler.Restore]), the
// machine slept, the wall clock stepped forward or the process stalled.
type Missed uint8

const (
	// RunOnce runs the first missed run, late, and drops the others (the
	// default): a job that must run after downtime, but once.
	RunOnce Missed = iota
	// SkipMissed drops the missed runs: the job goes on at its next time.
	// A job whose run is pointless late, such as a reminder.
	SkipMissed
	// RunAll runs every missed run, oldest first, one after another, up
	// to MaxCatchUp of them; the rest are dropped. A job that counts its
	// runs, such as hourly billing.
	RunAll
)

// MaxCatchUp is the most missed runs that RunAll makes up at once. The
// missed runs dropped are all counted in Stats.Missed. For "@every" the
// count is a division. A calendar spec or a Schedule of one's own is
// counted one Next at a time, up to 2^20 a catch-up (two years of a spec
// that runs every minute); past that, the rest go uncounted.
const MaxCatchUp = 100

// DefaultGrace is a job's grace period unless WithGrace says otherwise: a
// run that starts within it of its time is on time, not missed.
const DefaultGrace = time.Second

// String returns "run once", "skip missed" or "run all".
func (m Missed) String() string {
	switch m {
	case RunOnce:
		return "run once"
	case SkipMissed:
		return "skip missed"
	case RunAll:
		return "run all"
	}
	return fmt.Sprintf("Missed(%d)", uint8(m))
}

// OnMissed sets what the job does with its missed runs (default
// RunOnce); see [Missed]. Missed runs are found when the job's timer or
// the wall-clock check ([WithWallClockCheck]) wakes it, and after a
// Restore; each one made up is claimed as any run is. OnMissed panics if
// m is not RunOnce, SkipMissed or RunAll.
func OnMissed(m Missed) JobOption {
	if m > RunAll {
		panic(fmt.Sprintf("cron: OnMissed called with unknown policy %v; use RunOnce, SkipMissed or RunAll", m))
	}
	return func(c *jobConfig) { c.missed = m }
}

// WithGrace sets how late a run may start and still count as on time
// (default [DefaultGrace]): a run found later than that is missed, and
// the job's [OnMissed] policy decides. WithGrace panics if d is negative.
func WithGrace(d time.Duration) JobOption {
	if d < 0 {
		panic(fmt.Sprintf("cron: WithGrace: negative grace period %v", d))
	}
	return func(c *jobConfig) { c.grace = &d }
}

// InZone sets the job's time zone by its IANA name, like "Europe/Berlin"
// (default: the scheduler's, see WithLocation). The name is loaded with
// time.LoadLocation when the job is added, so "" and "UTC" are UTC and
// "Local" is time.Local. Zones come from the machine's zone files; a
// program for machines without them embeds Go's copy by importing
// time/tzdata in its main package.
func InZone(name string) JobOption {
	return func(c *jobConfig) { c.zone = &name }
}

// WithOverlap sets what happens when a run falls due while the job's
// previous run is still going (default Skip). WithOverlap panics if p is
// not Skip, Queue or Allow.
func WithOverlap(p Overlap) JobOption {
	if p > Allow {
		panic(fmt.Sprintf("cron: WithOverlap called with unknown policy %v; use Skip, Queue or Allow", p))
	}
	return func(c *jobConfig) { c.overlap = p }
}

// OnClaimFailure sets what the job does with a run whose claim failed
// (default: the scheduler's, see WithClaimPolicy). Use AtLeastOnce for a
// job that must not be lost, such as billing, AtMostOnce for one that must
// not run twice. OnClaimFailure panics if p is neither.
func OnClaimFailure(p ClaimPolicy) JobOption {
	checkClaimPolicy("OnClaimFailure", p)
	return func(c *jobConfig) { c.claimPolicy = &p }
}

// Overlap is a policy for a run that falls due while the previous run of
// the same job has not returned.
type Overlap uint8

const (
	// Skip drops the run (counted in Stats.Skipped): at most one run of the
	// job at a time, and a slow run delays nothing.
	Skip Overlap = iota
	// Queue keeps the run and starts it when the running one returns: runs
	// happen one at a time, late but none lost.
	Queue
	// Allow starts the run at once beside the running one, as crontab does.
	Allow
)

// String returns "skip", "queue" or "allow".
func (p Overlap) String() string {
	switch p {
	case Skip:
		return "skip"
	case Queue:
		return "queue"
	case Allow:
		return "allow"
	}
	return fmt.Sprintf("Overlap(%d)", uint8(p))
}
