package queue

import (
	"fmt"
	"math"
	"math/bits"
)

// Moving timers down ahead of time (see the Wheel's documentation).
//
// A slot at level k > 0 is cascaded when the current tick reaches it. Its
// timers are walked and filed again a level down, one dependent cache
// miss each when they are cold. A level-1 slot is reached at the very
// tick its first timers fall due. For a burst of a million timers due
// together, that walk lands inside the burst, once for each level the
// timers sit above level 0, and makes the burst late.
//
// So the timers of a big slot are moved early, aheadSlice per Expire
// call, straight into per-tick lists. A slot is big once aheadMin timers
// were filed in it since it was last empty. Each 64 ticks a level-1 slot
// spans get a chunk of lists. The chunk stays attached to the slot that
// holds its span until that slot is reached. Reaching a level-1 slot then
// splices its chunk's 64 lists into level 0. Reaching a level-2 slot hands
// its chunks to the level-1 slots below: O(1) per chunk whatever the
// number of timers.
//
// When a big slot is moved:
//   - level 1: as soon as it is big;
//   - level 2: once it is the next one at level 2, from the start of the
//     slot before it (4.1 to 8.2 s ahead with a 1 ms tick);
//   - level 3 or above: never. It is reached at its start, minutes ahead
//     of its timers, and cascaded; its timers then fill big slots below.
//
// The chunks in use span at most two level-2 slots (the current one's
// level-1 slots and the next one), so a ring of 128 holds them.
//
// The timers keep their order. A chunk's list holds, in order, timers
// that were filed in the slot before the ones left in its list. Reaching
// the slot empties the chunks before it cascades the list. A slot's
// remembered earliest deadline (level.min) counts its chunks' timers as
// its own. A slot with chunks remembers none: Next reads its first
// chunk's first list and its own list.
//
// The downside of this choice is wakes and memory. A wheel with nothing
// due wakes to do this work (NextWake includes it). It wakes once per
// slice while a big slot is being moved, and once at the start of a big
// slot at level 3 or above. No timer is moved more often than a cascade
// would move it, only sooner (a level-2 timer once less: the chunk's list
// is its level-0 list). But a timer stopped after it was moved was moved
// for nothing. A chunk is 3.3 KB, allocated the first time its ring
// position is needed and kept: at most 430 KB per wheel.

const (
	aheadMin   = 1024 // a slot this many timers filed into since it was empty is moved ahead
	aheadSlice = 4096 // timers moved ahead per Expire call, at most
	ringChunks = 2 * levelSlots
)

// chunk is the 64 per-tick lists of one level-1 slot's span (ticks
// c*64 to c*64+63), filled ahead of time. It is attached to the slot
// whose span holds it (slotOf its first tick: level 1 or 2) until that
// slot is reached.
type chunk struct {
	c        int64  // chunk number: first tick >> levelBits; -1 when free
	occupied uint64 // bit t set iff lists[t] is not empty
	lists    [levelSlots]Entry
	hints    [levelSlots][]*Entry // as Wheel.hints, spliced with the lists
	hintN    [levelSlots]int32
}

// chunkOf returns ring position r's chunk, allocating it.
func (w *Wheel) chunkOf(r int) *chunk {
	ch := w.chunks[r]
	if ch == nil {
		ch = &chunk{c: -1}
		for t := range ch.lists {
			ch.lists[t].initList(slotCode - int64((numLevels+r)*levelSlots+t))
		}
		w.chunks[r] = ch
	}
	return ch
}

// attach returns the chunk for chunk number c, attaching it to slot i of
// level k (which holds its span) if it is not in use yet.
func (w *Wheel) attach(c int64, k, i int) *chunk {
	ch := w.chunkOf(int(c % ringChunks))
	if ch.c != c {
		if ch.c >= 0 {
			panic(fmt.Sprintf("timewheel/queue: chunk ring clash: %d and %d", ch.c, c))
		}
		ch.c = c
		l := w.levels[k]
		l.chunked |= 1 << i
		l.minN[i] = 0 // a chunked slot's earliest is not remembered
	}
	return ch
}

// push appends e, due at tick when of the chunk's span, to its list.
func (ch *chunk) push(e *Entry, when int64) {
	t := int(when) & (levelSlots - 1)
	ch.lists[t].pushBack(e)
	ch.occupied |= 1 << t
	if ch.hintN[t]%hintEvery == 0 {
		ch.hints[t] = append(ch.hints[t], e)
	}
	ch.hintN[t]++
}

// free returns an empty chunk to the ring.
func (ch *chunk) free() {
	ch.c, ch.occupied = -1, 0
}

// dropHints forgets the hints of list t.
func (ch *chunk) dropHints(t int) {
	clear(ch.hints[t])
	ch.hints[t], ch.hintN[t] = ch.hints[t][:0], 0
}

// chunksOf calls f with each chunk in use attached to slot i of level k,
// in tick order.
func (w *Wheel) chunksOf(k, i int, f func(*chunk)) {
	c0 := w.slotStart(k, i) >> levelBits
	n := int64(1)
	if k == 2 {
		n = levelSlots
	}
	for c := c0; c < c0+n; c++ {
		if ch := w.chunks[c%ringChunks]; ch != nil && ch.c == c {
			f(ch)
		}
	}
}

// Ahead returns the tick at which the wheel has timers to move down ahead
// of time (see the Wheel's documentation). An Expire at or after it does
// a slice of that work. It returns false if there is none. NextWake
// includes it; a driver that arms itself only for the deadlines it
// inserts must also arm itself for Ahead. The complexity is O(1).
func (w *Wheel) Ahead() (int64, bool) {
	w.ready()
	return w.ahead, w.ahead != math.MaxInt64
}

// wantAhead records that slot i of level k has become big.
func (w *Wheel) wantAhead(k, i int) {
	w.ahead = min(w.ahead, w.aheadAt(k, i))
}

// aheadAt returns the tick from which big slot i of level k is worked on.
func (w *Wheel) aheadAt(k, i int) int64 {
	now := w.now + 1 // the work of this tick is done
	switch k {
	case 1:
		return now
	case 2:
		return max(now, w.slotStart(2, i)-1<<(2*levelBits)) // the start of the slot before
	default:
		return max(now, w.slotStart(k, i))
	}
}

// nextAhead returns the tick of the wheel's next work ahead, or MaxInt64.
// O(levels).
func (w *Wheel) nextAhead() int64 {
	next := int64(math.MaxInt64)
	for k := 1; k < numLevels; k++ {
		if big := w.levels[k].big; big != 0 {
			next = min(next, w.aheadAt(k, bits.TrailingZeros64(big)))
		}
	}
	return next
}

// moveAhead does up to aheadSlice timers' worth of moving ahead at the
// current tick, nearest slot first, and sets when the next is due.
func (w *Wheel) moveAhead() {
	budget := w.slice
	for budget > 0 {
		k, i, ok := w.aheadSlot()
		if !ok {
			break
		}
		budget -= w.prepare(k, i, budget)
	}
	w.ahead = w.nextAhead()
}

// aheadSlot returns the big slot to move now: the first big one at level
// 1, else the next level-2 slot if big.
func (w *Wheel) aheadSlot() (k, i int, ok bool) {
	if big := w.levels[1].big; big != 0 {
		return 1, bits.TrailingZeros64(big), true
	}
	i = int(uint64(w.now)>>(2*levelBits))&(levelSlots-1) + 1
	if i < levelSlots && w.levels[2].big&(1<<i) != 0 {
		return 2, i, true
	}
	return 0, 0, false
}

// prepare moves up to budget timers from the head of slot i of level k
// (1 or 2) into the chunks of their ticks, and returns how many it took.
// A timer postponed past the slot is filed again where it now belongs.
func (w *Wheel) prepare(k, i, budget int) int {
	l := w.levels[k]
	s := &l.slots[i]
	last := w.slotStart(k, i) + (1<<(k*levelBits) - 1) // no overflow at the end of time
	e, n := s.next, 0
	for ; e != s && n < budget; n++ {
		next := e.next
		if when := e.load(); when <= last {
			w.attach(when>>levelBits, k, i).push(e, when)
		} else {
			l.minN[i] = 0 // it may have been counted at the slot's earliest
			w.place(e, when)
		}
		e = next
	}
	s.next, e.prev = e, s
	if s.empty() {
		l.adds[i] = 0
		l.big &^= 1 << i
		if l.chunked&(1<<i) == 0 {
			l.occupied &^= 1 << i
			l.minN[i] = 0
		}
	}
	return n
}

// settle hands the chunks of slot i of level k, which the current tick
// has just reached, to the level below. A chunk spanning the current tick
// goes to level 0, its first tick's list to the due list. Any other goes
// to the level-1 slot of its span. The slot's own list is cascaded after, so
// that the order of timers filed for one tick holds.
func (w *Wheel) settle(k, i int) {
	w.levels[k].chunked &^= 1 << i
	w.chunksOf(k, i, func(ch *chunk) {
		if ch.c != w.now>>levelBits {
			j := int(ch.c) & (levelSlots - 1)
			l1 := w.levels[1]
			l1.chunked |= 1 << j
			l1.occupied |= 1 << j
			l1.minN[j] = 0
			return
		}
		l0 := w.levels[0]
		for occ := ch.occupied; occ != 0; occ &= occ - 1 {
			t := bits.TrailingZeros64(occ)
			l0.slots[t].spliceBack(&ch.lists[t])
			w.hints[t], ch.hints[t] = ch.hints[t], w.hints[t]
			w.hintN[t], ch.hintN[t] = ch.hintN[t], 0
		}
		l0.occupied |= ch.occupied
		ch.free()
		if t := int(w.now) & (levelSlots - 1); l0.occupied&(1<<t) != 0 {
			// Due now: to the due list ahead of the timers the cascade
			// files there.
			l0.occupied &^= 1 << t
			w.warmHints(t)
			w.due.spliceBack(&l0.slots[t])
		}
	})
}

// chunkEmptied updates the wheel after a cancel emptied list t of ring
// position r's chunk.
func (w *Wheel) chunkEmptied(r, t int) {
	ch := w.chunks[r]
	ch.occupied &^= 1 << t
	ch.dropHints(t)
	if ch.occupied != 0 {
		return
	}
	k, i := w.slotOf(ch.c << levelBits)
	ch.free()
	busy := false
	w.chunksOf(k, i, func(*chunk) { busy = true })
	if l := w.levels[k]; !busy {
		l.chunked &^= 1 << i
		if l.slots[i].empty() {
			l.occupied &^= 1 << i
			l.minN[i] = 0
		}
	}
}

// nextChunked returns the earliest deadline in slot i of level k, which
// has chunks. It is the earlier of the first tick of its first chunk's
// first list and its own list's earliest. The list is walked for at most
// limit entries (no limit if negative); past that, the slot's start
// stands in. Nothing is remembered.
func (w *Wheel) nextChunked(k, i, limit int) int64 {
	next := int64(math.MaxInt64)
	w.chunksOf(k, i, func(ch *chunk) {
		if next == math.MaxInt64 {
			next = ch.c<<levelBits | int64(bits.TrailingZeros64(ch.occupied))
		}
	})
	s := &w.levels[k].slots[i]
	for e := s.next; e != s; e = e.next {
		if limit == 0 {
			return w.slotStart(k, i)
		}
		limit--
		next = min(next, e.load())
	}
	return next
}

// verifyChunks checks the chunks: each in use is attached to the slot
// that holds its span and is not empty; its lists' bits, entries and
// hints agree. It returns the number of entries they hold.
func (w *Wheel) verifyChunks() (int, error) {
	count := 0
	for r, ch := range w.chunks {
		if ch == nil {
			continue
		}
		for t := range ch.lists {
			s := &ch.lists[t]
			if sk, si, _ := s.sentinelSlot(); sk != numLevels+r || si != t {
				return 0, fmt.Errorf("chunk %d list %d: sentinel names %d/%d", r, t, sk, si)
			}
			if ch.c < 0 && !s.empty() {
				return 0, fmt.Errorf("free chunk %d holds entries", r)
			}
			if got, want := ch.occupied&(1<<t) != 0, !s.empty(); got != want {
				return 0, fmt.Errorf("chunk %d list %d: occupied bit %v, list non-empty %v", r, t, got, want)
			}
			if s.empty() && (len(ch.hints[t]) > 0 || ch.hintN[t] != 0) {
				return 0, fmt.Errorf("chunk %d list %d is empty but keeps %d hints", r, t, len(ch.hints[t]))
			}
			tick := ch.c<<levelBits | int64(t)
			for e := s.next; e != s; e = e.next {
				if e.next.prev != e {
					return 0, fmt.Errorf("chunk %d list %d broken", r, t)
				}
				if when := e.load(); when < tick || when <= w.now {
					return 0, fmt.Errorf("chunk %d list %d (tick %d) holds an entry due at %d, current tick %d", r, t, tick, when, w.now)
				}
				count++
			}
		}
		if ch.c < 0 {
			continue
		}
		if ch.occupied == 0 {
			return 0, fmt.Errorf("chunk %d (number %d) is empty but in use", r, ch.c)
		}
		if ch.c%ringChunks != int64(r) {
			return 0, fmt.Errorf("chunk number %d at ring position %d", ch.c, r)
		}
		start := ch.c << levelBits
		if start <= w.now {
			return 0, fmt.Errorf("chunk for ticks %d.. not settled at current tick %d", start, w.now)
		}
		k, i := w.slotOf(start)
		if l := w.levels[k]; k == 0 || k > 2 || l.chunked&(1<<i) == 0 || l.occupied&(1<<i) == 0 {
			return 0, fmt.Errorf("chunk for ticks %d.. is not attached to level %d slot %d", start, k, i)
		}
	}
	for k, l := range w.levels {
		for i := range l.slots {
			if l.chunked&(1<<i) == 0 {
				continue
			}
			found := false
			if k == 1 || k == 2 {
				w.chunksOf(k, i, func(*chunk) { found = true })
			}
			if !found {
				return 0, fmt.Errorf("level %d slot %d is marked chunked but has no chunk", k, i)
			}
			if l.minN[i] != 0 {
				return 0, fmt.Errorf("level %d slot %d is chunked but remembers an earliest deadline", k, i)
			}
		}
	}
	return count, nil
}
