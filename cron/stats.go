package cron

import "time"

// LateAfter is how late a run must start, after the time it was scheduled
// for, to count in SchedulerStats.Late.
const LateAfter = time.Second

// SchedulerStats is what a Scheduler's jobs have done since New, all jobs
// together, those removed since included, and what they are doing now.
// Counters only grow; a rate is the difference of two readings.
// [Scheduler.Stats] returns it.
type SchedulerStats struct {
	// Stats sums the jobs' own counts (see [Stats] for each). A Skipped
	// that keeps growing is a job whose runs take longer than its period.
	Stats
	// Jobs is the number of jobs now.
	Jobs int
	// Running is the number of runs in progress now.
	Running int
	// Late counts runs that started LateAfter or more after the time they
	// were scheduled for: queued behind a run of the same job (Queue), or
	// held up by a stalled process or an overloaded machine. The wheel
	// itself starts runs within a tick of their time.
	Late int
}

// Stats returns what the scheduler's jobs have done and are doing. The
// complexity is O(1).
func (s *Scheduler) Stats() SchedulerStats {
	s.notNil("Stats")
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Jobs, st.Running = len(s.jobs), s.running
	return st
}

// started counts a run scheduled for at that starts now.
func (s *Scheduler) started(at time.Time) {
	if s.w.Now().Sub(at) < LateAfter { // on the wall clock, as at is
		return
	}
	s.mu.Lock()
	s.stats.Late++
	s.mu.Unlock()
}
