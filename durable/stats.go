package durable

import (
	"sync/atomic"
	"time"
)

// latenessBounds are the upper bounds of Stats.Lateness's buckets.
var latenessBounds = [...]time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
}

// LatenessBounds returns the upper bounds of Stats.Lateness's buckets:
// 1, 2, 5, 10, 20, 50, 100, 200 and 500 ms, 1, 2, 5 and 10 s.
func LatenessBounds() [len(latenessBounds)]time.Duration { return latenessBounds }

// Stats are a Queue's counts since New. The counts of attempts are this
// replica's, not the whole queue's.
type Stats struct {
	Scheduled uint64 // jobs Schedule and ScheduleAfter added
	Claims    uint64 // claim calls the worker made
	Claimed   uint64 // attempts the worker leased (ahead of their due time, or when due)
	Ran       uint64 // attempts that returned nil and were deleted from the store
	Retried   uint64 // attempts that failed and left the job due again
	Dead      uint64 // attempts that failed the job's last attempt
	LeaseLost uint64 // attempts whose lease had gone when they renewed or ended
	Canceled  uint64 // attempts whose job Cancel deleted, or Reschedule took back, while the worker held it
	TimedOut  uint64 // attempts that ran past their kind's Timeout (also counted as Retried or Dead)
	Panics    uint64 // attempts whose handler panicked (also counted as Retried or Dead)
	Released  uint64 // attempts handed back unstarted (a pause, Close): not counted as failures
	Errors    uint64 // calls to Redis that failed, the worker's and the callers' (see WithErrorHandler)
	Running   int    // attempts running now
	Held      int    // jobs leased ahead, waiting in the worker's wheel for their due time
	// Lateness counts the attempts by how late their handler started
	// after the job came due: Lateness[i] those at most
	// LatenessBounds()[i] late and over the bound before it; the last,
	// those later than every bound.
	Lateness [len(latenessBounds) + 1]uint64
}

// Quantile returns the upper bound of the Lateness bucket that holds the
// q quantile of the attempts (0 < q <= 1), or -1 if it is past the last
// bound, or 0 with no attempts. It costs O(len(latenessBounds)).
func (s Stats) Quantile(q float64) time.Duration {
	var n uint64
	for _, c := range s.Lateness {
		n += c
	}
	if n == 0 {
		return 0
	}
	want := uint64(q*float64(n) + 0.5)
	var seen uint64
	for i, c := range s.Lateness {
		seen += c
		if seen >= want && i < len(latenessBounds) {
			return latenessBounds[i]
		}
	}
	return -1
}

// counters are a Queue's Stats, each updated on its own.
type counters struct {
	scheduled, claims, claimed, ran, retried, dead, lost atomic.Uint64
	canceled, timedOut, panics, released, errors         atomic.Uint64
	running, held                                        atomic.Int64
	lateness                                             [len(latenessBounds) + 1]atomic.Uint64
}

func (c *counters) late(d time.Duration) {
	i := 0
	for i < len(latenessBounds) && d > latenessBounds[i] {
		i++
	}
	c.lateness[i].Add(1)
}

// Stats returns the Queue's counts. It costs O(len(latenessBounds)).
func (q *Queue) Stats() Stats {
	if q == nil || q.rdb == nil {
		panic("durable: Stats on a Queue not made by New")
	}
	c := &q.stats
	s := Stats{
		Scheduled: c.scheduled.Load(),
		Claims:    c.claims.Load(),
		Claimed:   c.claimed.Load(),
		Ran:       c.ran.Load(),
		Retried:   c.retried.Load(),
		Dead:      c.dead.Load(),
		LeaseLost: c.lost.Load(),
		Canceled:  c.canceled.Load(),
		TimedOut:  c.timedOut.Load(),
		Panics:    c.panics.Load(),
		Released:  c.released.Load(),
		Errors:    c.errors.Load(),
		Running:   int(c.running.Load()),
		Held:      int(c.held.Load()),
	}
	for i := range c.lateness {
		s.Lateness[i] = c.lateness[i].Load()
	}
	return s
}
