package expiry

import "github.com/timewheel/timewheel/internal/lockcheck"

// The optional work of a write: the weight bound (WithMaxWeight), the
// refresh times (WithRefresh), the entry times (WithAges) and the insert
// and update callbacks. A map without any of them (m.hooks false) pays
// one predictable branch for all of them at each step of a write. These
// helpers, kept out of line, do the work for a map with some. The caller
// holds the shard's lock.

// replacingLocked makes room in the weight bound for v replacing e's
// value; e is frozen at d, live at now.
//
//go:noinline
func (s *shard[K, V]) replacingLocked(e *entry[K, V], v V, d, now int64) {
	lockcheck.WriteHeld(&s.mu, "shard.replacingLocked")
	if s.m.weigher != nil {
		s.reweighLocked(e, v, d, now)
	}
}

// replacedLocked records that e, k's entry, holds v in place of old
// since now: its refresh time, and the update callback. The Replaced
// callback is queued already.
//
//go:noinline
func (s *shard[K, V]) replacedLocked(e *entry[K, V], k K, old, v V, now int64) {
	lockcheck.WriteHeld(&s.mu, "shard.replacedLocked")
	if s.m.refresh != nil {
		s.m.refresh.wroteLocked(e, now)
	}
	if s.m.onUpdate != nil {
		s.queueChangeLocked(updated, k, old, v)
	}
}

// insertedLocked records that e, a new entry of k and v, entered at now.
//
//go:noinline
func (s *shard[K, V]) insertedLocked(e *entry[K, V], k K, v V, now int64) {
	lockcheck.WriteHeld(&s.mu, "shard.insertedLocked")
	if s.m.refresh != nil {
		s.m.refresh.wroteLocked(e, now)
	}
	if s.m.ages != nil {
		s.m.ages.enteredLocked(e, now)
	}
	if s.m.onInsert != nil {
		s.queueChangeLocked(inserted, k, v, v)
	}
}

// movedLocked gives ne, which takes e's place, what is kept beside e.
//
//go:noinline
func (s *shard[K, V]) movedLocked(e, ne *entry[K, V]) {
	lockcheck.WriteHeld(&s.mu, "shard.movedLocked")
	if s.m.refresh != nil {
		s.m.refresh.movedLocked(e, ne)
	}
	if s.m.ages != nil {
		s.m.ages.movedLocked(e, ne)
	}
}

// removedLocked forgets e, which left for why: its weight, its refresh
// time, and its entry time, which counts in the ages.
//
//go:noinline
func (s *shard[K, V]) removedLocked(e *entry[K, V], why Reason) {
	lockcheck.WriteHeld(&s.mu, "shard.removedLocked")
	if s.m.weigher != nil {
		s.weight -= s.weightLocked(e.key, e.val)
	}
	if s.m.refresh != nil {
		s.m.refresh.states.Delete(e)
	}
	if s.m.ages != nil {
		s.leftAgeLocked(e, why)
	}
}
