package cron

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/internal/lockcheck"
	"github.com/timewheel/timewheel/internal/stack"
)

// ErrStopped is returned by Add and AddSchedule, wrapped with the job's
// name, and by Restore, on a stopped Scheduler. A Scheduler whose wheel is
// closed is stopped too: its errors wrap [timewheel.ErrClosed] as well.
var ErrStopped = errors.New("cron: scheduler stopped")

// ErrDuplicate is returned, wrapped with the name, by Add and AddSchedule
// for a name already in use: names identify jobs in snapshots.
var ErrDuplicate = errors.New("cron: duplicate job name")

// ErrInRun is returned, wrapped with the number of runs still going, by
// Stop called from a run, which it does not wait for: see [Scheduler.Stop].
var ErrInRun = errors.New("cron: Stop called from a run, which it cannot wait for")

// Func is a job. at is the time the run was scheduled for, in the job's
// zone. ctx is cancelled when Stop gives up waiting for running jobs, or
// is called from a run.
type Func func(ctx context.Context, at time.Time)

// ErrPanicked is wrapped, with the value, by the error that
// Hooks.AfterError gets for a run that panicked.
var ErrPanicked = errors.New("cron: job panicked")

// Returning returns a Func that runs f and reports the error it returns:
// counted in Stats.Errors and given to Hooks.AfterError ([WithHooks]), or
// else logged at level Warn through the scheduler's logger. Called
// outside a scheduler's run, the Func drops the error. The complexity is
// O(1); it costs a context value a run.
func Returning(f func(ctx context.Context, at time.Time) error) Func {
	if f == nil {
		panic("cron: Returning: nil func")
	}
	return func(ctx context.Context, at time.Time) {
		err := f(ctx, at)
		if p, ok := ctx.Value(errSlot{}).(*error); ok {
			*p = err
		}
	}
}

// after calls the After or AfterError hook for a run of job that took
// took, or logs err if there is no AfterError hook.
func (s *Scheduler) after(job string, at time.Time, took time.Duration, err error) {
	switch {
	case err == nil:
		if s.hooks.After != nil {
			s.hooks.After(job, at, took)
		}
	case s.hooks.AfterError != nil:
		s.hooks.AfterError(job, at, took, err)
	case !errors.Is(err, ErrPanicked): // a panic is reported already
		logger(s.logger).Warn("cron: job failed", "job", job, "at", at, "took", took, "err", err)
	}
}

// Scheduler runs jobs on calendar schedules. Each job holds one timer of
// the wheel, set for its next run. A job due next month costs one
// pending timer and nothing else until then. A scheduler with jobs holds
// one more, the wall-clock check ([WithWallClockCheck]). See the package
// documentation.
//
// The zero Scheduler is ready to use: it is the Scheduler New() returns,
// on [timewheel.Default] in time.Local, made on its first use. A
// Scheduler must not be copied after first use.
//
// Every method panics on a nil *Scheduler, naming itself: "cron: Stop
// called on a nil *Scheduler".
//
// A Scheduler is safe for concurrent use.
type Scheduler struct {
	// Set by New, or on first use of a zero Scheduler, under mu; read
	// without it after that.
	w            *timewheel.Wheel
	loc          *time.Location
	inline       bool
	panicHandler func(string, any) // WithPanicHandler's; nil: log through logger
	logger       *slog.Logger      // WithLogger's; nil: slog.Default()
	ctx          context.Context   // passed to jobs and claims
	cancel       context.CancelFunc

	claimer      Claimer // nil: every run runs here
	claimTimeout time.Duration
	claimPolicy  ClaimPolicy // the jobs' default
	claimErr     func(job string, at time.Time, err error)
	wallCheck    time.Duration // 0: no check
	limit        int           // runs going at once; 0: no limit
	limitMode    LimitMode
	hooks        Hooks

	mu       sync.Mutex
	checker  *timewheel.Timer // guarded by mu; the wall-clock check, nil until the first job
	checking bool             // guarded by mu; checker is set
	waiting  []pendingRun     // guarded by mu; runs waiting for a slot under limit
	idle     sync.Cond        // signalled when running drops to 0; uses mu
	jobs     map[string]*Job  // guarded by mu; nil until the Scheduler is set up
	running  int              // guarded by mu; runs in progress
	stopped  bool             // guarded by mu
	stats    SchedulerStats   // guarded by mu; the counters, every job's
}

// New returns a Scheduler with no jobs, configured by opts. It starts no
// goroutine. New panics on a nil Option, naming its place.
func New(opts ...Option) *Scheduler {
	cfg := defaults()
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("cron: New: option %d is nil", i))
		}
		o(&cfg)
	}
	s := new(Scheduler)
	s.mu.Lock() // not shared yet: for the lock check
	s.setUpLocked(cfg)
	s.mu.Unlock()
	return s
}

func defaults() config {
	return config{loc: time.Local, claimTimeout: DefaultClaimTimeout, wallCheck: DefaultWallClockCheck}
}

// setUpLocked makes s the Scheduler cfg describes.
func (s *Scheduler) setUpLocked(cfg config) {
	lockcheck.Held(&s.mu, "Scheduler.setUpLocked")
	if cfg.wheel == nil {
		cfg.wheel = timewheel.Default()
	}
	s.w = cfg.wheel
	s.loc = cfg.loc
	s.inline = cfg.inline
	s.panicHandler = cfg.panicHandler
	s.logger = cfg.logger
	s.claimer = cfg.claimer
	s.claimTimeout = cfg.claimTimeout
	s.claimPolicy = cfg.claimPolicy
	s.claimErr = cfg.claimErr
	s.wallCheck = cfg.wallCheck
	s.limit, s.limitMode = cfg.limit, cfg.limitMode
	s.hooks = cfg.hooks
	if s.claimErr == nil {
		s.claimErr = logClaimError(cfg.logger)
	}
	s.jobs = make(map[string]*Job)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.idle.L = &s.mu
}

// notNil panics if s is nil, naming method, the exported method called.
func (s *Scheduler) notNil(method string) {
	if s == nil {
		panic("cron: " + method + " called on a nil *Scheduler")
	}
}

// readyLocked sets up a zero Scheduler as New() would, on its first use.
func (s *Scheduler) readyLocked() {
	lockcheck.Held(&s.mu, "Scheduler.readyLocked")
	if s.jobs == nil {
		s.setUpLocked(defaults())
	}
}

// ready is readyLocked for a caller that does not hold s.mu: after it,
// the fields New sets may be read without the lock.
func (s *Scheduler) ready() {
	s.mu.Lock()
	s.readyLocked()
	s.mu.Unlock()
}

// stoppedLocked returns ErrStopped, wrapped with the wheel's error if the
// wheel is closed, or nil if s runs.
func (s *Scheduler) stoppedLocked() error {
	lockcheck.Held(&s.mu, "Scheduler.stoppedLocked")
	if err := s.w.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	if s.stopped {
		return ErrStopped
	}
	return nil
}

// Add adds a job named name that runs f on the schedule of the cron
// expression spec (see Parse), in the zone of InZone, of a CRON_TZ= prefix
// of spec, or else of the scheduler. It returns an error wrapping:
//   - ErrSpec for a spec that does not parse;
//   - ErrZone for an unknown zone;
//   - ErrNever for a spec that never fires or not within five years;
//   - ErrOption for options that do not go together;
//   - ErrDuplicate for a name in use;
//   - ErrStopped after Stop or once the wheel is closed.
//
// Add panics if f or an option is nil. The complexity is O(1).
func (s *Scheduler) Add(name, spec string, f Func, opts ...JobOption) (*Job, error) {
	s.notNil("Add")
	if f == nil {
		panic(fmt.Sprintf("cron: Add: nil func for job %q", name))
	}
	cfg := jobOptions("Add", opts)
	s.ready()
	sched, loc, err := s.parseFor(name, spec, cfg)
	if err != nil {
		return nil, err
	}
	return s.add(name, spec, sched, loc, f, cfg)
}

// parseFor parses spec for the job name as Add does.
func (s *Scheduler) parseFor(name, spec string, cfg jobConfig) (Schedule, *time.Location, error) {
	var loc *time.Location // nil: the spec's own CRON_TZ=
	zone, _, named := splitZone(spec)
	switch {
	case cfg.zone != nil:
		var err error
		if loc, err = loadZone(*cfg.zone); err != nil {
			return nil, nil, fmt.Errorf("%w (job %q)", err, name)
		}
	case !named:
		loc = s.loc
	}
	sched, err := parse(spec, loc, cfg.skipDST)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (job %q)", err, name)
	}
	if loc == nil {
		loc, _ = loadZone(zone) // parse loaded it already
	}
	return sched, loc, nil
}

// AddSchedule adds a job named name that runs f on sched, whose Next is
// called with times in the zone of InZone or else of the scheduler. It
// returns the errors of Add, but for ErrSpec. AddSchedule panics if
// sched, f or an option is nil. The complexity is O(1) plus one
// call of sched.Next.
//
// Next is called without the scheduler's lock held, when the job is added
// and after each run: it may call the scheduler's methods. If Next panics
// in AddSchedule's own call, the panic goes up to the caller and no job is
// added. A later call is made on the wheel's executor when a run falls
// due. A panic there is recovered, as a job's is, and the scheduler goes
// on. The value goes to the panic handler ([WithPanicHandler]), and the
// run that fell due goes ahead. The job's runs end there, as for a
// schedule that does not move forward: its Next returns the zero time
// from then on.
func (s *Scheduler) AddSchedule(name string, sched Schedule, f Func, opts ...JobOption) (*Job, error) {
	s.notNil("AddSchedule")
	if sched == nil || f == nil {
		panic(fmt.Sprintf("cron: AddSchedule: nil schedule or func for job %q", name))
	}
	cfg := jobOptions("AddSchedule", opts)
	s.ready()
	loc, err := s.zoneFor(name, cfg)
	if err != nil {
		return nil, err
	}
	return s.add(name, "", sched, loc, f, cfg)
}

// zoneFor returns the zone of AddSchedule's job name.
func (s *Scheduler) zoneFor(name string, cfg jobConfig) (*time.Location, error) {
	if cfg.zone == nil {
		return s.loc, nil
	}
	loc, err := loadZone(*cfg.zone)
	if err != nil {
		return nil, fmt.Errorf("%w (job %q)", err, name)
	}
	return loc, nil
}

// jobOptions returns the configuration opts make; it panics on a nil
// option, naming method, the exported method given it.
func jobOptions(method string, opts []JobOption) jobConfig {
	var cfg jobConfig
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("cron: %s: job option %d is nil", method, i))
		}
		o(&cfg)
	}
	return cfg
}

// add registers the job name, running f on sched in loc, configured by
// cfg, and sets its timer for its first run. "@every" runs on a grid:
// through the time it is added, or with a Claimer through the Unix
// epoch, as does a constant delay of robfig's. The first run is computed
// before the lock is taken, so that a Schedule may call the scheduler.
func (s *Scheduler) add(name, spec string, sched Schedule, loc *time.Location, f Func, cfg jobConfig) (*Job, error) {
	now := s.w.Now()
	set, err := s.makeSet(name, spec, sched, loc, cfg, now)
	if err != nil {
		return nil, err
	}
	next, errNever := set.firstRun(name, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stoppedLocked(); err != nil {
		return nil, fmt.Errorf("%w (job %q)", err, name)
	}
	if s.jobs[name] != nil {
		return nil, fmt.Errorf("%w %q", ErrDuplicate, name)
	}
	if errNever != nil {
		return nil, errNever
	}
	j := &Job{s: s, name: name, f: f, set: set}
	j.timer = s.w.AfterFunc(time.Duration(math.MaxInt64), j.fire)
	j.setNextLocked(next, s.w.Now())
	s.jobs[name] = j
	s.checkLaterLocked()
	return j, nil
}

// Update changes the schedule and the options of the job named name, in one
// step: the job is never missing, and keeps its func, its counts and its
// runs in progress. spec and opts are read as Add reads them, and replace
// the job's former spec and options whole (a job of AddSchedule gets a
// spec). The next run is the first of the new schedule after now (a run
// whose time has come but that has not started, held by its jitter, is
// dropped); a limit of runs counts afresh. Update returns an error wrapping
// ErrNoJob for an unknown name, and the errors of Add, but for
// ErrDuplicate; on an error, the job is left as it was. The complexity is
// O(1) plus one call of the schedule's Next.
func (s *Scheduler) Update(name, spec string, opts ...JobOption) (*Job, error) {
	s.notNil("Update")
	cfg := jobOptions("Update", opts)
	s.ready()
	sched, loc, err := s.parseFor(name, spec, cfg)
	if err != nil {
		return nil, err
	}
	return s.update(name, spec, sched, loc, cfg)
}

// UpdateSchedule is Update for a job to run on sched, as AddSchedule
// adds one. It panics if sched is nil.
func (s *Scheduler) UpdateSchedule(name string, sched Schedule, opts ...JobOption) (*Job, error) {
	s.notNil("UpdateSchedule")
	if sched == nil {
		panic(fmt.Sprintf("cron: UpdateSchedule: nil schedule for job %q", name))
	}
	cfg := jobOptions("UpdateSchedule", opts)
	s.ready()
	loc, err := s.zoneFor(name, cfg)
	if err != nil {
		return nil, err
	}
	return s.update(name, "", sched, loc, cfg)
}

// update gives the job name the settings of sched in loc and cfg.
func (s *Scheduler) update(name, spec string, sched Schedule, loc *time.Location, cfg jobConfig) (*Job, error) {
	now := s.w.Now()
	set, err := s.makeSet(name, spec, sched, loc, cfg, now)
	if err != nil {
		return nil, err
	}
	next, errNever := set.firstRun(name, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stoppedLocked(); err != nil {
		return nil, fmt.Errorf("%w (job %q)", err, name)
	}
	j := s.jobs[name]
	if j == nil {
		return nil, fmt.Errorf("%w %q", ErrNoJob, name)
	}
	if errNever != nil {
		return nil, errNever
	}
	j.set, j.fired, j.afterRun = set, 0, false
	j.setNextLocked(next, s.w.Now())
	return j, nil
}

// RunNow runs the job named name now, once, beside its schedule, which
// it leaves as it is: at is now. The run goes through the job's overlap
// policy and the scheduler's concurrency limit, and with a Claimer it is
// claimed as any run, by its name and at. It returns an error wrapping
// ErrNoJob for an unknown name and ErrStopped after Stop. The complexity
// is O(1).
func (s *Scheduler) RunNow(name string) error {
	s.notNil("RunNow")
	s.mu.Lock()
	s.readyLocked()
	if err := s.stoppedLocked(); err != nil {
		s.mu.Unlock()
		return err
	}
	j := s.jobs[name]
	if j == nil {
		s.mu.Unlock()
		return fmt.Errorf("%w %q", ErrNoJob, name)
	}
	at := s.w.Now().Round(0)
	start, _ := j.admitLocked(at)
	s.mu.Unlock()
	if start {
		s.launch(j, at)
	}
	return nil
}

// Job returns the job named name and true, or nil and false if there is
// none. The complexity is O(1).
func (s *Scheduler) Job(name string) (*Job, bool) {
	s.notNil("Job")
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[name]
	return j, ok
}

// Jobs returns the jobs, sorted by name. The complexity is O(n log n).
func (s *Scheduler) Jobs() []*Job {
	s.notNil("Jobs")
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jobsLocked()
}

func (s *Scheduler) jobsLocked() []*Job {
	lockcheck.Held(&s.mu, "Scheduler.jobsLocked")
	js := make([]*Job, 0, len(s.jobs))
	for _, j := range s.jobs {
		js = append(js, j)
	}
	sort.Slice(js, func(a, b int) bool { return js[a].name < js[b].name })
	return js
}

// Remove removes the job named name, so that it runs no more, and reports
// whether there was one. A run in progress goes on; queued runs are
// dropped. The complexity is O(1).
func (s *Scheduler) Remove(name string) bool {
	s.notNil("Remove")
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[name]
	if ok {
		j.removed = true
		j.timer.Stop()
		j.queue = nil
		delete(s.jobs, name)
	}
	return ok
}

// Stop stops the scheduler: no run starts after it, queued runs are
// dropped, and it waits for the runs in progress to return. If ctx is done
// first, Stop cancels the context passed to the jobs and returns an error
// wrapping ctx.Err(); the runs are left to end on their own. A nil ctx is
// context.Background(): Stop waits as long as the runs take. Calling Stop
// again waits again. The complexity is O(n) in the jobs, plus the wait.
//
// Called on the goroutine of a run, Stop does not wait, since a run it
// waited for could be its caller. That holds for a run of this scheduler
// or of any other: from a job, or from the panic handler, the Claimer or
// the claim error handler, which the run calls. Stop then stops the
// scheduler, cancels the context passed to the jobs, and returns at once.
// It returns nil if no run of this scheduler is in progress. Else it
// returns an error wrapping ErrInRun with their number, the caller's
// included. A job that wants to wait for the others calls Stop on a
// goroutine of its own and returns.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.notNil("Stop")
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	s.readyLocked()
	if !s.stopped {
		s.stopped = true
		for _, j := range s.jobs {
			j.timer.Stop()
			j.queue = nil
		}
		if s.checker != nil {
			s.checker.Stop()
			s.checking = false
		}
		for _, p := range s.waiting {
			p.j.running--
		}
		s.waiting = nil
	}
	if s.running > 0 && inRun() {
		running := s.running
		s.mu.Unlock()
		s.cancel()
		return fmt.Errorf("%w: %d runs still going", ErrInRun, running)
	}
	wake := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.idle.Broadcast()
		s.mu.Unlock()
	})
	for s.running > 0 && ctx.Err() == nil {
		s.idle.Wait()
	}
	running := s.running
	s.mu.Unlock()
	wake()
	s.cancel()
	if running > 0 {
		return fmt.Errorf("cron: Stop: %d runs still going: %w", running, ctx.Err())
	}
	return nil
}

// runsFunc is the name of Scheduler.runs, the function at the bottom of
// every run, as stack traces give it.
var runsFunc = stack.FuncName((*Scheduler).runs)

// inRun reports whether the calling goroutine is running a run of a
// Scheduler, any: whether Scheduler.runs is on its stack (see package
// internal/stack). The complexity is O(d) in the depth of the stack.
func inRun() bool { return stack.Has(runsFunc) }

// reportPanic gives v, the value of a panic recovered from what ("job",
// "Claim" or "Schedule.Next") of job, to the panic handler. With none
// set, it logs the panic and stack at level Error through the scheduler's
// logger, or slog.Default() at the time of the panic. A nil stack is the
// caller's: the deferred function that recovered v calls it so.
func (s *Scheduler) reportPanic(job, what string, v any, stack []byte) {
	if s.panicHandler != nil {
		s.panicHandler(job, v)
		return
	}
	if stack == nil {
		stack = debug.Stack()
	}
	logger(s.logger).Error("cron: "+what+" panicked", "job", job, "panic", v, "stack", string(stack))
}

// logger returns l, or slog.Default() if l is nil.
func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
