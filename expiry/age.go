package expiry

import (
	"sync"

	"github.com/timewheel/timewheel/internal/lockcheck"
)

// WithAges makes the map record when each key entered it. Stats then
// reports how long the entries that left had been in the map, by Reason
// (Stats.ExpiredAge, DeletedAge, CapacityAge): the figure for sizing a
// ttl, which a count of evictions does not give. A key's age counts from
// the write that gave it a live entry to the moment it leaves. An expired
// entry leaves when its bucket fires, up to a granularity after its
// deadline. A value that replaces a live one (Set, Update, a reload)
// keeps the key's age. The time is read from the wheel's clock at the
// write and kept beside the entry: a small allocation per key that
// enters. A map without WithAges pays one predictable branch per key that
// enters or leaves.
func WithAges() Option {
	return func(c *config) { c.ages = true }
}

// ageTable is when the keys of a Map made WithAges entered it: a
// sync.Map from the entry to its key's entry time (ns after the map's
// epoch), written under the entry's shard's lock.
type ageTable[K comparable, V any] struct {
	born sync.Map // *entry[K, V] -> int64
}

// enteredLocked records that e's key entered the map at now. The
// caller holds e's shard's lock, which its callers' lock checks cover.
func (a *ageTable[K, V]) enteredLocked(e *entry[K, V], now int64) { a.born.Store(e, now) }

// movedLocked gives ne, which takes e's place, e's entry time. The
// caller holds e's shard's lock, which its callers' lock checks cover.
func (a *ageTable[K, V]) movedLocked(e, ne *entry[K, V]) {
	if t, ok := a.born.LoadAndDelete(e); ok {
		a.born.Store(ne, t)
	}
}

// leftAgeLocked forgets e, which left s for why at the wheel's now, and
// adds its age to s's total for why.
func (s *shard[K, V]) leftAgeLocked(e *entry[K, V], why Reason) {
	lockcheck.WriteHeld(&s.mu, "shard.leftAgeLocked")
	if t, ok := s.m.ages.born.LoadAndDelete(e); ok && why != Replaced {
		s.age[why] += s.m.now() - t.(int64)
	}
}
