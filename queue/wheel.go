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
// Eleven levels of six bits cover all 64 bits of a tick, so every deadline
// an int64 can hold has a slot: nothing is clamped to a horizon and there is
// no overflow list.
//
// # Placement
//
// A timer due at tick t, with the wheel's current tick at now, goes to the
// level of the highest six-bit digit in which t and now differ, in the slot
// given by t's digit at that level. (tokio's wheel places timers the same
// way.) Two things follow. Every timer at level k is due before every timer
// at level k+1, so the earliest timer is in the lowest occupied level's
// first occupied slot, which a uint64 occupancy bitmap per level finds with
// one TrailingZeros64. And when the current tick reaches a slot at level
// k > 0, each of its timers moves down to a lower level: a timer cascades at
// most once per level, at most ten times in its life.
//
// # Moving ahead
//
// A slot that a thousand timers or more were filed in (a burst: a wave of
// connections given the same idle timeout) is not left to be cascaded when
// the current tick reaches it, at the tick its first timers fall due,
// where a million cold timers would make the burst late: Expire moves its
// timers, a slice of 4,096 per call, into per-tick lists attached to the
// slot (chunks, see ahead.go) ahead of time: a level-1 slot as soon as it
// is big, a level-2 slot from the start of the slot before it, 4.1 to 8.2
// s ahead with a 1 ms tick. Reaching the slot then costs O(1) per 64
// ticks. A big slot at level 3 or above is reached at its start, minutes
// ahead of its timers unless the first is due at that very start, and its
// timers then sit in big slots of level 2 or 1. [Wheel.Ahead] says when
// there is such work to do, and NextWake includes it, so a driver that
// sleeps until NextWake wakes for it even with nothing due: about one wake
// per 4,096 timers moved, and one per big slot above level 2. Slots of
// fewer timers cost no wake.
//
// # Order and exactness
//
// A level-0 slot holds exactly one tick, and a slot's list keeps the order
// in which timers arrived; timers with the same deadline are in the same
// list, or, in a slot being moved ahead, those filed first in a chunk's
// list for their tick and the rest in the slot's list, which reaching the
// slot appends to the chunk's; so cascading and moving ahead keep them in
// schedule order, for a burst as for one timer. Expire fires a level-0
// slot only once the current tick has reached it: the wheel never fires
// early and, given a driver that calls Expire at each tick NextWake
// returns, never late.
//
// [Entry.Postpone] moves a deadline later without re-filing the entry; the
// wheel files it again when it reaches the slot the entry sits in. Such an
// entry joins the timers of its new deadline behind those filed for it in
// the meantime, so equal deadlines fire in schedule order only among
// entries that were not postponed. Keeping the order for them too would
// take a sequence number per entry, placed by a sorted insert when the
// entry is filed again: eight bytes more per timer, which moves the
// scheduler's 48-byte AfterFunc Timer into the 64-byte size class, a
// third more memory for every pending timer, to order timers that only
// share a tick by accident of rounding, and that callers on different
// processors (on different shards of the scheduler) could not order
// anyway. The order is narrowed instead, and documented where Postpone is.
//
// The downside of this choice is Next: when level 0 is empty, the earliest
// deadline lies inside a coarser slot, and Next walks that slot's list to
// find it. The wheel remembers each coarse slot's earliest deadline (and
// how many timers share it) from that walk until the last of them leaves,
// so a driver that sleeps until Next, rather than until the slot's start
// as Linux and tokio do, never wakes with nothing due. A driver that must
// stay O(1) uses NextWake, which gives up on a slot of more than 64 timers
// whose earliest it has forgotten and answers with the slot's start: one
// wake with nothing due, which moves the slot down a level.
//
// A burst of cold timers falling due together is a chain of dependent
// cache misses. When Expire cascades or moves timers into a level-0 slot
// or a chunk's list it keeps a hint every 32 entries, and as it fires the
// slot it walks sixteen of those chains side by side, then fires the 512
// entries they led through while they are in the caches, and so on; a
// due list without hints it walks from both ends first. The misses
// overlap; the walks only read.
//
// A Wheel is not safe for concurrent use. Its zero value is an empty
// wheel whose current tick is 0, as NewWheel's.
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
	// The earliest deadline in each slot, while it is known: no entry of
	// slots[i] is due before min[i], and about minN[i] are due at it (the
	// count is exact unless entries were postponed; it only decides when
	// the slot forgets min[i], at zero). Zero minN means unknown. min[i]
	// is exact for a slot none of whose entries was postponed since it
	// was computed, and a lower bound otherwise. Level 0 does not use
	// them: its slots are one tick.
	min  [levelSlots]int64
	minN [levelSlots]int32

	// Above level 0: timers filed in each slot since its list was last
	// empty (never decremented, and not past Wheel.bigAt), the slots where
	// that reached Wheel.bigAt,
	// and the slots with chunks attached (see ahead.go). A slot is
	// occupied if its list is not empty or it has chunks.
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
	if raw := e.when.Load(); raw != ^notPending {
		if _, ok := dead(raw); ok {
			panic("timewheel/queue: Insert of an entry killed but still linked; Cancel it first")
		}
		panic(fmt.Sprintf("timewheel/queue: Insert of an entry already pending at tick %d", ^raw))
	}
	if e.prev != nil {
		untangle(e) // taken off another wheel's firing list lazily
	}
	when = max(when, w.now)
	e.when.Store(^when)
	w.n++
	w.place(e, when)
}

// place links e, whose deadline is when (or later, if Postpone moved it
// since when was read), into the slot when belongs to, or into the due
// list if it is due at the current tick, and returns true. A dead entry
// (see Entry.Kill) is dropped instead, and place returns false: its
// links are cleared, it leaves Len, and it is no longer dead, so that
// Revive refuses it.
func (w *Wheel) place(e *Entry, when int64) (placed bool) {
	if e.when.Load() >= deadBase {
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
