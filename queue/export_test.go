package queue

// NewWheelAhead returns an empty wheel that moves a slot's timers ahead
// of time once big of them were filed in it, slice per Expire call (see
// ahead.go), so that tests reach that work with few timers.
func NewWheelAhead(big int32, slice int) *Wheel {
	w := NewWheel()
	w.bigAt, w.slice = big, slice
	return w
}

// Links returns e's list links, for tests that check that an entry not
// pending holds none.
func (e *Entry) Links() (prev, next *Entry) { return e.prev, e.next }
