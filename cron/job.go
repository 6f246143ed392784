package cron

import (
	"runtime/debug"
	"time"

	"github.com/timewheel/timewheel"
)

// Job is one job of a Scheduler, made by Add or AddSchedule.
//
// The zero Job belongs to no scheduler: its Name is "", its Location UTC,
// its Next the zero time and its Stats zero. Every method panics on a nil
// *Job, naming itself: "cron: Next called on a nil *Job".
//
// A Job is safe for concurrent use.
type Job struct {
	s       *Scheduler
	name    string
	spec    string // "" for AddSchedule
	sched   Schedule
	loc     *time.Location
	f       Func
	overlap Overlap
	missed  Missed
	grace   time.Duration
	timer   *timewheel.Timer // set for next; its callback is fire

	claimPolicy ClaimPolicy

	next    time.Time   // guarded by s.mu; zero when no run is left
	running int         // guarded by s.mu; runs of this job in progress
	queue   []time.Time // guarded by s.mu; runs waiting, under Queue
	removed bool        // guarded by s.mu
	stats   Stats       // guarded by s.mu
}

// Stats counts what happened to a job's runs, or to all the runs of a
// scheduler.
type Stats struct {
	Runs    int // runs that returned or panicked
	Panics  int // runs that panicked
	Skipped int // runs dropped by the Skip policy
	Missed  int // missed runs dropped by the OnMissed policy (at most MaxCatchUp a catch-up)

	// With a Claimer (WithClaimer):
	ClaimsLost  int // runs another replica had claimed, not run here
	ClaimErrors int // claims that failed; the runs were skipped or run as the ClaimPolicy says
}

func (a *Stats) add(b Stats) {
	a.Runs += b.Runs
	a.Panics += b.Panics
	a.Skipped += b.Skipped
	a.Missed += b.Missed
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
	if j.loc == nil {
		return time.UTC
	}
	return j.loc
}

// Next returns the time of the job's next run, in its zone, or the zero
// time if it has none left, has been removed, its scheduler stopped or its
// wheel closed, or it is a zero Job. The complexity is O(1).
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
	return j.next.In(j.loc)
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

// fire is the job's timer callback: it sets the timer for the following
// run, then starts this one as the overlap policy says, or, for a run
// found more than the grace period late, as the missed-run policy says.
// The schedule's Next is called without the lock, so that it may call
// the scheduler; if meanwhile the job was removed, the scheduler stopped,
// or another fire or Restore moved the run (and reset the timer for it),
// fire leaves the job as it is.
func (j *Job) fire() {
	s := j.s
	s.mu.Lock()
	if j.removed || s.stopped || j.next.IsZero() {
		s.mu.Unlock()
		return
	}
	now := s.w.Now()
	if now.Before(j.next) { // a stale callback, a backward step, or Restore moved the run
		j.timer.Reset(j.next.Sub(now))
		s.mu.Unlock()
		return
	}
	at := j.next
	s.mu.Unlock()
	late := now.Sub(at) > j.grace
	c, p := j.following(at, now, late)
	if p != nil {
		// Reported once the job is in order: its runs end, and the run
		// at at goes ahead, so that a panic handler that panics in turn
		// leaves nothing half done.
		defer s.reportPanic(j.name, "Schedule.Next", p.v, p.stack)
	}
	s.mu.Lock()
	if j.removed || s.stopped || !j.next.Equal(at) {
		s.mu.Unlock()
		return
	}
	j.next = c.next
	if !c.next.IsZero() {
		j.timer.Reset(until(c.next, s.w.Now()))
	}
	start := false
	if late && j.missed == SkipMissed {
		j.countLocked(Stats{Missed: 1 + c.dropped})
	} else {
		start = j.admitLocked(at)
		j.queue = append(j.queue, c.missed...) // RunAll's: run after at, by its runner
		j.countLocked(Stats{Missed: c.dropped})
	}
	s.mu.Unlock()
	if start {
		s.launch(j, at)
	}
}

// following returns the job's next run after the run at, now being now.
// Runs missed while the process was stalled are not made up: if the
// schedule's next time has passed already, the job moves on to the first
// time after now. If the run at is late, following also returns the runs
// missed between at and now, up to MaxCatchUp with at: those to make up
// under RunAll, the others counted as dropped. A schedule that does not move
// forward ends the job's runs: following returns the zero time. So does
// one whose Next panics; following then returns the panic too, recovered.
func (j *Job) following(at, now time.Time, late bool) (c catchUp, p *recovered) {
	defer func() {
		if r := recover(); r != nil {
			c, p = catchUp{}, &recovered{r, debug.Stack()}
		}
	}()
	next := j.sched.Next(at.In(j.loc))
	for late && !next.IsZero() && !next.After(now) && 1+len(c.missed)+c.dropped < MaxCatchUp {
		if j.missed == RunAll {
			c.missed = append(c.missed, next)
		} else {
			c.dropped++
		}
		next = j.sched.Next(next.In(j.loc))
	}
	if !next.IsZero() && !next.After(now) {
		next = j.sched.Next(now.In(j.loc))
		if !next.After(now) {
			next = time.Time{}
		}
	}
	c.next = next
	return c, nil
}

// recovered is a value recovered from a panic, and the panic's stack.
type recovered struct {
	v     any
	stack []byte
}

// admitLocked applies the overlap policy to a run due at at and reports
// whether to start it now.
func (j *Job) admitLocked(at time.Time) bool {
	switch {
	case j.running == 0 || j.overlap == Allow:
		j.running++
		j.s.running++
		return true
	case j.overlap == Queue:
		j.queue = append(j.queue, at)
	default:
		j.countLocked(Stats{Skipped: 1})
	}
	return false
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
// by one. If a run does not return, because the panic handler panicked or
// the job called runtime.Goexit, the unwinding still ends the run: it is
// counted, the job and the scheduler no longer count it as running, and
// its queued runs are dropped, so that the job's later runs go on and Stop
// does not wait for it.
func (s *Scheduler) runs(j *Job, at time.Time) {
	called, returned := false, false
	defer func() {
		if !returned {
			s.mu.Lock()
			if called {
				j.countLocked(Stats{Runs: 1})
			}
			j.queue = nil
			s.doneLocked(j)
			s.mu.Unlock()
		}
	}()
	for {
		called = s.claim(j, at)
		if called {
			s.call(j, at)
		}
		s.mu.Lock()
		if called {
			j.countLocked(Stats{Runs: 1})
			called = false
		}
		if len(j.queue) > 0 {
			at = j.queue[0]
			j.queue = j.queue[1:]
			s.mu.Unlock()
			continue
		}
		s.doneLocked(j)
		s.mu.Unlock()
		returned = true
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
	j.stats.add(d)
	j.s.stats.add(d)
}

// doneLocked counts a run of j as ended.
func (s *Scheduler) doneLocked(j *Job) {
	j.running--
	s.running--
	if s.running == 0 {
		s.idle.Broadcast()
	}
}

// call runs f once, recovering a panic for the panic handler.
func (s *Scheduler) call(j *Job, at time.Time) {
	defer func() {
		if r := recover(); r != nil {
			s.count(j, Stats{Panics: 1})
			s.reportPanic(j.name, "job", r, nil)
		}
	}()
	s.started(at)
	j.f(s.ctx, at.In(j.loc))
}
