package cron

import (
	"context"
	"errors"
	"fmt"
	"log"
	"runtime/debug"
	"sort"
	"sync"
	"time"
	_ "time/tzdata" // InZone works on machines without zone files

	"github.com/timewheel/timewheel"
)

// ErrStopped is returned by Add and AddSchedule on a stopped Scheduler.
var ErrStopped = errors.New("cron: scheduler stopped")

// ErrDuplicate is returned, wrapped with the name, by Add and AddSchedule
// for a name already in use: names identify jobs in snapshots.
var ErrDuplicate = errors.New("cron: duplicate job name")

// Func is a job. at is the time the run was scheduled for, in the job's
// zone. ctx is cancelled when Stop gives up waiting for running jobs.
type Func func(ctx context.Context, at time.Time)

// Scheduler runs jobs on calendar schedules. Each job holds one timer of
// the wheel, set for its next run, so a job due next month costs one
// pending timer and nothing else until then; see the package
// documentation.
//
// A Scheduler is safe for concurrent use.
type Scheduler struct {
	w            *timewheel.Wheel
	loc          *time.Location
	inline       bool
	panicHandler func(string, any)
	ctx          context.Context // passed to jobs and claims
	cancel       context.CancelFunc

	claimer      Claimer // nil: every run runs here
	claimTimeout time.Duration
	claimPolicy  ClaimPolicy // the jobs' default
	claimErr     func(job string, at time.Time, err error)

	mu      sync.Mutex
	idle    sync.Cond       // signalled when running drops to 0; uses mu
	jobs    map[string]*Job // guarded by mu
	running int             // guarded by mu; runs in progress
	stopped bool            // guarded by mu
	stats   SchedulerStats  // guarded by mu; the counters, every job's
}

// New returns a Scheduler with no jobs, configured by opts. It starts no
// goroutine.
func New(opts ...Option) *Scheduler {
	cfg := config{loc: time.Local, claimTimeout: DefaultClaimTimeout, claimErr: logClaimError}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.wheel == nil {
		cfg.wheel = timewheel.Default()
	}
	if cfg.panicHandler == nil {
		cfg.panicHandler = logPanic
	}
	s := &Scheduler{
		w:            cfg.wheel,
		loc:          cfg.loc,
		inline:       cfg.inline,
		panicHandler: cfg.panicHandler,
		claimer:      cfg.claimer,
		claimTimeout: cfg.claimTimeout,
		claimPolicy:  cfg.claimPolicy,
		claimErr:     cfg.claimErr,
		jobs:         make(map[string]*Job),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.idle.L = &s.mu
	return s
}

// Add adds a job named name that runs f on the schedule of the cron
// expression spec (see Parse), in the zone of InZone, of a CRON_TZ= prefix
// of spec, or else of the scheduler. It returns an error wrapping ErrSpec
// for a spec that does not parse, ErrZone for an unknown zone, ErrNever
// for a spec that never fires, ErrDuplicate for a name in use and
// ErrStopped after Stop. Add panics if f is nil. The complexity is O(1).
func (s *Scheduler) Add(name, spec string, f Func, opts ...JobOption) (*Job, error) {
	if f == nil {
		panic(fmt.Sprintf("cron: Add: nil func for job %q", name))
	}
	cfg := jobOptions(opts)
	var loc *time.Location
	if cfg.zone != "" {
		var err error
		if loc, err = loadZone(cfg.zone); err != nil {
			return nil, fmt.Errorf("%w (job %q)", err, name)
		}
	} else if zone, _ := splitZone(spec); zone == "" {
		loc = s.loc
	}
	sched, err := Parse(spec, loc)
	if err != nil {
		return nil, fmt.Errorf("%w (job %q)", err, name)
	}
	if loc == nil { // the spec's own CRON_TZ=
		zone, _ := splitZone(spec)
		loc, _ = loadZone(zone) // Parse loaded it already
	}
	return s.add(&Job{name: name, spec: spec, sched: sched, loc: loc, f: f}, cfg)
}

// AddSchedule adds a job named name that runs f on sched, whose Next is
// called with times in the zone of InZone or else of the scheduler. It
// returns the errors of Add, but for ErrSpec. AddSchedule panics if sched
// or f is nil. The complexity is O(1) plus one call of sched.Next.
func (s *Scheduler) AddSchedule(name string, sched Schedule, f Func, opts ...JobOption) (*Job, error) {
	if sched == nil || f == nil {
		panic(fmt.Sprintf("cron: AddSchedule: nil schedule or func for job %q", name))
	}
	cfg := jobOptions(opts)
	loc := s.loc
	if cfg.zone != "" {
		var err error
		if loc, err = loadZone(cfg.zone); err != nil {
			return nil, fmt.Errorf("%w (job %q)", err, name)
		}
	}
	return s.add(&Job{name: name, sched: sched, loc: loc, f: f}, cfg)
}

func jobOptions(opts []JobOption) jobConfig {
	var cfg jobConfig
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// add registers j, configured by cfg, and sets its timer for its first
// run. With a Claimer, a constant delay runs on the epoch-aligned grid.
func (s *Scheduler) add(j *Job, cfg jobConfig) (*Job, error) {
	j.s = s
	j.overlap = cfg.overlap
	j.claimPolicy = s.claimPolicy
	if cfg.claimPolicy != nil {
		j.claimPolicy = *cfg.claimPolicy
	}
	if s.claimer != nil {
		j.sched = onGrid(j.sched)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
		return nil, ErrStopped
	case s.jobs[j.name] != nil:
		return nil, fmt.Errorf("%w %q", ErrDuplicate, j.name)
	}
	now := s.w.Now()
	j.next = j.sched.Next(now.In(j.loc))
	if !j.next.After(now) {
		return nil, fmt.Errorf("%w (job %q)", ErrNever, j.name)
	}
	j.timer = s.w.AfterFunc(j.next.Sub(now), j.fire)
	s.jobs[j.name] = j
	return j, nil
}

// Job returns the job named name and true, or nil and false if there is
// none. The complexity is O(1).
func (s *Scheduler) Job(name string) (*Job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[name]
	return j, ok
}

// Jobs returns the jobs, sorted by name. The complexity is O(n log n).
func (s *Scheduler) Jobs() []*Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jobsLocked()
}

func (s *Scheduler) jobsLocked() []*Job {
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
// wrapping ctx.Err(); the runs are left to end on their own. Stop must not
// be called from a job, which would wait for itself. Calling Stop again
// waits again. The complexity is O(n) in the jobs, plus the wait.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		for _, j := range s.jobs {
			j.timer.Stop()
			j.queue = nil
		}
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

func logPanic(job string, v any) {
	log.Printf("cron: job %q panicked: %v\n%s", job, v, debug.Stack())
}
