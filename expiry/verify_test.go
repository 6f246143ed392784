package expiry

import (
	"fmt"
	"math/bits"
)

// verify checks every invariant of the map's structure, with every shard
// locked: each entry is in the shard of its key, in the bucket of its
// deadline, once, and in items; the lists are well linked and their
// counts right; the heap is a heap of exactly the live buckets; the
// capacity holds, and a map with a capacity has one shard.
func (m *Map[K, V]) verify() error {
	m.lockAll()
	defer m.unlockAll()
	total := 0
	for i := range m.shards {
		s := &m.shards[i]
		n, err := s.verifyLocked()
		if err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
		for e := range s.items.all() {
			if m.shardFor(e.key) != s {
				return fmt.Errorf("shard %d: key %v belongs in another shard", i, e.key)
			}
		}
		if err := s.items.verify(m.seed); err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
		total += n
	}
	if m.capacity > 0 && (len(m.shards) != 1 || total > m.capacity) {
		return fmt.Errorf("%d entries in %d shards, capacity %d", total, len(m.shards), m.capacity)
	}
	if m.weigher != nil {
		s := &m.shards[0]
		var w uint64
		over := false
		for e := range s.items.all() {
			var carry uint64
			w, carry = bits.Add64(w, m.weigher(e.key, e.val), 0)
			over = over || carry != 0
		}
		if len(m.shards) != 1 || over || w != s.weight || w > m.maxWeight {
			return fmt.Errorf("weight %d counted %d in %d shards, maximum %d", w, s.weight, len(m.shards), m.maxWeight)
		}
	}
	return nil
}

// verifyLocked checks one shard and returns its number of entries.
func (s *shard[K, V]) verifyLocked() (int, error) {
	total := 0
	for due, b := range s.buckets {
		if b.due != due || b.dead || b.n == 0 || b.s != s {
			return 0, fmt.Errorf("bucket %d: due %d dead %v n %d", due, b.due, b.dead, b.n)
		}
		n := 0
		var prev *entry[K, V]
		for e := b.head; e != nil; e = e.next {
			switch {
			case e.b != b:
				return 0, fmt.Errorf("entry %v: in bucket %d, points to %p", e.key, due, e.b)
			case e.prev != prev:
				return 0, fmt.Errorf("entry %v: bad prev link", e.key)
			case s.m.dueFor(e.deadline.Load()) < due:
				return 0, fmt.Errorf("entry %v: deadline %d in the later bucket %d", e.key, e.deadline.Load(), due)
			case s.items.find(e.key, s.m.hash(e.key)) != e:
				return 0, fmt.Errorf("entry %v: not in items", e.key)
			}
			prev = e
			n++
		}
		if n != b.n || b.tail != prev {
			return 0, fmt.Errorf("bucket %d: %d entries, count %d, tail ok %v", due, n, b.n, b.tail == prev)
		}
		total += n
	}
	if total != s.items.n {
		return 0, fmt.Errorf("%d entries in buckets, %d in items", total, s.items.n)
	}
	if !s.m.bounded {
		if len(s.order) != 0 {
			return 0, fmt.Errorf("heap of %d buckets without a capacity", len(s.order))
		}
		return total, nil
	}
	if len(s.order) != len(s.buckets) {
		return 0, fmt.Errorf("heap of %d buckets, %d live", len(s.order), len(s.buckets))
	}
	for i, b := range s.order {
		if b.index != i || s.buckets[b.due] != b {
			return 0, fmt.Errorf("heap[%d]: index %d, live %v", i, b.index, s.buckets[b.due] == b)
		}
		if i > 0 && s.order[(i-1)/2].due > b.due {
			return 0, fmt.Errorf("heap[%d]: due %d below its parent's", i, b.due)
		}
	}
	return total, nil
}

// shardFor returns the shard of k, for tests.
func (m *Map[K, V]) shardFor(k K) *shard[K, V] {
	s, _ := m.locate(k)
	return s
}
