package timewheel

import (
	"math/bits"
	"time"

	"github.com/timewheel/timewheel/internal/lockcheck"
)

// Stats is what a wheel has done since New, summed over its shards, and
// what it holds now: the figures a service puts on its dashboard. Counters
// only grow; a rate is the difference of two readings. [Wheel.Stats]
// returns it; the wheelvar package publishes it through expvar, and the
// promwheel module exports it to Prometheus.
//
// The counters count operations on an open wheel: a timer started on a
// closed wheel, which is never pending, is not counted anywhere.
type Stats struct {
	// Shards is the number of shards (see WithShards).
	Shards int
	// Pending is the number of timers and tickers pending now: Len.
	Pending int
	// Started counts timers and tickers started: AfterFunc, NewTimer,
	// NewTicker, and so After, Tick and Sleep. A Reset of a fired or
	// stopped timer puts it back on the wheel, but counts as a Reset.
	Started uint64
	// Stopped counts Stop calls that took a pending timer or ticker off
	// the wheel, so that it never fired. (A Stop that only takes back a
	// value sent but not received returns true but is not counted: the
	// timer had fired.)
	Stopped uint64
	// Reset counts Reset calls of timers and tickers, LazyResets
	// included. A Reset of a pending timer to the tick it is already due
	// at changes nothing and is not counted. So the lock-free path pays
	// for its count only when it moves a deadline.
	Reset uint64
	// LazyResets counts the Timer.Reset calls that moved a pending
	// deadline to a later tick without a lock and without moving the
	// timer: the refreshes of idle timeouts (see [Timer.Reset]).
	LazyResets uint64
	// Fired counts timers that fired and ticks of tickers: AfterFunc
	// callbacks handed to the executor and values sent on channels. A
	// tick dropped because the receiver had not taken the last one counts
	// too. It is Lateness.Count().
	Fired uint64
	// Collected counts channel timers and tickers removed from the wheel
	// because nothing referenced them any more (see [Timer]). The cleanup
	// of their channel removed them, or they fell due with it gone.
	Collected uint64
	// Discarded is the number of pending timers Close dropped: see
	// [Wheel.Discarded]. It is 0 while the wheel is open.
	Discarded int
	// Wakeups counts the times the driver woke to fire the due shards.
	Wakeups uint64
	// EmptyWakeups counts the wakeups at which no shard fired anything.
	// [Wheel] lists the four kinds. An idle wheel does not wake at all.
	EmptyWakeups uint64
	// Lateness is the histogram of how late timers fired: see [Lateness].
	Lateness Lateness
	// Executor is what the wheel's own [Pool] is doing, and zero when the
	// wheel was given an Executor of its own (WithExecutor).
	Executor PoolStats
}

// LatenessBuckets is the number of buckets of a [Lateness] histogram.
const LatenessBuckets = 16

// Lateness is a histogram of how late fired timers were. A timer's
// lateness is the time from its deadline tick to the clock reading of the
// driver's wake that fired it. That is when its callback was handed to the
// executor or its value sent. (How long a callback then waits in the
// executor's queue is the executor's; see [PoolStats].)
//
// The buckets are fixed, in powers of two of the wheel's tick. So
// histograms of shards, wheels and processes with the same tick add up
// bucket by bucket:
//   - bucket 0 counts fires less than one tick late;
//   - bucket i (0 < i < LatenessBuckets-1), those at least 2^(i-1) and
//     less than 2^i ticks late;
//   - the last bucket, the rest: at least 2^(LatenessBuckets-2) ticks
//     late (16.4 s with a one-millisecond tick).
//
// Bounds gives the upper bounds as durations. A healthy wheel fires nearly
// everything in buckets 0 and 1: a timer fires at most one tick plus the
// driver's own delay late.
type Lateness struct {
	// Tick is the wheel's tick, the unit of the buckets.
	Tick time.Duration
	// Counts holds the number of fires in each bucket.
	Counts [LatenessBuckets]uint64
	// Sum is the sum of the lateness of every fire counted.
	Sum time.Duration
}

// Count returns the number of fires counted, the sum of the buckets. The
// complexity is O(LatenessBuckets).
func (l Lateness) Count() uint64 {
	var n uint64
	for _, c := range l.Counts {
		n += c
	}
	return n
}

// Bounds returns the exclusive upper bounds of buckets 0 to
// LatenessBuckets-2: Tick, 2·Tick, 4·Tick … 2^(LatenessBuckets-2)·Tick.
// The last bucket has no upper bound. The complexity is
// O(LatenessBuckets).
func (l Lateness) Bounds() []time.Duration {
	b := make([]time.Duration, LatenessBuckets-1)
	for i := range b {
		b[i] = l.Tick << i
	}
	return b
}

// latenessBucket returns the bucket of a fire late ns nanoseconds, for a
// tick of tick nanoseconds.
func latenessBucket(late, tick int64) int {
	if late < tick {
		return 0
	}
	return min(bits.Len64(uint64(late/tick)), LatenessBuckets-1)
}

// PoolStats is what a [Pool] is doing.
type PoolStats struct {
	// Limit is the most workers the pool runs at once (see WithWorkers).
	Limit int
	// Queued is the number of callbacks waiting in the queue for a worker.
	// (Under a burst a worker takes runs of up to 64; those it has taken
	// and not run yet are not counted.) A queue that keeps growing means
	// callbacks take longer than the timers that feed them allow: the
	// executor is falling behind.
	Queued int
	// Running is the number of workers running callbacks: at most Limit.
	// Running at Limit with callbacks queued means the pool is saturated.
	Running int
	// Submitted counts the callbacks handed to the pool.
	Submitted uint64
}

// Stats returns what the pool is doing. The complexity is O(1).
func (p *Pool) Stats() PoolStats {
	if p == nil {
		panic("timewheel: Stats called on a nil *Pool")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	limit := p.limit
	if limit == 0 {
		limit = DefaultWorkers() // a zero Pool that has queued nothing yet
	}
	return PoolStats{Limit: limit, Queued: p.queue.n, Running: p.running, Submitted: p.submitted}
}

// Stats returns what the wheel has done since New and what it holds now.
// It locks each shard in turn, so the figures of different shards are not
// taken at quite the same instant. The complexity is O(shards).
func (w *Wheel) Stats() Stats {
	w.made("Stats")
	st := Stats{
		Shards:       len(w.shards),
		Wakeups:      w.driver.wakeups.Load(),
		EmptyWakeups: w.driver.emptyWakeups.Load(),
		Lateness:     Lateness{Tick: w.tick},
	}
	for _, s := range w.shards {
		s.mu.Lock()
		s.drainAllLocked()
		st.Pending += s.q.Len()
		st.Discarded += s.discarded
		st.Started += s.started
		st.Stopped += s.stopped + s.inbox.posted()
		st.Reset += s.resets
		st.Collected += s.collected
		for i, c := range s.lateness {
			st.Lateness.Counts[i] += c
		}
		st.Lateness.Sum += time.Duration(s.lateSum)
		s.mu.Unlock()
	}
	st.LazyResets = w.lazy.Load()
	st.Reset += st.LazyResets
	st.Fired = st.Lateness.Count()
	if w.pool != nil {
		st.Executor = w.pool.Stats()
	}
	return st
}

// firedLocked counts a timer fired at clock reading ns in the lateness
// histogram; the engine expired it at its current tick. The bucket is
// kept from one fire to the next: the timers of one tick share it.
func (s *shard) firedLocked(ns int64) {
	lockcheck.Held(&s.mu, "shard.firedLocked")
	c := &s.late
	if at := s.q.Now(); ns != c.ns || at != c.at {
		c.ns, c.at = ns, at
		c.late = ns - at*int64(s.w.tick)
		c.bucket = latenessBucket(c.late, int64(s.w.tick))
	}
	s.lateness[c.bucket]++
	s.lateSum += c.late
}

// lateCache is the lateness of the last fire: for clock reading ns and
// engine tick at, late nanoseconds, in bucket.
type lateCache struct {
	ns, at, late int64
	bucket       int
}
