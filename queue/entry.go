package queue

// Entry is one timer in a [Wheel]: two links and a deadline, nothing else.
// It is intrusive: a caller that wants no allocation of its own per timer
// embeds an Entry in its timer type and passes it to [Wheel.Insert]. The
// zero Entry is a timer that is not pending.
type Entry struct {
	prev, next *Entry // links in a slot or in the due list; nil when not pending
	when       int64  // deadline tick
}

// When returns the tick the entry falls due at. After scheduling, a
// deadline at or before the wheel's current tick reads as that tick.
func (e *Entry) When() int64 { return e.when }

// Pending reports whether the entry is scheduled and has not fired or been
// cancelled.
func (e *Entry) Pending() bool { return e.prev != nil }

// initList makes e an empty circular list: a sentinel pointing at itself.
func (e *Entry) initList() { e.prev, e.next = e, e }

// empty reports whether the list whose sentinel is e holds no entries.
func (e *Entry) empty() bool { return e.next == e }

// pushBack links x at the tail of the list whose sentinel is e.
func (e *Entry) pushBack(x *Entry) {
	x.prev, x.next = e.prev, e
	e.prev.next = x
	e.prev = x
}

// unlink removes e from whatever list holds it and marks it not pending.
func (e *Entry) unlink() {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
}

// spliceBack moves every entry of the list whose sentinel is from to the
// tail of the list whose sentinel is e, leaving from empty.
func (e *Entry) spliceBack(from *Entry) {
	if from.empty() {
		return
	}
	first, last := from.next, from.prev
	first.prev = e.prev
	e.prev.next = first
	last.next = e
	e.prev = last
	from.initList()
}
