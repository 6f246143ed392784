package queue

import (
	"fmt"
	"math"
	"math/bits"
)

// Wheel is the engine: a hierarchical timing wheel (Varghese & Lauck,
// "Hashed and Hierarchical Timing Wheels", SOSP 1987) with O(1) schedule,
// cancel and reschedule, and O(1) amortised expiry per timer.
//
// A Wheel is not safe for concurrent use: it belongs to one owner, who
// serialises calls to it (usually under a lock). The exceptions are an
// entry's own methods: [Entry.Postpone], [Entry.Kill] and [Entry.Revive]
// are safe from any goroutine, with no lock, and so are the reads When,
// Pending and Dead. Everything else, Stray included, belongs to the owner.
//
// A zero Wheel is an empty wheel whose current tick is 0, as NewWheel's.
//
// # Levels
//
// The wheel has 11 levels of 64 slots. A slot at level k spans 64^k ticks,
// so level k reaches 64^(k+1) ticks ahead. With the scheduler's default tick
// of one millisecond:
//
//	level  slot width   reaches
//	  0        1 ms      64 ms
//	  1       64 ms     4.1 s
//	  2      4.1 s      4.4 min
//	  3      4.4 min    4.7 h
//	  4      4.7 h     12.4 days
//	  5     12.4 days   2.2 years
//	  6      2.2 years  139 years
//	  7..10  (the rest of the int64 range)
//
// Eleven levels of six bits cover every deadline an int64 can hold.
// Nothing is clamped to a horizon and there is no overflow list.
//
// # Placement
//
// A timer due at tick t goes to the level of the highest six-bit digit in
// which t and the current tick differ. Its slot is t's digit at that
// level. (tokio's wheel places timers the same way.) Two things follow.
// Every timer at level k is due before every timer at level k+1. The
// earliest timer is in the lowest occupied level's first occupied slot:
// one TrailingZeros64 on that level's occupancy bitmap. And when the
// current tick reaches a slot at level k > 0, its timers move down a
// level. A timer cascades at most once per level, ten times in its life.
//
// # Moving ahead
//
// A slot that a thousand timers or more were filed in is a burst: a wave
// of connections given the same idle timeout. Cascading it at the tick its
// first timers fall due would make a burst of a million cold timers late.
// Expire moves such a slot's timers ahead of time, 4,096 per call, into
// per-tick lists attached to the slot (see ahead.go). Reaching the slot
// then costs O(1) per 64 ticks. [Wheel.Ahead] says when there is such
// work to do, and NextWake includes it. That costs a driver about one
// wake with nothing due per 4,096 timers moved, and one per big slot above
// level 2. Slots of fewer timers cost no wake.
//
// # Order and exactness
//
// A level-0 slot holds exactly one tick, and a slot's list keeps the order
// in which timers arrived. Cascading and moving ahead keep timers with the
// same deadline in schedule order, for a burst as for one timer (see
// ahead.go). Expire fires a level-0 slot only once the current tick has
// reached it. The wheel never fires early and, given a driver that
// calls Expire at each tick NextWake returns, never late.
//
// [Entry.Postpone] moves a deadline later without re-filing the entry.
// Such an entry joins the timers of its new deadline only when the wheel
// reaches its old slot, behind those filed for that deadline in the
// meantime (see Postpone). Keeping their order too would cost a sequence
// number per entry: the scheduler's 48-byte Timer would take 64 bytes.
// The order is narrowed instead, for timers that share a tick only by the
// accident of rounding.
//
// The downside of this choice is Next. When level 0 is empty, the earliest
// deadline lies inside a coarser slot, and Next walks that slot's list to
// find it. The wheel remembers what the walk found until the last timer
// due then leaves. A driver that sleeps until Next never wakes with
// nothing due, where Linux and tokio wake at the slot's start. A driver
// that must stay O(1) uses NextWake instead (see there).
//
// A burst of cold timers falling due together is a chain of dependent
// cache misses. Expire walks several stretches of it side by side before
// it fires them, so the misses overlap (see warm.go).
type Wheel struct {
	now    int64             // current tick; every entry in a slot is due after it
	n      int               // pending entries
	ahead  int64             // tick of the next work ahead (see ahead.go), or MaxInt64
	bigAt  int32             // a slot this many timers were filed in since it was empty is moved ahead
	slice  int               // timers moved ahead per Expire call, at most
	due    Entry             // sentinel: entries due at or before now, in order
	firing Entry             // sentinel: entries Expire has taken and is firing
	lazy   bool              // fireDue took entries off firing without tidy yet
	levels [numLevels]*level // levels[k] spans 64^(k+1) ticks

	// Every hintEvery-th entry cascaded into each level-0 slot, so that
	// warm can walk a big slot as many short chains at once. Hints are
	// only ever read ahead of time: a stale one costs a wasted load.
	hints    [levelSlots][]*Entry
	hintN    [levelSlots]int32
	dueHints []*Entry // the hints of the slots spliced into the due list
	warmSum  int64    // written by warm so that its loads are kept

	// Timers moved down ahead of time (see ahead.go): chunk number c
	// (ticks c*64 to c*64+63) sits at chunks[c%ringChunks] while in use.
	chunks [ringChunks]*chunk
}

const hintEvery = 32

const (
	levelBits  = 6
	levelSlots = 1 << levelBits
	numLevels  = (64 + levelBits - 1) / levelBits // 11: every int64 tick fits
)

type level struct {
	occupied uint64            // bit i set iff slots[i] is not empty
	slots    [levelSlots]Entry // list sentinels
	// The earliest deadline in each slot, while it is known. No entry of
	// slots[i] is due before min[i], and about minN[i] are due at it. The
	// count is exact unless entries were postponed; it only decides when
	// the slot forgets min[i], at zero. Zero minN means unknown. min[i]
	// is exact for a slot none of whose entries was postponed since it
	// was computed, and a lower bound otherwise. Level 0 does not use
	// them: its slots are one tick.
	min  [levelSlots]int64
	minN [levelSlots]int32

	// Above level 0 (see ahead.go): adds counts the timers filed in each
	// slot since its list was last empty, never decremented and not past
	// Wheel.bigAt. big marks the slots where it reached Wheel.bigAt, and
	// chunked those with chunks attached. A slot is occupied if its list
	// is not empty or it has chunks.
	adds    [levelSlots]int32
	big     uint64
	chunked uint64
}

// NewWheel returns an empty wheel whose current tick is 0.
func NewWheel() *Wheel {
	w := &Wheel{}
	w.init()
	return w
}

// ready makes a zero Wheel an empty one, and tidies the firing list (see
// tidied): every method that reads the lists calls it first.
func (w *Wheel) ready() {
	if w.levels[0] == nil {
		w.init()
	}
	w.tidied()
}

// tidied tidies the firing list if a fireDue left it lazily taken off
// (see fireDue): called by every method that changes or walks a list.
func (w *Wheel) tidied() {
	if w.lazy {
		w.tidy()
	}
}

// init links the list sentinels and allocates the levels.
func (w *Wheel) init() {
	w.ahead, w.bigAt, w.slice = math.MaxInt64, aheadMin, aheadSlice
	w.due.initList(dueCode)
	w.firing.initList(dueCode)
	for k := range w.levels {
		l := &level{}
		for i := range l.slots {
			l.slots[i].initList(slotCode - int64(k*levelSlots+i))
		}
		w.levels[k] = l
	}
}

// Now returns the wheel's current tick.
func (w *Wheel) Now() int64 { return w.now }

// Len returns the number of pending timers. The complexity is O(1).
func (w *Wheel) Len() int { return w.n }

// Schedule allocates an entry due at tick when and inserts it. The
// complexity is O(1).
func (w *Wheel) Schedule(when int64) *Entry {
	e := new(Entry)
	w.Insert(e, when)
	return e
}

// Insert schedules e, which must not be pending, to fall due at tick when.
// A deadline at or before the current tick makes e due now: it fires on
// the next Expire. The complexity is O(1).
func (w *Wheel) Insert(e *Entry, when int64) {
	if e == nil {
		panic("timewheel/queue: Insert of a nil *Entry")
	}
	w.ready()
	if raw := e.when.Load(); raw != idleWord {
		if isDead(raw) {
			panic("timewheel/queue: Insert of an entry killed but still linked; Cancel it first")
		}
		panic(fmt.Sprintf("timewheel/queue: Insert of an entry already pending at tick %d", pendingAt(raw)))
	}
	if e.prev != nil {
		untangle(e) // taken off another wheel's firing list lazily
	}
	when = max(when, w.now)
	e.when.Store(pendingWord(when))
	w.n++
	w.place(e, when)
}

// place links e, whose deadline is when, into the slot when belongs to, or
// into the due list if it is due at the current tick, and returns true.
// (e's deadline may be later, if Postpone moved it since when was read.) A
// dead entry (see Entry.Kill) is dropped instead, and place returns false:
// its links are cleared, it leaves Len, and it is no longer dead, so that
// Revive refuses it.
func (w *Wheel) place(e *Entry, when int64) (placed bool) {
	if isDead(e.when.Load()) {
		if w.drop(e) {
			return false
		}
		when = e.load() // revived since its caller read it
	}
	if when <= w.now {
		w.due.pushBack(e)
		return true
	}
	k, i := w.slotOf(when)
	l := w.levels[k]
	l.slots[i].pushBack(e)
	l.occupied |= 1 << i
	if l.minN[i] > 0 {
		if when < l.min[i] {
			l.min[i], l.minN[i] = when, 1
		} else if when == l.min[i] {
			l.minN[i]++
		}
	}
	if k > 0 && l.adds[i] < w.bigAt {
		if l.adds[i]++; l.adds[i] == w.bigAt {
			l.big |= 1 << i
			w.wantAhead(k, i)
		}
	}
	return true
}

// slotOf returns the level and slot of a deadline after the current tick.
func (w *Wheel) slotOf(when int64) (k, i int) {
	k = (bits.Len64(uint64(when^w.now)) - 1) / levelBits
	i = int(uint64(when)>>(k*levelBits)) & (levelSlots - 1)
	return k, i
}
