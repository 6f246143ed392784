package cron

import (
	"time"

	"github.com/timewheel/timewheel"
)

// An Option configures a Scheduler made by New.
type Option func(*config)

type config struct {
	wheel        *timewheel.Wheel
	loc          *time.Location
	inline       bool
	panicHandler func(job string, v any)
}

// WithWheel sets the wheel whose timers wake the jobs and whose clock the
// scheduler reads (default [timewheel.Default]). Tests pass a wheel on a
// [clock.Virtual]. WithWheel panics if w is nil.
func WithWheel(w *timewheel.Wheel) Option {
	if w == nil {
		panic("cron: WithWheel: nil wheel")
	}
	return func(c *config) { c.wheel = w }
}

// WithLocation sets the time zone of jobs that name none (default
// time.Local, as crontab). WithLocation panics if loc is nil.
func WithLocation(loc *time.Location) Option {
	if loc == nil {
		panic("cron: WithLocation: nil location")
	}
	return func(c *config) { c.loc = loc }
}

// WithInline makes jobs run on the goroutine that fires them, the wheel's
// executor, instead of a goroutine each. With a [timewheel.Inline] executor
// on a [clock.Virtual], every run due has returned when Advance returns,
// which is what tests want. A job that blocks then blocks that goroutine,
// and with an Inline executor every timer of the wheel.
func WithInline() Option {
	return func(c *config) { c.inline = true }
}

// WithPanicHandler sets what is called with a job's name and the value of
// its panic, after it is recovered (default: the standard logger prints it
// with a stack trace). The job's later runs, and the other jobs, go on.
// A handler that panics itself (say, to fail a test on the wheel's
// executor, with WithInline) ends the run with its panic; the run is
// counted as ended all the same, the runs of the job queued behind it are
// dropped, and its later runs go on. WithPanicHandler panics if h is nil.
func WithPanicHandler(h func(job string, v any)) Option {
	if h == nil {
		panic("cron: WithPanicHandler: nil handler")
	}
	return func(c *config) { c.panicHandler = h }
}

// A JobOption configures one job added by Add or AddSchedule.
type JobOption func(*jobConfig)

type jobConfig struct {
	zone    string
	overlap Overlap
}

// InZone sets the job's time zone by its IANA name, like "Europe/Berlin"
// (default: the scheduler's, see WithLocation). The name is loaded with
// time.LoadLocation when the job is added; this package embeds time/tzdata,
// so it does not depend on the zone files of the machine.
func InZone(name string) JobOption {
	return func(c *jobConfig) { c.zone = name }
}

// WithOverlap sets what happens when a run falls due while the job's
// previous run is still going (default Skip).
func WithOverlap(p Overlap) JobOption {
	return func(c *jobConfig) { c.overlap = p }
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
	return "Overlap(?)"
}
