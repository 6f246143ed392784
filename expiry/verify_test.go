package expiry

import "fmt"

// verify checks every invariant of the map's structure: each entry is in
// the bucket of its deadline, once, and in items; the lists are well
// linked and their counts right; the heap is a heap of exactly the live
// buckets; the capacity holds.
func (m *Map[K, V]) verify() error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	total := 0
	for due, b := range m.buckets {
		if b.due != due || b.dead || b.n == 0 {
			return fmt.Errorf("bucket %d: due %d dead %v n %d", due, b.due, b.dead, b.n)
		}
		n := 0
		var prev *entry[K, V]
		for e := b.head; e != nil; e = e.next {
			switch {
			case e.b != b:
				return fmt.Errorf("entry %v: in bucket %d, points to %p", e.key, due, e.b)
			case e.prev != prev:
				return fmt.Errorf("entry %v: bad prev link", e.key)
			case m.dueFor(e.deadline) != due:
				return fmt.Errorf("entry %v: deadline %d in bucket %d", e.key, e.deadline, due)
			case m.items[e.key] != e:
				return fmt.Errorf("entry %v: not in items", e.key)
			}
			prev = e
			n++
		}
		if n != b.n || b.tail != prev {
			return fmt.Errorf("bucket %d: %d entries, count %d, tail ok %v", due, n, b.n, b.tail == prev)
		}
		total += n
	}
	if total != len(m.items) {
		return fmt.Errorf("%d entries in buckets, %d in items", total, len(m.items))
	}
	if m.capacity == 0 {
		if len(m.order) != 0 {
			return fmt.Errorf("heap of %d buckets without a capacity", len(m.order))
		}
		return nil
	}
	if len(m.items) > m.capacity {
		return fmt.Errorf("%d entries, capacity %d", len(m.items), m.capacity)
	}
	if len(m.order) != len(m.buckets) {
		return fmt.Errorf("heap of %d buckets, %d live", len(m.order), len(m.buckets))
	}
	for i, b := range m.order {
		if b.index != i || m.buckets[b.due] != b {
			return fmt.Errorf("heap[%d]: index %d, live %v", i, b.index, m.buckets[b.due] == b)
		}
		if i > 0 && m.order[(i-1)/2].due > b.due {
			return fmt.Errorf("heap[%d]: due %d below its parent's", i, b.due)
		}
	}
	return nil
}
