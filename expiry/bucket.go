package expiry

import (
	"math"
	"slices"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/internal/lockcheck"
)

// expireBatch is how many entries a firing bucket evicts per hold of the
// lock, so that a million entries due together do not shut out readers.
const expireBatch = 256

// bucket is the set of entries whose deadlines fall in one span of the
// granularity, (due-gran, due]: an intrusive doubly linked list, and the
// one wheel timer that evicts them all at due. A bucket with no entries is
// released at once; a released bucket is dead and never used again.
type bucket[K comparable, V any] struct {
	s          *shard[K, V]
	due        int64            // ns after s.m.epoch
	head, tail *entry[K, V]     // guarded by s.mu
	n          int              // entries; guarded by s.mu
	t          *timewheel.Timer // fires b.fire at due
	index      int              // position in s.order, or -1; guarded by s.mu
	dead       bool             // released; guarded by s.mu
}

// dueFor returns the end of the span holding deadline, saturated.
func (m *Map[K, V]) dueFor(deadline int64) int64 {
	q := deadline / m.gran
	if deadline%m.gran > 0 {
		q++
	}
	if q > math.MaxInt64/m.gran {
		return math.MaxInt64
	}
	return q * m.gran
}

// bucketLocked returns the live bucket ending at due, opening it (and
// scheduling its timer) if there is none.
func (s *shard[K, V]) bucketLocked(due, now int64) *bucket[K, V] {
	lockcheck.WriteHeld(&s.mu, "shard.bucketLocked")
	if b := s.last; b != nil && b.due == due && !b.dead {
		return b
	}
	b := s.buckets[due]
	if b == nil {
		b = &bucket[K, V]{s: s, due: due, index: -1}
		b.t = s.m.w.AfterFunc(time.Duration(due-now), b.fire)
		s.buckets[due] = b
		if s.m.bounded {
			s.order.push(b)
		}
	}
	s.last = b
	return b
}

// linkLocked appends e to the bucket of deadline, and then sets e's
// deadline (which unfreezes it).
func (s *shard[K, V]) linkLocked(e *entry[K, V], deadline, now int64) {
	lockcheck.WriteHeld(&s.mu, "shard.linkLocked")
	b := s.bucketLocked(s.m.dueFor(deadline), now)
	e.deadline.Store(deadline)
	s.attachLocked(e, b)
}

// attachLocked appends e to b, leaving its deadline as it is.
func (s *shard[K, V]) attachLocked(e *entry[K, V], b *bucket[K, V]) {
	lockcheck.WriteHeld(&s.mu, "shard.attachLocked")
	e.b = b
	e.prev, e.next = b.tail, nil
	if b.tail != nil {
		b.tail.next = e
	} else {
		b.head = e
	}
	b.tail = e
	b.n++
}

// unlinkLocked takes e out of its bucket, releasing the bucket if it is
// left empty.
func (s *shard[K, V]) unlinkLocked(e *entry[K, V]) {
	lockcheck.WriteHeld(&s.mu, "shard.unlinkLocked")
	b := e.b
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		b.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		b.tail = e.prev
	}
	e.prev, e.next, e.b = nil, nil, nil
	b.n--
	if b.n == 0 {
		s.releaseLocked(b)
	}
}

// spliceLocked puts ne in e's place in e's bucket, and takes e out.
func (s *shard[K, V]) spliceLocked(e, ne *entry[K, V]) {
	lockcheck.WriteHeld(&s.mu, "shard.spliceLocked")
	b := e.b
	ne.prev, ne.next, ne.b = e.prev, e.next, b
	if e.prev != nil {
		e.prev.next = ne
	} else {
		b.head = ne
	}
	if e.next != nil {
		e.next.prev = ne
	} else {
		b.tail = ne
	}
	e.prev, e.next, e.b = nil, nil, nil
}

// moveLocked gives e a new deadline, moving it to an earlier bucket if
// the new deadline falls before e's bucket; a later one is left to fire
// to file e again (see Touch). It stores the deadline last: e may be
// frozen, or about to be published.
func (s *shard[K, V]) moveLocked(e *entry[K, V], deadline, now int64) {
	lockcheck.WriteHeld(&s.mu, "shard.moveLocked")
	if s.m.dueFor(deadline) >= e.b.due {
		e.deadline.Store(deadline)
		return
	}
	s.unlinkLocked(e)
	s.linkLocked(e, deadline, now)
}

// releaseLocked retires an empty bucket: its timer is stopped (a callback
// already on its way finds the bucket dead) and it is forgotten.
func (s *shard[K, V]) releaseLocked(b *bucket[K, V]) {
	lockcheck.WriteHeld(&s.mu, "shard.releaseLocked")
	b.dead = true
	b.t.Stop()
	delete(s.buckets, b.due)
	if b.index >= 0 {
		s.order.remove(b)
	}
	if s.last == b {
		s.last = nil
	}
}

// fire is the bucket's timer callback: it evicts every entry of the
// bucket whose deadline has come. It files the others, renewed by a lazy
// Touch or Set, in the buckets of their deadlines. It works expireBatch
// entries at a time, delivering callbacks between batches. The bucket is
// released when its last entry leaves.
func (b *bucket[K, V]) fire() {
	s, m := b.s, b.s.m
	s.mu.Lock()
	if now := m.now(); !b.dead && now < b.due {
		// Early; the wheel never fires early, but a clock may disagree.
		b.t.Reset(time.Duration(b.due - now))
	}
	for !b.dead && b.head != nil && m.now() >= b.due {
		for i := 0; i < expireBatch && b.head != nil; i++ {
			e := b.head
			if d := e.freeze(); d > b.due {
				s.unlinkLocked(e) // renewed: its own bucket is later
				s.linkLocked(e, d, m.now())
				continue
			}
			s.removeLocked(e, s.m.hash(e.key), Expired) // its deadline is <= due <= now
		}
		kick := s.takeQueuedLocked()
		s.mu.Unlock()
		b.deliver(kick)
		s.mu.Lock()
	}
	s.mu.Unlock()
}

// deliver delivers the callbacks of a batch fire has evicted. If delivery
// panics (inline callbacks with a panic handler that panics), the panic
// goes on. But first the bucket's timer is set to fire again at once, so
// the entries of its later batches are still evicted.
func (b *bucket[K, V]) deliver(kick bool) {
	s := b.s
	done := false
	defer func() {
		if done {
			return
		}
		s.mu.Lock()
		if !b.dead && b.head != nil {
			b.t.Reset(0)
		}
		s.mu.Unlock()
	}()
	s.m.deliver(kick)
	done = true
}

// sortedBucketsLocked returns the live buckets in due order.
func (s *shard[K, V]) sortedBucketsLocked() []*bucket[K, V] {
	lockcheck.Held(&s.mu, "shard.sortedBucketsLocked")
	bs := make([]*bucket[K, V], 0, len(s.buckets))
	for _, b := range s.buckets {
		bs = append(bs, b)
	}
	slices.SortFunc(bs, func(a, b *bucket[K, V]) int {
		switch {
		case a.due < b.due:
			return -1
		case a.due > b.due:
			return 1
		}
		return 0
	})
	return bs
}
