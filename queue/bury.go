package queue

// Burying: taking off the wheel entries that Entry.Kill stopped in place.

// drop takes e, unlinked by its caller, off the wheel if it is dead, and
// reports whether it did. A Revive that wins the race leaves e to be
// placed.
func (w *Wheel) drop(e *Entry) bool {
	for {
		raw := e.when.Load()
		if _, ok := dead(raw); !ok {
			return false
		}
		if e.when.CompareAndSwap(raw, idleWord) {
			e.prev, e.next = nil, nil
			w.n--
			return true
		}
	}
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
		if e.when.CompareAndSwap(raw, idleWord) {
			w.unlinkRemoved(e, raw)
			return true
		}
	}
}

// BuryAll buries every entry of es that is dead (see Bury), and returns
// how many it buried. It skips the others, and stray copies (see
// [Entry.Stray]), which Bury would refuse with a panic. The entries, then
// their neighbours, are loaded side by side before any is unlinked.
// The cache misses of entries last touched on other processors overlap. The
// complexity is O(len(es)).
func (w *Wheel) BuryAll(es []*Entry) int {
	var sum int64
	for _, e := range es {
		if e == nil {
			panic("timewheel/queue: BuryAll of a nil *Entry")
		}
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
