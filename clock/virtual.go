package clock

import (
	"container/heap"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/timewheel/timewheel/internal/lockcheck"
)

// Virtual is a clock for tests. Its time moves only when Advance,
// AdvanceTo or AdvanceNext is called. As it moves it stops at every
// pending timer's deadline in turn, so it never jumps past a due timer:
// each callback runs with Now reporting exactly its deadline.
//
// Callbacks run synchronously on the goroutine that advances the clock, in
// deadline order and, for equal deadlines, in the order the timers were
// started, with no lock of the clock held. When Advance returns, every
// callback due by then has returned; that is how a test waits until the
// code under test has reacted.
//
// A callback may use the clock: start, stop or reset timers, its own
// included, and advance the clock further (the outer advance then goes on
// from where the inner one left the clock, never back). A callback that
// keeps starting timers due at once would keep time from passing, so an
// advance panics after about a million in a row (see [Virtual.AdvanceTo]).
//
// # Wall clock and monotonic clock
//
// A real machine has two clocks. The wall clock is what [time.Now] reads;
// NTP, an administrator or a resume from suspend can step it. The
// monotonic clock is what timers and Since follow; nothing steps it.
// A Virtual keeps them apart the same way. Its timers, Since, Advance
// and AdvanceNext move on the monotonic clock; Now, Next and AdvanceTo
// read and take wall-clock times. The two agree until [Virtual.StepWall]
// or [Virtual.Suspend] moves the wall clock alone. After
// StepWall(time.Hour), Now reads an hour later, and a timer set for a
// minute still runs a minute of Advance later, as a Go timer does.
//
// The zero Virtual is a clock at the zero time.Time (January 1, year 1,
// 00:00:00 UTC), ready to use; [NewVirtual] starts one at another time. A
// Virtual must not be copied after first use.
//
// Every method panics on a nil *Virtual, naming itself: "clock: Now
// called on a nil *Virtual".
//
// A Virtual is safe for concurrent use. Advances from several goroutines
// at once run their callbacks concurrently, each on its own goroutine.
type Virtual struct {
	mu     sync.Mutex
	now    time.Time   // guarded by mu; the monotonic clock, which timers follow
	off    lead        // guarded by mu; the wall clock's lead over now
	steps  []wallStep  // guarded by mu; every move of off, oldest first
	timers virtualHeap // guarded by mu
	seq    uint64      // guarded by mu; start order of timers
}

// wallStep records a move of the wall clock: the monotonic instant at
// which it was made and the wall clock's lead before it. Since reads the
// times Now returned before the step by it.
type wallStep struct {
	at     time.Time
	before lead
}

// lead is how far the wall clock is ahead of the monotonic clock, or
// behind it if negative: sec seconds and nsec nanoseconds, nsec in
// [0, 1e9). Unlike a Duration, which ends at 292 years, it holds any
// sum of steps, saturating at maxLeadSec seconds either way.
type lead struct{ sec, nsec int64 }

// maxLeadSec bounds a lead, and a wall-clock reading, to some 146
// billion years either side of the Unix epoch: well inside time.Time's
// range, and far from overflowing their sums.
const maxLeadSec = 1 << 62

// plus returns l moved by d, saturating.
func (l lead) plus(d time.Duration) lead {
	sec := int64(d / time.Second)
	nsec := l.nsec + int64(d%time.Second)
	sec += nsec / 1e9
	if nsec %= 1e9; nsec < 0 {
		nsec += 1e9
		sec--
	}
	return lead{min(max(l.sec+sec, -maxLeadSec), maxLeadSec), nsec}
}

// neg returns -l.
func (l lead) neg() lead {
	if l.nsec == 0 {
		return lead{-l.sec, 0}
	}
	return lead{-l.sec - 1, 1e9 - l.nsec}
}

// add returns t moved by l: by t.Add, keeping t's monotonic reading,
// where l fits a Duration, and by its Unix time, saturated, beyond.
func (l lead) add(t time.Time) time.Time {
	if l.sec > -maxDurationSec && l.sec < maxDurationSec {
		return t.Add(time.Duration(l.sec)*time.Second + time.Duration(l.nsec))
	}
	sec := min(max(t.Unix()+l.sec, -maxLeadSec), maxLeadSec)
	return time.Unix(sec, int64(t.Nanosecond())+l.nsec).In(t.Location())
}

// maxDurationSec is the whole seconds a Duration holds, less one.
const maxDurationSec = math.MaxInt64/int64(time.Second) - 1

// rearmLimit is how many timers due at once, started or reset by callbacks
// of one advance, may run in a row at one instant before the advance
// panics. 2^20 runs of a callback that resets its own timer take 40 ms
// (1.2 s under the race detector). That is long enough for any finite
// chain a test builds on purpose. It is short enough that a chain without
// end is reported rather than hung on.
var rearmLimit = 1 << 20

// lock locks v.mu for method, one of the exported methods; it panics if v
// is nil.
func (v *Virtual) lock(method string) {
	if v == nil {
		panic("clock: " + method + " called on a nil *Virtual")
	}
	v.mu.Lock()
}

// NewVirtual returns a virtual clock whose time is start.
func NewVirtual(start time.Time) *Virtual {
	return &Virtual{now: start}
}

// Now returns the clock's current time: the wall clock's reading.
func (v *Virtual) Now() time.Time {
	v.lock("Now")
	defer v.mu.Unlock()
	return v.wallLocked(v.now)
}

// Since returns the virtual time elapsed since t on the monotonic clock,
// reading t as a time Now returned. As for the real clock's readings, a
// later step of the wall clock, or a suspend, does not change it. A t
// that Now returned both before and after a backward step is read as the
// earlier. A wheel made before the step keeps to its epoch, but one
// made in the stretch the step repeats would not: make wheels before
// stepping back. Without steps, Since(t) is Now().Sub(t). The complexity
// is O(s) in the steps and suspends made.
func (v *Virtual) Since(t time.Time) time.Duration {
	v.lock("Since")
	defer v.mu.Unlock()
	return v.now.Sub(v.monoLocked(t))
}

// StepWall steps the wall clock by d, forward or back, as NTP or a
// manual setting of the clock does. Now moves by d at once; the monotonic
// clock does not. No timer runs, none moves, and Since of an earlier
// reading is unchanged. Steps add up past what one Duration holds; the
// wall clock stops only some 146 billion years from 1970. The complexity
// is O(1).
func (v *Virtual) StepWall(d time.Duration) {
	v.lock("StepWall")
	defer v.mu.Unlock()
	v.stepLocked(d)
}

// Suspend simulates the machine sleeping for d and waking. The wall
// clock moves forward by d; the monotonic clock stands still, as Go's
// does on Linux, macOS and Windows. Timers due in the sleep run late
// by its length, as on the real clock. It is StepWall(d) under a name
// that says why. Suspend panics if d is negative. The complexity is O(1).
func (v *Virtual) Suspend(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("clock: Virtual.Suspend called with negative duration %v", d))
	}
	v.lock("Suspend")
	defer v.mu.Unlock()
	v.stepLocked(d)
}

// stepLocked moves the wall clock by d.
func (v *Virtual) stepLocked(d time.Duration) {
	lockcheck.Held(&v.mu, "Virtual.stepLocked")
	if d == 0 {
		return
	}
	v.steps = append(v.steps, wallStep{at: v.now, before: v.off})
	v.off = v.off.plus(d)
}

// wallLocked returns the wall clock's reading at the monotonic instant
// mono, at the current lead.
func (v *Virtual) wallLocked(mono time.Time) time.Time {
	lockcheck.Held(&v.mu, "Virtual.wallLocked")
	return v.off.add(mono)
}

// monoLocked returns the monotonic instant at which Now returned the wall
// reading t: by the lead of the earliest stretch between steps whose
// readings reach t, or else the current lead.
func (v *Virtual) monoLocked(t time.Time) time.Time {
	lockcheck.Held(&v.mu, "Virtual.monoLocked")
	for _, s := range v.steps {
		if !t.After(s.before.add(s.at)) {
			return s.before.neg().add(t)
		}
	}
	return v.off.neg().add(t)
}

// AfterFunc calls f, on the goroutine advancing the clock, once the clock
// has advanced by d. A d of zero or less makes the timer due at the current
// time; it runs on the next call that advances the clock, even by zero. A
// d too large for a time.Time saturates at the largest time. AfterFunc
// panics if f is nil. The complexity is O(log n) in the number of pending
// timers.
func (v *Virtual) AfterFunc(d time.Duration, f func()) Timer {
	if f == nil {
		panic("clock: Virtual.AfterFunc called with nil func")
	}
	v.lock("AfterFunc")
	t := &virtualTimer{v: v, f: f, index: -1}
	defer v.mu.Unlock()
	v.startLocked(t, d)
	return t
}

// Len returns the number of pending timers.
func (v *Virtual) Len() int {
	v.lock("Len")
	defer v.mu.Unlock()
	return len(v.timers)
}

// Next returns the deadline of the earliest pending timer, on the wall
// clock as Now reads it, and false if there is none.
func (v *Virtual) Next() (time.Time, bool) {
	v.lock("Next")
	defer v.mu.Unlock()
	if len(v.timers) == 0 {
		return time.Time{}, false
	}
	return v.wallLocked(v.timers[0].when), true
}

// Advance moves the clock forward by d, stopping at each pending deadline
// on the way to run the callbacks due there. It returns the number of
// callbacks it ran. Advance panics if d is negative, and as AdvanceTo
// does.
func (v *Virtual) Advance(d time.Duration) int {
	if d < 0 {
		panic(fmt.Sprintf("clock: Virtual.Advance called with negative duration %v", d))
	}
	v.lock("Advance")
	return v.advanceUnlock("Advance", v.now.Add(d))
}

// AdvanceTo moves the clock forward until Now reads t, as Advance does, and
// returns the number of callbacks it ran. AdvanceTo panics if t is before
// the current time: a virtual clock never goes backwards (but see
// StepWall). If a callback has advanced the clock past t, the clock stays
// where the callback left it.
//
// A callback's panic goes up through AdvanceTo and leaves the clock at
// that callback's deadline, in working order. AdvanceTo also panics, in
// the same working order, when a chain of timers due at once would never
// let the clock move on. That is when callbacks of this advance have
// started or reset 2^20 (about a million) timers in a row due at one
// instant, and another is due.
func (v *Virtual) AdvanceTo(t time.Time) int {
	v.lock("AdvanceTo")
	if now := v.wallLocked(v.now); t.Before(now) {
		v.mu.Unlock()
		panic(fmt.Sprintf("clock: Virtual.AdvanceTo called with %v, before the current time %v", t, now))
	}
	return v.advanceUnlock("AdvanceTo", v.off.neg().add(t))
}

// AdvanceNext moves the clock to the earliest pending deadline and runs
// every callback due at that instant. It returns how far the clock moved
// and false if no timer was pending, in which case the clock stays put.
// It panics as AdvanceTo does.
func (v *Virtual) AdvanceNext() (time.Duration, bool) {
	v.lock("AdvanceNext")
	if len(v.timers) == 0 {
		v.mu.Unlock()
		return 0, false
	}
	when := v.timers[0].when
	d := max(when.Sub(v.now), 0)
	v.advanceUnlock("AdvanceNext", when)
	return d, true
}

// advanceUnlock runs the callbacks due by t, a monotonic instant, and
// moves the clock to t unless a callback moved it further. It is called
// with v.mu held and unlocks it before it returns. method names the
// caller in panics.
func (v *Virtual) advanceUnlock(method string, t time.Time) int {
	seq0 := v.seq // timers started or reset from here on are this advance's
	var at time.Time
	rearmed := 0 // this advance's timers due at once run in a row at at
	for ran := 0; ; ran++ {
		if len(v.timers) == 0 || v.timers[0].when.After(t) {
			if t.After(v.now) {
				v.now = t
			}
			v.mu.Unlock()
			return ran
		}
		if next := v.timers[0]; next.seq > seq0 && next.dueAtStart {
			if !next.when.Equal(at) {
				at, rearmed = next.when, 0
			}
			if rearmed++; rearmed > rearmLimit {
				stuck := v.wallLocked(at)
				v.mu.Unlock()
				panic(fmt.Sprintf("clock: Virtual.%s stuck at %v: callbacks started or reset %d timers in a row due at once (for zero or less), so time could not pass; give them a positive duration", method, stuck, rearmLimit))
			}
		} else {
			rearmed = 0
		}
		f := v.popLocked()
		v.mu.Unlock()
		f() // with no lock held: it may use the clock
		v.mu.Lock()
	}
}

// popLocked removes the earliest timer, moves the clock to its deadline
// and returns its callback.
func (v *Virtual) popLocked() func() {
	lockcheck.Held(&v.mu, "Virtual.popLocked")
	t := heap.Pop(&v.timers).(*virtualTimer)
	if t.when.After(v.now) {
		v.now = t.when
	}
	return t.f
}

func (v *Virtual) startLocked(t *virtualTimer, d time.Duration) {
	lockcheck.Held(&v.mu, "Virtual.startLocked")
	t.when = v.now.Add(max(d, 0))
	t.dueAtStart = !t.when.After(v.now)
	v.seq++
	t.seq = v.seq
	heap.Push(&v.timers, t)
}

type virtualTimer struct {
	v     *Virtual
	when  time.Time
	seq   uint64
	f     func()
	index int // position in v.timers, -1 when not pending; guarded by v.mu

	dueAtStart bool // started for the instant the clock was at; guarded by v.mu
}

func (t *virtualTimer) Stop() bool {
	t.v.mu.Lock()
	defer t.v.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&t.v.timers, t.index)
	return true
}

func (t *virtualTimer) Reset(d time.Duration) bool {
	t.v.mu.Lock()
	defer t.v.mu.Unlock()
	active := t.index >= 0
	if active {
		heap.Remove(&t.v.timers, t.index)
	}
	t.v.startLocked(t, d)
	return active
}

// virtualHeap orders timers by (deadline, start order).
type virtualHeap []*virtualTimer

func (h virtualHeap) Len() int { return len(h) }
func (h virtualHeap) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}
func (h virtualHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *virtualHeap) Push(x any) {
	t := x.(*virtualTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *virtualHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
