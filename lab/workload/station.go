package workload

import (
	"fmt"
	"runtime"

	"github.com/timewheel/timewheel/queue"
)

// Stopwatch is what a workload needs of a timer: *testing.B is one, and so
// is the lab's own (see Run).
type Stopwatch interface {
	StartTimer()
	StopTimer()
}

// Station is one contender holding n pending timers, ready to run
// workloads on them. It is not safe for concurrent use.
type Station interface {
	// Run performs ops operations of workload k, timing with sw only the
	// operations themselves, and returns how many it performed (for
	// expire, the number of timers fired, at least ops). k must be one of
	// schedule, cancel, churn, refresh and expire.
	Run(k Kind, ops int, sw Stopwatch) int
	// Close releases the station's timers.
	Close()
}

// Open returns a station of c holding n pending timers, the generator
// seeded with seed, and the heap bytes it took per timer.
func (c Contender) Open(n int, seed uint64) (Station, float64) {
	st, mem, _ := c.ops.open(n, seed, never, true)
	return st, mem
}

// OpenCounted returns a station of c holding n pending timers, the
// generator seeded with seed, on a queue that counts its steps into
// steps. A Stopwatch whose StartTimer and StopTimer read steps counts
// what Run would time. It panics if c does not count its steps (see
// Counts).
func (c Contender) OpenCounted(n int, seed uint64, steps *Steps) Station {
	if !c.Counts() {
		panic(fmt.Sprintf("workload: %s does not count its steps", c.Name))
	}
	st, _ := c.counter.open(n, seed, steps, never)
	return st
}

// Far runs the far workload on n timers of c, timing it with sw.
func (c Contender) Far(n int, seed uint64, sw Stopwatch) {
	if !c.Supports(Far) {
		panic(fmt.Sprintf("workload: %s has no far workload", c.Name))
	}
	c.ops.far(n, seed, never, sw)
}

// Tick offsets of the workloads, one tick a millisecond.
const (
	pendingFrom, pendingTo = 10_000, 60_000 // resident timers: 10–60 s out
	refreshTo              = pendingTo      // refresh: 60 s out, later than any resident timer (W2)
	burstSize              = 1000           // expire: timers in a burst
	burstWindow            = 100            // expire: the burst's window, 100 ms
	burstsPerFill          = 40             // bursts before the clock nears the resident timers' slots
	farFrom, farTo         = 600_000, 86_400_000
	farStep                = 1000 // the far driver's step: 1 s
	chunk                  = 1024 // operations between untimed repairs
)

// deadlineCheck is how many operations a budgeted loop does between looks
// at the clock.
const deadlineCheck = 1024

// opener makes stations of one handle type; see bound.
type opener interface {
	// open fills a new station with n timers, measuring the heap it takes
	// if mem, and reports false if fill passed first.
	open(n int, seed uint64, fill stop, mem bool) (st Station, bytesPerTimer float64, ok bool)
	// far runs the far workload on a new queue, timing it with sw, and
	// reports false if until passed first.
	far(n int, seed uint64, until stop, sw Stopwatch) bool
	// farWith is far in the geometry of plan.
	farWith(plan farPlan, n int, seed uint64, until stop, sw Stopwatch) bool
}

// timers is what every contender offers a station: schedule, cancel and
// reschedule. A queue.Queue is one.
type timers[H comparable] interface {
	Schedule(when int64) H
	Cancel(h H) bool
	Reschedule(h H, when int64) bool
}

// bound binds the workloads to contenders of one handle type: a queue,
// or timers on the real clock.
type bound[H comparable] struct {
	newQueue func() queue.Queue[H] // or
	newReal  func() realTimers[H]
}

// station is a Station on a contender with handles H.
type station[H comparable] struct {
	t      timers[H]
	q      queue.Queue[H] // t, for a queue; nil for timers on the real clock
	real   realTimers[H]  // t, for timers on the real clock; nil for a queue
	hs     []H            // the n pending timers
	tmp    []H
	r      rng
	now    int64
	perm   []int32 // the cancel workload's picks: a permutation of the timers
	bursts int     // expire bursts since the last fill or rebase
	fire   func(H)
}

func (b bound[H]) open(n int, seed uint64, fill stop, mem bool) (Station, float64, bool) {
	s := newStation[H](n, seed) // before the memory is read: the handles are the lab's, not the contender's
	var before runtime.MemStats
	if mem {
		runtime.GC() // twice: timers a contender before stopped may be freed only by the second
		runtime.GC()
		runtime.ReadMemStats(&before)
	}
	if b.newQueue != nil {
		s.q = b.newQueue()
		s.t = s.q
	} else {
		s.real = b.newReal()
		s.t = s.real
	}
	if !s.fill(n, fill) {
		return nil, 0, false
	}
	var perTimer float64
	if mem {
		var filled runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&filled)
		perTimer = (float64(filled.HeapAlloc) - float64(before.HeapAlloc)) / float64(max(n, 1))
	}
	return s, perTimer, true
}

// newStation returns a station for n timers, its generator seeded with
// seed, with no timers yet.
func newStation[H comparable](n int, seed uint64) *station[H] {
	return &station[H]{hs: make([]H, 0, n), tmp: make([]H, 0, chunk), r: newRNG(seed), fire: func(H) {}}
}

// fill schedules the station's n timers, 10–60 s out, and reports false,
// closing it, if fill passed first.
func (s *station[H]) fill(n int, fill stop) bool {
	for i := range n {
		if i%deadlineCheck == deadlineCheck-1 && fill.passed() {
			s.Close()
			return false
		}
		s.hs = append(s.hs, s.t.Schedule(s.now+s.r.between(pendingFrom, pendingTo)))
	}
	return true
}

func (s *station[H]) Close() {
	if s.real != nil {
		s.real.Close(s.hs)
	}
}

func (s *station[H]) Run(k Kind, ops int, sw Stopwatch) int {
	if s.q == nil && k == Expire {
		panic("workload: timers on the real clock have no expire workload")
	}
	if len(s.hs) == 0 && k != Schedule && k != Expire {
		panic(fmt.Sprintf("workload: %s needs pending timers", k))
	}
	switch k {
	case Schedule:
		return s.schedule(ops, sw)
	case Cancel:
		return s.cancel(ops, sw)
	case Churn:
		return s.churn(ops, sw)
	case Refresh:
		return s.refresh(ops, sw)
	case Expire:
		return s.expire(ops, sw)
	}
	panic(fmt.Sprintf("workload: a station cannot run %s", k))
}

// schedule times Schedule into the queue of n, cancelling the new timers
// untimed every chunk so that n stays as it is.
func (s *station[H]) schedule(ops int, sw Stopwatch) int {
	for done := 0; done < ops; {
		c := min(chunk, ops-done)
		tmp := s.tmp[:c]
		sw.StartTimer()
		for i := range tmp {
			tmp[i] = s.t.Schedule(s.now + s.r.between(pendingFrom, pendingTo))
		}
		sw.StopTimer()
		for _, h := range tmp {
			s.t.Cancel(h)
		}
		done += c
	}
	return ops
}

// cancel times Cancel of pending timers picked at random, distinct
// within a chunk, scheduling them again untimed after every chunk.
func (s *station[H]) cancel(ops int, sw Stopwatch) int {
	n := len(s.hs)
	if s.perm == nil {
		s.perm = make([]int32, n)
		for i := range s.perm {
			s.perm[i] = int32(i)
		}
	}
	for done := 0; done < ops; {
		c := min(chunk, ops-done, n)
		for i := range c { // a partial shuffle picks c distinct timers
			j := i + s.r.intn(n-i)
			s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
		}
		pick := s.perm[:c]
		sw.StartTimer()
		for _, i := range pick {
			s.t.Cancel(s.hs[i])
		}
		sw.StopTimer()
		for _, i := range pick {
			s.hs[i] = s.t.Schedule(s.now + s.r.between(pendingFrom, pendingTo))
		}
		done += c
	}
	return ops
}

// churn is W1: cancel a random pending timer, schedule a new one.
func (s *station[H]) churn(ops int, sw Stopwatch) int {
	n := len(s.hs)
	sw.StartTimer()
	for range ops {
		i := s.r.intn(n)
		s.t.Cancel(s.hs[i])
		s.hs[i] = s.t.Schedule(s.now + s.r.between(pendingFrom, pendingTo))
	}
	sw.StopTimer()
	return ops
}

// refresh is W2: move a random pending timer to 30 s out.
func (s *station[H]) refresh(ops int, sw Stopwatch) int {
	n := len(s.hs)
	sw.StartTimer()
	for range ops {
		s.t.Reschedule(s.hs[s.r.intn(n)], s.now+refreshTo)
	}
	sw.StopTimer()
	return ops
}

// expire schedules bursts of timers due within the next 100 ticks, untimed,
// and times the Expire that fires them, until ops have fired. Every 40
// bursts (4 s of ticks) the pending timers are moved 10–60 s out again,
// untimed. So they never fall due, and the clock never reaches a slot
// that holds them. A hierarchical wheel would cascade them there. That
// is the cost of time passing (the far workload's), not of the burst.
func (s *station[H]) expire(ops int, sw Stopwatch) int {
	fired := 0
	for fired < ops {
		if s.bursts == burstsPerFill {
			for _, h := range s.hs {
				s.q.Reschedule(h, s.now+s.r.between(pendingFrom, pendingTo))
			}
			s.bursts = 0
		}
		for range min(burstSize, ops-fired) {
			s.q.Schedule(s.now + 1 + s.r.between(0, burstWindow))
		}
		s.now += burstWindow
		sw.StartTimer()
		fired += s.q.Expire(s.now, s.fire)
		sw.StopTimer()
		s.bursts++
	}
	return fired
}

// farPlan is the far workload's geometry: deadlines from..to ticks out,
// the clock driven step ticks at a time.
type farPlan struct{ from, to, step int64 }

var defaultFar = farPlan{farFrom, farTo, farStep}

func (b bound[H]) far(n int, seed uint64, until stop, sw Stopwatch) bool {
	return farOn(defaultFar, b.newQueue, n, seed, until, sw)
}

func (b bound[H]) farWith(plan farPlan, n int, seed uint64, until stop, sw Stopwatch) bool {
	return farOn(plan, b.newQueue, n, seed, until, sw)
}

// farOn schedules n timers from plan.from to plan.to ticks out on a new
// queue. It drives the clock plan.step ticks at a time until every one
// has fired. It times it all with sw, the queue's making included. It
// reports false if until passed first.
func farOn[H comparable](plan farPlan, newQueue func() queue.Queue[H], n int, seed uint64, until stop, sw Stopwatch) bool {
	r := newRNG(seed)
	fire := func(H) {}
	sw.StartTimer()
	defer sw.StopTimer()
	q := newQueue()
	for i := range n {
		if i%deadlineCheck == deadlineCheck-1 && until.passed() {
			return false
		}
		q.Schedule(r.between(plan.from, plan.to))
	}
	fired := 0
	for now, step := plan.step, 0; fired < n; now, step = now+plan.step, step+1 {
		if step%64 == 63 && until.passed() {
			return false
		}
		fired += q.Expire(now, fire)
	}
	return true
}

// pending returns the number of timers the station's queue holds; tests
// use it.
func (s *station[H]) pending() int { return s.q.Len() }
