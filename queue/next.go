package queue

// Next and NextWake: the earliest deadline, or the tick a driver wakes at.

import "math/bits"

// Next returns the earliest pending deadline and false if nothing is
// pending. It is O(1) when a timer is due within 64 ticks. It is O(1) too
// when the earliest lies in a coarser slot whose earliest deadline the
// wheel remembers. Otherwise Next walks the slot's list and remembers the
// answer until the last timer due then leaves the slot (see the type's
// documentation).
func (w *Wheel) Next() (int64, bool) {
	return w.next(-1)
}

// NextWake returns a tick at which a driver should next call Expire, and
// false if nothing is pending. It is the earliest pending deadline, as
// Next, when that costs O(1). The exception is a coarse slot of more than
// 64 timers whose earliest deadline the wheel has forgotten (its earliest
// timers were cancelled). There NextWake returns the slot's start, where
// Expire moves its timers down and the deadline is known again: one wake
// with nothing due. If the wheel has timers to move down ahead of time
// before then (see [Wheel.Ahead]), it returns that tick instead. The
// complexity is O(1).
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
		// hold an earlier deadline. Wake at the slot's end, where Expire
		// files them again: no later than any later slot's first tick.
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
