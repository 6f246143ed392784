package expiry

import (
	"errors"
	"fmt"

	"github.com/timewheel/timewheel/internal/lockcheck"
)

// ErrTooHeavy is returned, wrapped with the weight and the bound, for a
// value heavier on its own than the map's maximum weight ([WithMaxWeight]):
// no eviction could make room for it, so it is not stored.
var ErrTooHeavy = errors.New("expiry: entry heavier than the maximum weight")

// WithMaxWeight bounds the total weight of the map's entries, each
// weighed by weigher when it is stored (bytes, say). Storing an entry
// that would take the total past max first evicts the entries closest to
// expiry, as [WithCapacity] does, never the key being written. An entry
// heavier than max alone is refused, and the map is left as it was. Set,
// Compute, GetOrSet, SetIfAbsent, the loaders and Restore then return an
// error wrapping [ErrTooHeavy]; Update and CompareAndSwap return false.
// It may be combined with WithCapacity; a map with either has one shard
// (see the package documentation).
//
// weigher is called under the map's lock, for each value stored and
// again for each value that leaves or is replaced. It must be cheap
// and must not call the map. It must give the same weight for the same
// key and value each time: a value whose weight changes while it is in
// the map (a pointer to something that grows) makes the total wrong. Its K
// and V must be those of the Map, or New panics. A max of 0 is no bound,
// the default, as for WithCapacity. WithMaxWeight panics if weigher is
// nil.
func WithMaxWeight[K comparable, V any](max uint64, weigher func(K, V) uint64) Option {
	if weigher == nil {
		panic("expiry: WithMaxWeight: nil weigher")
	}
	if max == 0 {
		return func(c *config) { c.maxWeight, c.weigher = 0, nil }
	}
	return func(c *config) { c.maxWeight, c.weigher = max, weigher }
}

// tooHeavy returns the error for storing v under k if v alone is heavier
// than the maximum weight, or nil.
func (m *Map[K, V]) tooHeavy(k K, v V) error {
	if m.weigher == nil {
		return nil
	}
	if w := m.weigher(k, v); w > m.maxWeight {
		return fmt.Errorf("%w: key %v weighs %d, the maximum is %d", ErrTooHeavy, k, w, m.maxWeight)
	}
	return nil
}

// weightLocked returns the weight of k and v, for the shard's total; 0
// without a weigher.
func (s *shard[K, V]) weightLocked(k K, v V) uint64 {
	lockcheck.WriteHeld(&s.mu, "shard.weightLocked")
	if s.m.weigher == nil {
		return 0
	}
	return s.m.weigher(k, v)
}

// fitLocked makes room in a map with a maximum weight for add more
// weight in place of gone, a part of the total leaving with it, evicting
// the entries closest to expiry until it fits. keep, if not nil, is the
// entry being written, frozen at deadline d: it is taken out of its
// bucket meanwhile, so that it is not evicted, and put back with its
// deadline still frozen. The sums are in uint64 and never overflow: the
// total is at most the maximum, and gone is part of it.
func (s *shard[K, V]) fitLocked(add, gone uint64, keep *entry[K, V], d, now int64) {
	lockcheck.WriteHeld(&s.mu, "shard.fitLocked")
	if s.fitsLocked(add, gone) {
		return
	}
	if keep != nil {
		s.unlinkLocked(keep)
	}
	for !s.fitsLocked(add, gone) && len(s.order) > 0 {
		s.evictOneLocked(now)
	}
	if keep != nil {
		s.attachLocked(keep, s.bucketLocked(s.m.dueFor(d), now))
	}
}

// fitsLocked reports whether the total, less gone, plus add is within
// the maximum weight.
func (s *shard[K, V]) fitsLocked(add, gone uint64) bool {
	lockcheck.WriteHeld(&s.mu, "shard.fitsLocked")
	return add <= s.m.maxWeight-(s.weight-gone)
}

// reweighLocked counts, in the shard's total, e's value, frozen at d,
// being replaced by v, after making room for the difference.
func (s *shard[K, V]) reweighLocked(e *entry[K, V], v V, d, now int64) {
	lockcheck.WriteHeld(&s.mu, "shard.reweighLocked")
	add, gone := s.weightLocked(e.key, v), s.weightLocked(e.key, e.val)
	s.fitLocked(add, gone, e, d, now)
	s.weight = s.weight - gone + add
}
