package timewheel

import "time"

// DueAt returns the instant w has t due at, on w's clock (its deadline
// rounded up to the tick), and false if t is not pending: for the
// benchmarks that measure a burst's lateness against the deadlines the
// wheel itself took.
func DueAt(w *Wheel, t *Timer) (time.Time, bool) {
	when := t.e.When()
	if when < 0 {
		return time.Time{}, false
	}
	return w.epoch.Add(time.Duration(when) * w.tick), true
}

// LazyStops makes every Stop and Reset take the path of a goroutine on
// another processor than its timer's shard (see inbox.go), so that the
// lock-free paths run on one shard and under a test clock; it returns a
// func that restores the default. Tests that set it must not run in
// parallel with others.
func LazyStops() (restore func()) {
	lazyStops = true
	return func() { lazyStops = false }
}

// AwayLocks returns how many Stops from another processor than their
// timer's shard took the shard's lock.
func AwayLocks(w *Wheel) uint64 {
	var n uint64
	for _, s := range w.shards {
		s.mu.Lock()
		n += s.awayLocks
		s.mu.Unlock()
	}
	return n
}

// Linked returns the number of entries w's engines hold, pending or
// stopped lazily and not yet taken off (see inbox.go), without draining
// the inboxes as Len does.
func Linked(w *Wheel) int {
	n := 0
	for _, s := range w.shards {
		s.mu.Lock()
		n += s.q.Len()
		s.mu.Unlock()
	}
	return n
}
