package cron

import (
	"time"

	"github.com/timewheel/timewheel/internal/lockcheck"
)

// Keeping to the wall clock. A job's next run is a wall-clock instant,
// and its timer waits for it a duration of the monotonic clock, computed
// when it was set. A step of the wall clock, or a suspend (in which the
// monotonic clock stands still), leaves that duration as it was. After a
// forward step the run would come as late as the step. After a backward
// one it would come early; fire catches that (it re-arms when woken
// before the run's time). While it has jobs, the scheduler holds one
// more timer, the check. It wakes every wallCheck and re-reads the wall
// clock. It sets afresh the timer of every job due before the next check,
// from the wall clock as it reads then: at once for a run whose time has
// passed. A job due later keeps its timer; a check will come before its
// time. The check wakes an idle scheduler once a wallCheck and costs O(n)
// in the jobs. It bounds how late a run can be after a step or a resume
// to wallCheck plus a tick. It also bounds the drift of a slewed clock to
// what wallCheck gathers.

// checkLaterLocked sets the check for one period from now, unless it is
// set, turned off or the scheduler stopped.
func (s *Scheduler) checkLaterLocked() {
	lockcheck.Held(&s.mu, "Scheduler.checkLaterLocked")
	if s.checking || s.wallCheck <= 0 || s.stopped {
		return
	}
	s.checking = true
	if s.checker == nil {
		s.checker = s.w.AfterFunc(s.wallCheck, s.checkWall)
		return
	}
	s.checker.Reset(s.wallCheck)
}

// checkWall is the check's callback: it sets the timers of the jobs due
// before the next check from the wall clock, and the check again while
// there are jobs.
func (s *Scheduler) checkWall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checking = false
	if s.stopped || len(s.jobs) == 0 {
		return
	}
	now := s.w.Now()
	for _, j := range s.jobs {
		if j.next.IsZero() {
			continue
		}
		if d := j.next.Add(j.delay).Sub(now); d <= s.wallCheck {
			j.timer.Reset(max(d, 0))
		}
	}
	s.checkLaterLocked()
}

// until returns how long a run's timer waits for next, now being now: at
// least a nanosecond, which the wheel rounds up to its next tick. A next
// may be already past, because the clock moved on (a few nanoseconds)
// between the reading next was computed from and now. It so runs at the
// next tick rather than at once, again and again within one tick.
func until(next, now time.Time) time.Duration {
	return max(next.Sub(now), time.Nanosecond)
}
