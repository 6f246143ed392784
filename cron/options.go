package cron

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/internal/nilarg"
)

// The scheduler's options, given to New. The options of one job are in
// joboptions.go.

// An Option configures a Scheduler made by New.
type Option func(*config)

type config struct {
	wheel        *timewheel.Wheel
	loc          *time.Location
	inline       bool
	panicHandler func(job string, v any)
	claimer      Claimer
	claimTimeout time.Duration
	claimPolicy  ClaimPolicy
	claimErr     func(job string, at time.Time, err error)
	logger       *slog.Logger
	wallCheck    time.Duration
	limit        int
	limitMode    LimitMode
	hooks        Hooks
}

// DefaultWallClockCheck is how often a scheduler with jobs re-reads the
// wall clock unless WithWallClockCheck says otherwise.
const DefaultWallClockCheck = time.Minute

// WithWallClockCheck sets how often the scheduler re-reads the wall clock
// (default [DefaultWallClockCheck]). Its jobs keep to the wall clock
// when it steps or the machine resumes from a suspend (see "The wall
// clock" in the package documentation). At each check, every job due
// before the next one has its timer set afresh from the wall clock. A job
// whose time has passed runs then, as its [OnMissed] policy says. A run is
// so at most d (plus a tick) late after a step or a resume of any size.
// An idle scheduler with jobs wakes once every d; one without jobs does
// not wake. Each check costs O(n) in the jobs. A d of 0 turns the check
// off: runs then keep to their timers as set, late by as much as a
// forward step or a suspend. WithWallClockCheck panics if d is negative.
func WithWallClockCheck(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("cron: WithWallClockCheck: negative period %v", d))
	}
	return func(c *config) { c.wallCheck = d }
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
// its panic, after it is recovered. By default the panic is logged at
// level Error, with the stack, through the scheduler's logger (see
// WithLogger), as "cron: job panicked". The job's later runs, and the
// other jobs, go on.
//
// The handler is called too, with the job's name, for a panic of the
// Claimer's Claim (see [Claimer]) and of the job's Schedule's Next (see
// [Scheduler.AddSchedule]). By default these are logged as "cron: Claim
// panicked" and "cron: Schedule.Next panicked".
//
// A handler that panics itself ends the run with its panic (say, to fail
// a test on the wheel's executor, with WithInline). The run is counted as
// ended all the same, the runs of the job queued behind it are dropped,
// and its later runs go on. WithPanicHandler panics if h is nil.
func WithPanicHandler(h func(job string, v any)) Option {
	if h == nil {
		panic("cron: WithPanicHandler: nil handler")
	}
	return func(c *config) { c.panicHandler = h }
}

// WithClaimer makes the scheduler one of several that run the same jobs,
// one per replica of a service, each run executing on one of them. Before
// a run, on the run's own goroutine, the scheduler claims it from c by the
// job's name and the instant it was scheduled for. It runs it only if the
// claim succeeds. A replica that finds the run claimed skips it and counts
// it in Stats.ClaimsLost. The claim waits at most the claim timeout
// ([WithClaimTimeout]) and is never made on the wheel's driver, unless
// [WithInline] puts the runs there; a failed claim is handled by the
// job's [ClaimPolicy].
//
// Every replica must name the same instants. Calendar specs do. With a
// Claimer, "@every d" schedules (and robfig/cron's Every given to
// AddSchedule) do too. They run at the instants whose Unix time is a
// multiple of d, not every d from when the job was added. Examples, UTC,
// whenever each replica started:
//   - "@every 10m" runs at :00, :10, :20 … of each hour.
//   - "@every 25m", which does not divide a day, falls where the grid
//     does: at 0:15, 0:40, 1:05 … on 2026-01-01.
//   - "@every 1500ms" runs to the nanosecond, at :00.0, :01.5, :03.0 … of
//     each minute.
//
// A Schedule of one's own (AddSchedule) must likewise be a function of
// its argument alone. Runs that Restore catches up are claimed as well, so that
// replicas restarting together run a missed run once.
//
// A replica that claims a run and then dies, or whose process is killed
// while the run is going, loses that run: no other replica runs it. That
// is the price of never releasing a claim; see ClaimPolicy for the other
// side of it. WithClaimer panics if c is nil or holds a nil pointer or
// func, whose Claim would fail at the first run.
func WithClaimer(c Claimer) Option {
	if nilarg.Is(c) {
		panic("cron: WithClaimer: nil claimer" + nilarg.Type(c))
	}
	return func(cfg *config) { cfg.claimer = c }
}

// WithClaimTimeout sets how long a run waits for its claim (default
// [DefaultClaimTimeout]); past it, the claim has failed and the job's
// ClaimPolicy decides. It has no effect without WithClaimer.
// WithClaimTimeout panics if d is not positive.
func WithClaimTimeout(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("cron: WithClaimTimeout called with non-positive timeout %v", d))
	}
	return func(c *config) { c.claimTimeout = d }
}

// WithClaimPolicy sets what the scheduler's jobs do with a run whose claim
// failed (default AtMostOnce); [OnClaimFailure] sets it for one job.
// WithClaimPolicy panics if p is neither AtMostOnce nor AtLeastOnce.
func WithClaimPolicy(p ClaimPolicy) Option {
	checkClaimPolicy("WithClaimPolicy", p)
	return func(c *config) { c.claimPolicy = p }
}

// WithClaimErrorHandler sets what is called, on the run's goroutine, with
// the job's name, the run's instant and the error of a claim that failed
// (default: logged at level Warn through the scheduler's logger, see
// WithLogger). The run is then skipped or run as the job's ClaimPolicy
// says. WithClaimErrorHandler panics if h is nil.
func WithClaimErrorHandler(h func(job string, at time.Time, err error)) Option {
	if h == nil {
		panic("cron: WithClaimErrorHandler: nil handler")
	}
	return func(c *config) { c.claimErr = h }
}

// LimitMode says what a run does that falls due when the scheduler's
// concurrency limit is reached ([WithConcurrencyLimit]).
type LimitMode uint8

const (
	// LimitWait makes the run wait for a slot: runs start in the order
	// they fell due, late.
	LimitWait LimitMode = iota
	// LimitSkip drops the run (counted in Stats.Limited): the job runs at
	// its next time.
	LimitSkip
)

// String returns "wait" or "skip".
func (m LimitMode) String() string {
	switch m {
	case LimitWait:
		return "wait"
	case LimitSkip:
		return "skip"
	}
	return fmt.Sprintf("LimitMode(%d)", uint8(m))
}

// WithConcurrencyLimit bounds the runs of all the scheduler's jobs going
// at once to n (default: no bound). A run that falls due when n are going
// waits for one to end (LimitWait) or is dropped (LimitSkip). A waiting
// run counts as running for its job's overlap policy; Stop drops the
// waiting runs. It costs O(1) a run. An n of 0 is no bound, the
// default. WithConcurrencyLimit panics if n is negative or m is unknown.
func WithConcurrencyLimit(n int, m LimitMode) Option {
	switch {
	case n < 0:
		panic(fmt.Sprintf("cron: WithConcurrencyLimit: negative limit %d", n))
	case m > LimitSkip:
		panic(fmt.Sprintf("cron: WithConcurrencyLimit called with unknown mode %v; use LimitWait or LimitSkip", m))
	}
	return func(c *config) { c.limit, c.limitMode = n, m }
}

// Hooks are called around each run of the scheduler's jobs, on the run's
// goroutine, for logging, tracing and alerting ([WithHooks]). Any may be
// nil. A hook that panics ends the run as a panic handler that panics
// does (see WithPanicHandler); Before's panic is reported as the job's.
type Hooks struct {
	// Before is called before the job, with the time the run was
	// scheduled for.
	Before func(job string, at time.Time)
	// After is called after a run that returned nil, with how long it
	// took.
	After func(job string, at time.Time, took time.Duration)
	// AfterError is called after a run that returned an error (see
	// Returning) or panicked (an error wrapping ErrPanicked), with the
	// error and how long the run took. Without it, errors are logged at
	// level Warn through the scheduler's logger.
	AfterError func(job string, at time.Time, took time.Duration, err error)
}

// WithHooks sets the hooks called around each run (default none). The
// duration they get is read on the wheel's clock, monotonic for the real
// one.
func WithHooks(h Hooks) Option {
	return func(c *config) { c.hooks = h }
}

func checkClaimPolicy(fn string, p ClaimPolicy) {
	if p > AtLeastOnce {
		panic(fmt.Sprintf("cron: %s called with unknown policy %v; use AtMostOnce or AtLeastOnce", fn, p))
	}
}

// WithLogger sets where the scheduler logs what it has no handler for: a
// panic of a job, a Claim or a Schedule's Next (unless WithPanicHandler is
// set) and a failed claim (unless WithClaimErrorHandler is). Without it
// the scheduler logs to slog.Default() at the time of logging, so that a
// program's slog.SetDefault applies. WithLogger panics if l is nil.
func WithLogger(l *slog.Logger) Option {
	if l == nil {
		panic("cron: WithLogger: nil logger")
	}
	return func(c *config) { c.logger = l }
}
