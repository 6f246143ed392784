package queue

// Cancel and Reschedule: taking a pending entry off its list in O(1).

import "fmt"

// Cancel removes e if it is pending and reports whether it was; it
// removes a dead entry too (see [Entry.Kill]) and returns false. It panics
// if e is a copy of a pending entry (see [Entry.Stray]). It panics too if
// e is pending in another Wheel, where that is cheap to see: an entry
// belongs to the wheel it was inserted into (see Verify). The complexity
// is O(1).
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

// mine panics if e, a pending entry, is plainly pending in another Wheel:
// when w has none pending, or when e is alone in a list that is not one of
// w's. An entry of another wheel that shares its list with others is not
// caught: that would take a word per entry, or a walk. It corrupts both
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
// from its list's sentinel. The slot e was filed in need not be known,
// and e's deadline may have been postponed past it.
func (w *Wheel) remove(e *Entry) (pending bool) {
	return w.unlinkRemoved(e, e.when.Swap(idleWord))
}

// unlinkRemoved unlinks e, just marked not pending, whose word was raw,
// and reports whether it was pending (see remove).
func (w *Wheel) unlinkRemoved(e *Entry, raw int64) (pending bool) {
	when, pending := pendingAt(raw), isPending(raw)
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
