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

// drop takes e, unlinked by its caller, off the wheel if it is dead, and
// reports whether it did. A Revive that wins the race leaves e to be
// placed.
func (w *Wheel) drop(e *Entry) bool {
	for {
		raw := e.when.Load()
		if _, ok := dead(raw); !ok {
			return false
		}
		if e.when.CompareAndSwap(raw, ^notPending) {
			e.prev, e.next = nil, nil
			w.n--
			return true
		}
	}
}

// slotOf returns the level and slot of a deadline after the current tick.
func (w *Wheel) slotOf(when int64) (k, i int) {
	k = (bits.Len64(uint64(when^w.now)) - 1) / levelBits
	i = int(uint64(when)>>(k*levelBits)) & (levelSlots - 1)
	return k, i
}

// Cancel removes e if it is pending and reports whether it was; it
// removes a dead entry too (see [Entry.Kill]) and returns false. It panics
// if e is a copy of a pending entry (see [Entry.Stray]), or pending in
// another Wheel where that is cheap to see (an entry belongs to the wheel
// it was inserted into; see Verify). The complexity is O(1).
func (w *Wheel) Cancel(e *Entry) bool {
	if e == nil {
		panic("timewheel/queue: Cancel of a nil *Entry")
	}
	if !e.linked() {
		return false
	}
	w.tidied()
	w.mine(e, "Cancel")
	return w.remove(e)
}

// Bury removes e if it is dead (see [Entry.Kill]) and still linked, and
// reports whether it did. Unlike Cancel it never removes a pending
// entry, so it may be called for an entry that another goroutine may
// Revive at any moment: a compare-and-swap settles which wins. It panics
// as Cancel does. The complexity is O(1).
func (w *Wheel) Bury(e *Entry) bool {
	if e == nil {
		panic("timewheel/queue: Bury of a nil *Entry")
	}
	for {
		raw := e.when.Load()
		if _, ok := dead(raw); !ok || !e.linked() {
			return false
		}
		w.tidied()
		w.mine(e, "Bury")
		if e.when.CompareAndSwap(raw, ^notPending) {
			w.unlinkRemoved(e, raw)
			return true
		}
	}
}

// BuryAll buries every entry of es that is dead (see Bury), skipping
// those that are not and those that are stray copies (see
// [Entry.Stray]), which Bury would refuse with a panic; it returns how
// many it buried. The entries are loaded, and then their neighbours in
// their lists, side by side before any is unlinked, so that the cache
// misses of entries last touched on other processors overlap. The
// complexity is O(len(es)).
func (w *Wheel) BuryAll(es []*Entry) int {
	var sum int64
	for _, e := range es {
		sum += e.when.Load()
	}
	for _, e := range es {
		if p, n := e.prev, e.next; p != nil && n != nil {
			sum += p.when.Load() ^ n.when.Load()
		}
	}
	w.warmSum += sum
	buried := 0
	for _, e := range es {
		if !e.Stray() && w.Bury(e) {
			buried++
		}
	}
	return buried
}

// mine panics if e, a pending entry, is plainly pending in another Wheel:
// when w has none pending, or when e is alone in a list that is not one of
// w's. An entry of another wheel that shares its list with others is not
// caught (that would take a word per entry, or a walk); it corrupts both
// wheels' counts, which Verify reports.
func (w *Wheel) mine(e *Entry, op string) {
	if w.n > 0 && (e.prev != e.next || w.owns(e.prev)) {
		return
	}
	panic(fmt.Sprintf("timewheel/queue: %s of an Entry pending in another Wheel (due at tick %d); each entry belongs to the wheel it was inserted into", op, e.load()))
}

// owns reports whether s, a list sentinel, is one of w's.
func (w *Wheel) owns(s *Entry) bool {
	k, i, ok := s.sentinelSlot()
	switch {
	case !ok:
		return s == &w.due || s == &w.firing
	case k < numLevels:
		return w.levels[k] != nil && s == &w.levels[k].slots[i]
	default:
		ch := w.chunks[k-numLevels]
		return ch != nil && s == &ch.lists[i]
	}
}

// remove unlinks e, a pending or dead entry, marks it not pending and
// reports whether it was pending. A slot that e leaves empty is found
// from its list's sentinel, so the slot e was filed in need not be known:
// e's deadline may have been postponed past it.
func (w *Wheel) remove(e *Entry) (pending bool) {
	return w.unlinkRemoved(e, e.when.Swap(^notPending))
}

// unlinkRemoved unlinks e, just marked not pending, whose word was raw,
// and reports whether it was pending (see remove).
func (w *Wheel) unlinkRemoved(e *Entry, raw int64) (pending bool) {
	when, pending := ^raw, raw < 0
	emptied := e.unlink()
	w.n--
	if emptied != nil {
		if k, i, ok := emptied.sentinelSlot(); ok {
			w.emptied(k, i)
		}
		return pending
	}
	if pending && when > w.now {
		// Keeps the count of timers at the slot's earliest deadline,
		// exact for entries never postponed. For a postponed one it may
		// miscount, which only makes the slot forget its earliest
		// deadline sooner or later: never wrong (see level.min).
		k, i := w.slotOf(when)
		if l := w.levels[k]; l.minN[i] > 0 && when == l.min[i] {
			l.minN[i]--
		}
	}
	return pending
}

// emptied updates the wheel after a cancel emptied the list of slot i of
// level k, or, for k of numLevels and above, list i of chunk k-numLevels.
func (w *Wheel) emptied(k, i int) {
	if k >= numLevels {
		w.chunkEmptied(k-numLevels, i)
		return
	}
	l := w.levels[k]
	if k == 0 {
		w.dropHints(i) // else they would pin cancelled entries until the slot next fires
	}
	l.adds[i] = 0
	l.big &^= 1 << i
	if l.chunked&(1<<i) == 0 {
		l.occupied &^= 1 << i
		l.minN[i] = 0
	}
}

// Reschedule moves e to tick when, inserting it if it was not pending, and
// reports whether it was pending. It counts as a new schedule for the order
// of equal deadlines. It panics as Cancel does. The complexity is O(1).
func (w *Wheel) Reschedule(e *Entry, when int64) bool {
	if e == nil {
		panic("timewheel/queue: Reschedule of a nil *Entry")
	}
	pending := false
	if e.linked() {
		w.tidied()
		w.mine(e, "Reschedule")
		pending = w.remove(e)
	}
	w.Insert(e, when)
	return pending
}

// Next returns the earliest pending deadline and false if nothing is
// pending. It is O(1) when a timer is due now or within 64 ticks, and when
// the earliest lies in a coarser slot whose earliest deadline the wheel
// remembers: it does from the first time it is asked until the last timer
// due then leaves the slot. Otherwise Next walks the slot's list (see the
// type's documentation) and remembers the answer.
func (w *Wheel) Next() (int64, bool) {
	return w.next(-1)
}

// NextWake returns a tick at which a driver should next call Expire: the
// earliest pending deadline, as Next, when that costs O(1); otherwise,
// when the earliest lies in a coarse slot of more than 64 timers whose
// earliest deadline the wheel has forgotten (its earliest timers were
// cancelled), the start of that slot, where Expire moves its timers down
// and the deadline is known again. If the wheel has timers to move down
// ahead of time before then (see [Wheel.Ahead]), it returns that tick
// instead. It returns false if nothing is pending. The complexity is O(1).
func (w *Wheel) NextWake() (int64, bool) {
	next, ok := w.next(levelSlots)
	if ok && w.ahead < next {
		w.ahead = w.nextAhead() // it may be stale: its slots emptied
		next = min(next, w.ahead)
	}
	return next, ok
}

// next returns the earliest deadline, walking at most limit entries of a
// coarse slot (no limit if negative) and the slot's start past it.
func (w *Wheel) next(limit int) (int64, bool) {
	w.ready()
	if !w.due.empty() {
		return w.now, true
	}
	k, i, ok := w.first()
	if !ok {
		return 0, false
	}
	l := w.levels[k]
	if k == 0 {
		return w.slotStart(0, i), true
	}
	if l.chunked&(1<<i) != 0 {
		return w.nextChunked(k, i, limit), true
	}
	if l.minN[i] > 0 {
		return l.min[i], true
	}
	s := &l.slots[i]
	next, count := s.next.load(), int32(0)
	for e := s.next; e != s; e = e.next {
		if limit == 0 {
			return w.slotStart(k, i), true
		}
		limit--
		switch when := e.load(); {
		case when < next:
			next, count = when, 1
		case when == next:
			count++
		}
	}
	if end := w.slotStart(k, i) + 1<<(k*levelBits); next >= end && end > 0 {
		// Every entry was postponed past the slot, and a later slot may
		// hold an earlier deadline: wake at the slot's end, where Expire
		// files them again, no later than any later slot's first tick.
		next, count = end, 1
	}
	l.min[i], l.minN[i] = next, count
	return next, true
}

// first returns the lowest occupied level and its first occupied slot.
func (w *Wheel) first() (k, i int, ok bool) {
	for k, l := range w.levels {
		if l.occupied != 0 {
			return k, bits.TrailingZeros64(l.occupied), true
		}
	}
	return 0, 0, false
}

// slotStart returns the first tick of slot i at level k: the current tick's
// digits above level k, i at level k, zeros below.
func (w *Wheel) slotStart(k, i int) int64 {
	shift := uint(k * levelBits)
	upper := uint64(w.now) >> (shift + levelBits) << (shift + levelBits)
	return int64(upper | uint64(i)<<shift)
}

// Expire moves the current tick forward to now, firing in order every timer
// due by then, and returns how many fired. Each timer is removed before fire
// is called with it, so fire may schedule, cancel or reschedule any timer
// (including the one it was given) but must not call Expire. A timer made
// due now by fire is fired by this call only if the current tick still has
// a slot to reach; otherwise it waits for the next Expire. Then, if Ahead
// is due by now, it moves up to 4,096 timers of big slots down ahead of
// time (see the type's documentation). The complexity is O(1) per timer
// fired plus O(1) per slot reached, each reached slot at level k > 0
// moving its timers down a level, unless they were moved ahead, plus O(1)
// per timer moved ahead.
func (w *Wheel) Expire(now int64, fire func(*Entry)) int {
	if fire == nil {
		panic("timewheel/queue: Expire with a nil fire func")
	}
	w.ready()
	fired := w.fireDue(fire)
	for {
		k, i, ok := w.first()
		if !ok {
			break
		}
		start := w.slotStart(k, i)
		if start > now {
			break
		}
		w.now = start // never early: only now is start <= the caller's now
		l := w.levels[k]
		l.occupied &^= 1 << i
		if k == 0 {
			w.warmHints(i)
			w.due.spliceBack(&l.slots[i])
		} else {
			l.minN[i], l.adds[i] = 0, 0
			l.big &^= 1 << i
			if l.chunked&(1<<i) != 0 {
				w.settle(k, i)
			}
			w.cascade(&l.slots[i])
		}
		fired += w.fireDue(fire)
	}
	w.now = max(w.now, now)
	if w.ahead <= w.now {
		w.moveAhead()
	}
	return fired
}

// cascade empties the slot whose sentinel is s, placing each of its entries
// again relative to the current tick: in a lower level, or in the due list
// if due at the current tick. The slot's order is kept.
func (w *Wheel) cascade(s *Entry) {
	if s.empty() {
		return // its timers were all moved ahead
	}
	e, last := s.next, s.prev
	s.prev, s.next = s, s
	for {
		next := e.next
		when := e.load()
		if w.place(e, when) && when > w.now {
			if k, i := w.slotOf(when); k == 0 {
				if w.hintN[i]%hintEvery == 0 {
					w.hints[i] = append(w.hints[i], e)
				}
				w.hintN[i]++
			}
		}
		if e == last {
			return
		}
		e = next
	}
}

// warmHints hands the hints of level-0 slot i, about to be spliced into
// the due list, to fireDue, and forgets them.
func (w *Wheel) warmHints(i int) {
	w.dueHints = append(w.dueHints, w.hints[i]...)
	w.dropHints(i)
}

// warmChains loads the entries of the chains that start at chains (at
// most warmChains of them), up to hintEvery of each, walking them side by
// side. A burst of cold timers due at one tick is a long chain of
// dependent cache misses; walked as many chains, the misses overlap.
func (w *Wheel) warmChains(chains []*Entry) {
	// The walk's positions are on the stack: stored in chains, each
	// step would go through the write barrier while the collector marks.
	var at [warmChains]*Entry
	n := copy(at[:], chains)
	var sum int64
	for range hintEvery {
		for j, e := range at[:n] {
			if e != nil {
				sum += e.load()
				at[j] = e.next // nil once cancelled: the chain stops
			}
		}
	}
	w.warmSum += sum
}

// dropHints forgets the hints of level-0 slot i.
func (w *Wheel) dropHints(i int) {
	clear(w.hints[i])
	w.hints[i], w.hintN[i] = w.hints[i][:0], 0
}

// fireDue fires the entries in the due list. Entries fire may add to the
// due list wait for the next call.
//
// It takes entries off the firing list lazily, because each pointer it
// writes goes through the write barrier when the collector marks during
// a burst: claim marks an entry not pending, which is all that taking it
// changes; its links, and the list's to it, stay as they were until tidy,
// every tidyEvery entries, clears them and links the rest of the list to
// the sentinel. That is two pointer writes per entry and two per tidy,
// where unlinking each entry takes four. In between, the list is whole,
// so that Stray and Cancel see every entry as before, and an entry taken
// is not pending: Cancel returns false for it and Insert may file it
// again, in this wheel, which tidies first, as every method that changes
// or walks a list does (see ready), or in another (see untangle). fireDue
// goes on from where tidy left the list when fire or claim changed it.
func (w *Wheel) fireDue(fire func(*Entry)) int {
	if w.due.empty() {
		return 0
	}
	w.firing.spliceBack(&w.due)
	chains := w.dueHints
	if len(chains) < 2 {
		// At most one chain: a short list, which the two-ended walk
		// covers; one chain would be walked hintEvery steps round it.
		clear(chains)
		chains = chains[:0]
		w.warm(&w.firing)
	}
	fired := 0
	s := &w.firing
	for j := 0; !s.empty(); j += warmChains {
		// A batch of chains warmed, then fired while in the caches.
		if j < len(chains) {
			w.warmChains(chains[j:min(j+warmChains, len(chains))])
		}
		e := s.next
		for n := 0; n < warmChains*hintEvery && e != s; n++ {
			next := e.next
			w.lazy = true
			if w.claim(e) { // taken off the list, lazily
				w.n--
				fired++
				fire(e)
			}
			if n%tidyEvery == tidyEvery-1 {
				w.tidy()
			}
			if !w.lazy {
				next = s.next // fire or claim tidied, and may have changed the list
			}
			e = next
		}
		w.tidy()
	}
	clear(chains)
	w.dueHints = chains[:0]
	return fired
}

// tidy finishes taking off the firing list the entries fireDue took off
// lazily (see fireDue).
func (w *Wheel) tidy() {
	tidyList(&w.firing)
	w.lazy = false
}

// tidyList clears the links of the entries taken lazily off the firing
// list whose sentinel is s, the first ones on it, and links the first
// entry still pending, or s, to s.
func tidyList(s *Entry) {
	e := s.next
	for e != s && e.when.Load() == ^notPending {
		next := e.next
		e.prev, e.next = nil, nil
		e = next
	}
	s.next, e.prev = e, s
}

// untangle tidies the firing list of another Wheel that e, not pending but
// with links, was taken off lazily, so that e may be filed anew: walking
// back from e to that list's sentinel, past at most tidyEvery entries
// taken.
func untangle(e *Entry) {
	s := e.prev
	for s.when.Load() == ^notPending {
		s = s.prev
	}
	tidyList(s)
}

// tidyEvery is how many entries fireDue takes off lazily between tidies:
// few enough that tidy finds them in the first-level cache. (Tidying at
// the end of each 512-entry batch made the bare engine's fires 20 %
// slower, outside a collection, than unlinking each; every 16, 3 %
// faster: BenchmarkBurst, window-ns/fire.)
const tidyEvery = 16

// warmChains is how many of the due list's hint chains fireDue warms at a
// time: enough misses to overlap, few enough entries to stay cached.
const warmChains = 16

// claim takes e, the first pending entry on the firing list, for firing:
// it marks e not pending, which takes it off the list lazily (see
// fireDue), and returns true, unless Postpone has moved e's deadline past
// the current tick, in which case it files e again there and returns
// false. The compare-and-swap settles a race with Postpone either way.
func (w *Wheel) claim(e *Entry) bool {
	for {
		raw := e.when.Load()
		if _, dead := dead(raw); dead || ^raw > w.now {
			w.tidy() // e is the first on the list
			e.unlink()
			w.place(e, e.load()) // which drops a dead entry
			return false
		}
		if e.when.CompareAndSwap(raw, ^notPending) {
			return true
		}
	}
}

// warm walks the list whose sentinel is s from both ends at once, loading
// every entry before fireDue unlinks them one by one. A list is a chain of
// dependent loads, one cache miss per entry when a burst of cold timers
// falls due; two chains walked side by side keep two misses in flight, so
// the burst costs about half the memory latency it would otherwise. The
// walk reads and changes nothing.
func (w *Wheel) warm(s *Entry) {
	var sum int64
	f, b := s.next, s.prev
	for f != b && f.prev != b {
		sum += f.load() ^ b.load()
		f, b = f.next, b.prev
	}
	w.warmSum += sum // keeps the loads
}

// Verify checks every invariant of the wheel and returns an error naming
// the first one broken. It walks every entry: it is meant for tests, with
// no Postpone running.
func (w *Wheel) Verify() error {
	w.ready()
	count := 0
	for _, s := range []*Entry{&w.due, &w.firing} {
		for e := s.next; e != s; e = e.next {
			if e.next.prev != e {
				return fmt.Errorf("due list broken at tick %d", e.load())
			}
			if e.load() < 0 {
				return fmt.Errorf("due list holds an entry that is not pending")
			}
			count++
		}
	}
	for k, l := range w.levels {
		for i := range l.slots {
			s := &l.slots[i]
			if got, want := l.occupied&(1<<i) != 0, !s.empty() || l.chunked&(1<<i) != 0; got != want {
				return fmt.Errorf("level %d slot %d: occupied bit %v, list non-empty or chunked %v", k, i, got, want)
			}
			if s.empty() && (l.adds[i] != 0 || l.big&(1<<i) != 0) {
				return fmt.Errorf("level %d slot %d is empty but counts %d timers filed", k, i, l.adds[i])
			}
			if sk, si, ok := s.sentinelSlot(); !ok || sk != k || si != i {
				return fmt.Errorf("level %d slot %d: sentinel names level %d slot %d", k, i, sk, si)
			}
			for e := s.next; e != s; e = e.next {
				when := e.load()
				if e.next.prev != e {
					return fmt.Errorf("level %d slot %d: list broken at tick %d", k, i, when)
				}
				if when <= w.now {
					return fmt.Errorf("level %d slot %d: entry due at %d, not after current tick %d", k, i, when, w.now)
				}
				// Postponed entries stay where they were filed: the slot
				// of the deadline may be later than the entry's, never
				// earlier, or the wheel would reach the entry too late.
				if start := w.slotStart(k, i); when < start {
					return fmt.Errorf("entry due at %d in level %d slot %d, which starts later, at %d", when, k, i, start)
				}
				count++
			}
		}
	}
	chunked, err := w.verifyChunks()
	if err != nil {
		return err
	}
	if count += chunked; count != w.n {
		return fmt.Errorf("Len is %d, but %d entries are linked", w.n, count)
	}
	if want := w.nextAhead(); w.ahead > want {
		return fmt.Errorf("work ahead is due at %d, but is set for %d", want, w.ahead)
	}
	for i := range w.hints {
		if w.levels[0].slots[i].empty() && (len(w.hints[i]) > 0 || w.hintN[i] != 0) {
			return fmt.Errorf("level 0 slot %d is empty but keeps %d hints", i, len(w.hints[i]))
		}
	}
	return w.verifyNext()
}

// verifyNext checks each slot's remembered earliest deadline: a lower
// bound of the slot's deadlines.
func (w *Wheel) verifyNext() error {
	for k, l := range w.levels {
		for i := range l.slots {
			if l.minN[i] == 0 {
				continue
			}
			if k == 0 {
				return fmt.Errorf("level 0 slot %d remembers an earliest deadline", i)
			}
			s := &l.slots[i]
			for e := s.next; e != s; e = e.next {
				if when := e.load(); when < l.min[i] {
					return fmt.Errorf("level %d slot %d remembers %d, but an entry is due at %d", k, i, l.min[i], when)
				}
			}
		}
	}
	return nil
}
