package cron

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/internal/lockcheck"
)

// Job is one job of a Scheduler, made by Add or AddSchedule.
//
// The zero Job belongs to no scheduler: its Name is "", its Location UTC,
// its Next the zero time and its Stats zero. Every method panics on a nil
// *Job, naming itself: "cron: Next called on a nil *Job".
//
// A Job is safe for concurrent use.
type Job struct {
	s     *Scheduler
	name  string
	f     Func
	timer *timewheel.Timer // set for next plus delay; its callback is fire

	set      *jobSet       // guarded by s.mu; replaced whole by Update, never changed
	next     time.Time     // guarded by s.mu; zero when no run is left, or while a run counted from its end goes
	delay    time.Duration // guarded by s.mu; next's jitter: the timer waits for next+delay
	fired    int           // guarded by s.mu; instants of the schedule fallen due, for WithLimitRuns
	afterRun bool          // guarded by s.mu; the next run is set when the running one ends (WithIntervalFromCompletion)
	running  int           // guarded by s.mu; runs of this job in progress, or waiting for a slot (WithConcurrencyLimit)
	queue    []time.Time   // guarded by s.mu; runs waiting, under Queue or RunAll
	removed  bool          // guarded by s.mu
	stats    Stats         // guarded by s.mu
}

// Stats counts what happened to a job's runs, or to all the runs of a
// scheduler.
type Stats struct {
	Runs    int // runs that returned or panicked
	Panics  int // runs that panicked
	Errors  int // runs that returned an error (see Returning)
	Skipped int // runs dropped by the Skip policy
	Missed  int // times passed without a run: dropped by the OnMissed policy, past MaxCatchUp, or passed while a run waited (see OnMissed)
	Limited int // runs dropped by the scheduler's concurrency limit (LimitSkip)

	// With a Claimer (WithClaimer):
	ClaimsLost  int // runs another replica had claimed, not run here
	ClaimErrors int // claims that failed; the runs were skipped or run as the ClaimPolicy says
}

func (a *Stats) add(b Stats) {
	a.Runs += b.Runs
	a.Panics += b.Panics
	a.Errors += b.Errors
	a.Skipped += b.Skipped
	a.Missed += b.Missed
	a.Limited += b.Limited
	a.ClaimsLost += b.ClaimsLost
	a.ClaimErrors += b.ClaimErrors
}

// Name returns the job's name. The complexity is O(1).
func (j *Job) Name() string {
	j.notNil("Name")
	return j.name
}

// notNil panics if j is nil, naming method, the exported method called.
func (j *Job) notNil(method string) {
	if j == nil {
		panic("cron: " + method + " called on a nil *Job")
	}
}

// Location returns the job's time zone, UTC for a zero Job. The
// complexity is O(1).
func (j *Job) Location() *time.Location {
	j.notNil("Location")
	if j.s == nil {
		return time.UTC
	}
	j.s.mu.Lock()
	defer j.s.mu.Unlock()
	return j.set.loc
}

// Next returns the time of the job's next run, in its zone. It returns
// the zero time if the job has none left, has been removed, its scheduler
// stopped or its wheel closed, or it is a zero Job. A job whose interval
// counts from the end of its runs ([WithIntervalFromCompletion]) has none
// while a run is going, either. The time is the schedule's, without the
// run's jitter. The complexity is O(1).
func (j *Job) Next() time.Time {
	j.notNil("Next")
	if j.s == nil {
		return time.Time{}
	}
	j.s.mu.Lock()
	defer j.s.mu.Unlock()
	if j.removed || j.s.stoppedLocked() != nil || j.next.IsZero() {
		return time.Time{}
	}
	return j.next.In(j.set.loc)
}

// NextRuns returns the job's next n runs, in its zone, as Next would
// return them one after the other: fewer if it has fewer left, none where
// Next returns the zero time. For a job whose interval counts from the
// end of its runs, the times after the first are those of runs that take
// no time and have no jitter. It calls the schedule's Next n-1 times,
// without the scheduler's lock. NextRuns panics if n is negative. The
// complexity is O(n).
func (j *Job) NextRuns(n int) []time.Time {
	j.notNil("NextRuns")
	if n < 0 {
		panic(fmt.Sprintf("cron: NextRuns called with negative count %d", n))
	}
	next := j.Next()
	if next.IsZero() || n == 0 {
		return nil
	}
	j.s.mu.Lock()
	set, limit := j.set, j.set.limit-j.fired
	j.s.mu.Unlock()
	if set.limit > 0 {
		n = min(n, limit)
	}
	runs := []time.Time{next}
	for len(runs) < n {
		t := set.sched.Next(next)
		if set.every > 0 {
			t = set.afterEnd(next) // from the end of runs that take no time
		}
		if !t.After(next) {
			break
		}
		next = t.In(set.loc)
		runs = append(runs, next)
	}
	return runs
}

// Stats returns the job's counts so far, zero for a zero Job. The
// complexity is O(1).
func (j *Job) Stats() Stats {
	j.notNil("Stats")
	if j.s == nil {
		return Stats{}
	}
	j.s.mu.Lock()
	defer j.s.mu.Unlock()
	return j.stats
}

// fire is the job's timer callback. It sets the timer for the following
// run, then starts this one as the overlap policy says. A run found more
// than the grace period late starts as the missed-run policy says.
// The schedule's Next is called without the lock, so that it may call
// the scheduler. Meanwhile the job may have been removed or updated, the
// scheduler stopped, or another fire or Restore moved the run (and reset
// the timer for it); fire then leaves the job as it is.
func (j *Job) fire() {
	s := j.s
	s.mu.Lock()
	if j.removed || s.stopped || j.next.IsZero() {
		s.mu.Unlock()
		return
	}
	now := s.w.Now()
	if due := j.next.Add(j.delay); now.Before(due) { // a stale callback, a backward step, or Restore moved the run
		j.timer.Reset(due.Sub(now))
		s.mu.Unlock()
		return
	}
	at, set, delay := j.next, j.set, j.delay
	s.mu.Unlock()
	late := now.Sub(at.Add(delay)) > set.grace
	c, p := set.following(at, now, late)
	if p != nil {
		// Reported once the job is in order: its runs end, and the run
		// at at goes ahead, so that a panic handler that panics in turn
		// leaves nothing half done.
		defer s.reportPanic(j.name, "Schedule.Next", p.v, p.stack)
	}
	s.mu.Lock()
	if j.removed || s.stopped || !j.next.Equal(at) || j.set != set {
		s.mu.Unlock()
		return
	}
	c = j.limitLocked(c)
	if set.every > 0 && !c.next.IsZero() {
		c.next = time.Time{} // set when the run ends
		j.afterRun = true
	}
	j.setNextLocked(c.next, s.w.Now())
	start, admitted := false, false
	if late && set.missed == SkipMissed {
		j.countLocked(Stats{Missed: 1 + c.dropped})
	} else {
		start, admitted = j.admitLocked(at)
		if admitted {
			j.queue = append(j.queue, c.missed...) // RunAll's: run after at, by its runner
		} else {
			c.dropped += len(c.missed)
		}
		j.countLocked(Stats{Missed: c.dropped})
	}
	if j.afterRun && !admitted { // no run will end to set the next
		j.afterRun = false
		j.setNextLocked(set.afterEnd(s.w.Now()), s.w.Now())
	}
	s.mu.Unlock()
	if start {
		s.launch(j, at)
	}
}

// setNextLocked makes next the job's next run, draws its jitter and sets
// the timer for it, now being now; a zero next stops the timer.
func (j *Job) setNextLocked(next, now time.Time) {
	lockcheck.Held(&j.s.mu, "Job.setNextLocked")
	j.next = next
	j.delay = 0
	if next.IsZero() {
		j.timer.Stop()
		return
	}
	if jit := j.set.jitter; jit > 0 {
		j.delay = time.Duration(rand.Int64N(int64(jit)))
	}
	j.timer.Reset(until(next.Add(j.delay), now))
}

// limitLocked counts the run at and the runs c made up or dropped against
// the job's limit (WithLimitRuns), and cuts c short at it: no next run
// once the limit is reached.
func (j *Job) limitLocked(c catchUp) catchUp {
	lockcheck.Held(&j.s.mu, "Job.limitLocked")
	limit := j.set.limit
	if limit == 0 {
		return c
	}
	j.fired++
	left := max(limit-j.fired, 0)
	c.missed = c.missed[:min(len(c.missed), left)]
	c.dropped = min(c.dropped, left-len(c.missed))
	j.fired += len(c.missed) + c.dropped
	if j.fired >= limit {
		c.next = time.Time{}
	}
	return c
}

// catchUp is what a fire found due: the runs missed after the first, to
// make up, how many more were dropped, and the next run after now.
type catchUp struct {
	missed  []time.Time
	dropped int
	next    time.Time
}

// following returns the job's next run after the run at, now being now.
// Runs missed while the process was stalled are not made up: if the
// schedule's next time has passed already, the job moves on to the first
// time after now. The times it passes over are counted as dropped. If the
// run at is late and the policy is RunAll, following returns the runs to
// make up, up to MaxCatchUp with at. A schedule that does not move
// forward ends the job's runs: following returns the zero time. It does
// the same for a schedule whose Next panics, and returns the panic too,
// recovered. A job whose interval counts from the end of its runs has
// its next time set when the run ends: following only says whether it
// has one.
func (set *jobSet) following(at, now time.Time, late bool) (c catchUp, p *recovered) {
	defer func() {
		if r := recover(); r != nil {
			c, p = catchUp{}, &recovered{r, debug.Stack()}
		}
	}()
	if set.every > 0 {
		c.next = set.afterEnd(now)
		return c, nil
	}
	next := set.sched.Next(at.In(set.loc))
	for late && set.missed == RunAll && !next.IsZero() && !next.After(now) && 1+len(c.missed) < MaxCatchUp {
		c.missed = append(c.missed, next)
		next = set.sched.Next(next.In(set.loc))
	}
	if !next.IsZero() && !next.After(now) {
		c.dropped, next = passed(set.sched, next, now, set.loc)
	}
	c.next = next
	return c, nil
}

// counter is a schedule that counts its own times: passed's for it.
type counter interface {
	count(first, now time.Time, loc *time.Location) (int, time.Time)
}

// maxPassed bounds how many times passed counts one by one.
const maxPassed = 1 << 20

// passed counts the times of sched from first, one of them, through now,
// and returns the count and the first time after now: the zero time if
// sched does not move forward. It counts a grid ("@every") by division,
// and any other schedule one Next at a time, up to maxPassed; past that
// it stops counting and asks Next for the first time after now.
func passed(sched Schedule, first, now time.Time, loc *time.Location) (n int, next time.Time) {
	if c, ok := sched.(counter); ok {
		return c.count(first, now, loc)
	}
	for next = first; !next.IsZero() && !next.After(now) && n < maxPassed; n++ {
		t := sched.Next(next.In(loc))
		if !t.IsZero() && !t.After(next) {
			return n + 1, time.Time{}
		}
		next = t
	}
	if !next.IsZero() && !next.After(now) {
		next = sched.Next(now.In(loc))
	}
	if !next.After(now) {
		next = time.Time{}
	}
	return n, next
}

// recovered is a value recovered from a panic, and the panic's stack.
type recovered struct {
	v     any
	stack []byte
}

// admitLocked applies the overlap policy, then the scheduler's
// concurrency limit, to a run due at at. It reports whether to start it
// now, and whether it is admitted at all: started, queued behind the
// job's running run, or waiting for a slot.
func (j *Job) admitLocked(at time.Time) (start, admitted bool) {
	lockcheck.Held(&j.s.mu, "Job.admitLocked")
	s := j.s
	switch {
	case j.running > 0 && j.set.overlap == Queue:
		j.queue = append(j.queue, at)
		return false, true
	case j.running > 0 && j.set.overlap != Allow:
		j.countLocked(Stats{Skipped: 1})
		return false, false
	case s.limit > 0 && s.running >= s.limit && s.limitMode == LimitSkip:
		j.countLocked(Stats{Limited: 1})
		return false, false
	case s.limit > 0 && s.running >= s.limit:
		j.running++ // for the overlap policy, it runs already
		s.waiting = append(s.waiting, pendingRun{j, at})
		return false, true
	}
	j.running++
	s.running++
	return true, true
}

// pendingRun is a run waiting for a slot under the scheduler's
// concurrency limit.
type pendingRun struct {
	j  *Job
	at time.Time
}

// launch runs j's run at at, inline or on a goroutine of its own.
func (s *Scheduler) launch(j *Job, at time.Time) {
	if s.inline {
		s.runs(j, at)
		return
	}
	go s.runs(j, at)
}

// runs claims and runs the job at at, then any runs queued meanwhile, one
// by one. A run may not return, because the panic handler or a hook
// panicked or the job called runtime.Goexit. The unwinding still ends the
// run: it is counted, the job and the scheduler no longer count it as
// running, and its queued runs are dropped. The job's later runs go on
// and Stop does not wait for it. A run that ends hands its slot to
// the first run waiting for one (WithConcurrencyLimit).
func (s *Scheduler) runs(j *Job, at time.Time) {
	called, returned := false, false
	defer func() {
		if !returned {
			s.mu.Lock()
			if called {
				j.countLocked(Stats{Runs: 1})
			}
			j.queue = nil
			next := s.doneLocked(j)
			s.mu.Unlock()
			if next.j != nil {
				go s.runs(next.j, next.at) // not inline, inside a panic's unwinding
			}
		}
	}()
	for {
		s.mu.Lock()
		set := j.set
		s.mu.Unlock()
		called = s.claim(j, set, at)
		if called {
			s.call(j, set, at)
		}
		s.mu.Lock()
		if called {
			j.countLocked(Stats{Runs: 1})
			called = false
		}
		if j.afterRun && !j.removed && !s.stopped {
			j.afterRun = false
			if j.set == set {
				j.setNextLocked(set.afterEnd(s.w.Now()), s.w.Now())
			}
		}
		if len(j.queue) > 0 {
			at = j.queue[0]
			j.queue = j.queue[1:]
			s.mu.Unlock()
			continue
		}
		next := s.doneLocked(j)
		s.mu.Unlock()
		returned = true
		if next.j != nil {
			s.launch(next.j, next.at)
		}
		return
	}
}

// count adds d to the counts of j and of its scheduler.
func (s *Scheduler) count(j *Job, d Stats) {
	s.mu.Lock()
	j.countLocked(d)
	s.mu.Unlock()
}

// countLocked adds d to the counts of j and of its scheduler.
func (j *Job) countLocked(d Stats) {
	lockcheck.Held(&j.s.mu, "Job.countLocked")
	j.stats.add(d)
	j.s.stats.add(d)
}

// doneLocked counts a run of j as ended, and returns the first run
// waiting for a slot, now counted as running, for the caller to launch;
// the zero pendingRun if none.
func (s *Scheduler) doneLocked(j *Job) pendingRun {
	lockcheck.Held(&s.mu, "Scheduler.doneLocked")
	j.running--
	s.running--
	for len(s.waiting) > 0 && s.running < s.limit {
		p := s.waiting[0]
		s.waiting = s.waiting[1:]
		if p.j.removed || s.stopped {
			p.j.running--
			continue
		}
		s.running++
		return p
	}
	if s.running == 0 {
		s.idle.Broadcast()
	}
	return pendingRun{}
}

// errSlot is the context key under which a run's context holds where a
// job made by Returning puts its error.
type errSlot struct{}

// call runs f once, between the hooks, recovering a panic for the panic
// handler, and counts an error it returns (see Returning).
func (s *Scheduler) call(j *Job, set *jobSet, at time.Time) {
	at = at.In(set.loc)
	var err error
	start := s.w.Now()
	defer func() {
		r := recover()
		if r != nil {
			s.count(j, Stats{Panics: 1})
			s.reportPanic(j.name, "job", r, nil)
			err = fmt.Errorf("%w: %v", ErrPanicked, r)
		}
		if err != nil && r == nil {
			s.count(j, Stats{Errors: 1})
		}
		s.after(j.name, at, s.w.Since(start), err)
	}()
	s.started(at)
	if s.hooks.Before != nil {
		s.hooks.Before(j.name, at)
	}
	ctx := context.WithValue(s.ctx, errSlot{}, &err)
	j.f(ctx, at)
}
