package cron

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/internal/nilarg"
)

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
// (default [DefaultWallClockCheck]). So its jobs keep to the wall clock
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
// WithLogger). The run is then skipped or
// run as the job's ClaimPolicy says. WithClaimErrorHandler panics if h is
// nil.
func WithClaimErrorHandler(h func(job string, at time.Time, err error)) Option {
	if h == nil {
		panic("cron: WithClaimErrorHandler: nil handler")
	}
	return func(c *config) { c.claimErr = h }
}

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
// drawn anew for each run (default 0, no jitter). So jobs of many
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
// dropped as missed. So replicas with the same limit end at the same
// time. Runs made up by RunAll count, and are cut at the limit. RunNow
// does not count. The count is kept in snapshots. An n of 0 is no limit,
// the default. WithLimitRuns panics if n is negative.
func WithLimitRuns(n int) JobOption {
	if n < 0 {
		panic(fmt.Sprintf("cron: WithLimitRuns: negative limit %d", n))
	}
	return func(c *jobConfig) { c.limit = n }
}

// WithIntervalFromCompletion counts an "@every d" job's period from the
// end of each run instead of on a grid: the next run is d after the last
// returned, so runs never overlap however long they take. Next returns
// the zero time while a run goes. A stop date ([WithStopAt]) and a limit
// of runs ([WithLimitRuns]) hold as on a grid. It is for "@every" specs and robfig's
// constant delays (Every) only, and not for schedulers with a Claimer,
// whose replicas must name the same instants: Add returns an error
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

func checkClaimPolicy(fn string, p ClaimPolicy) {
	if p > AtLeastOnce {
		panic(fmt.Sprintf("cron: %s called with unknown policy %v; use AtMostOnce or AtLeastOnce", fn, p))
	}
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
