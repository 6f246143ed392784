package expiry

import (
	"cmp"
	"hash/maphash"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/timewheel/timewheel/internal/lockcheck"
)

// shard is one stripe of a Map: the entries whose keys hash to it, their
// buckets and its counters, under its own lock. Keys are spread over the
// shards by a seeded hash, so operations on different keys mostly take
// different locks. The index sits on cache lines of its own, apart from
// the lock and the fields writers write, and shards are padded apart.
//
// # Locking
//
// This is the package's one account of its locks and of the entry
// protocol; other comments point here. What each lock guards:
//   - shard.mu: the shard's own fields, its buckets' fields and its
//     entries' prev, next and b. Every write of an entry, a bucket or the
//     index holds it; so do the writes of refresher.states and
//     ageTable.born, which are sync.Maps keyed by entry.
//   - Map.evMu: the callback queue (events, delivering); idle waits on it.
//   - Map.initMu: the configuration of a zero Map, once.
//   - refresher.mu: its closed flag and wg.Add.
//
// Order: a goroutine holds one shard's mu at a time, except lockAll and
// records, which take every shard's in index order. evMu is taken under
// a shard's mu (queueLocked) or alone, never the other way round.
// initMu and refresher.mu are taken with no other lock held. No lock is
// held while a callback, a loader or a reload runs. A Compute function
// and a weigher run under the shard's mu, so they must not call the map.
//
// Read without a lock: Get, Touch and TTL find an entry and read it with
// atomics alone. Three rules make that safe.
//   - The index: every slot word is an atomic, and a writer stores a
//     slot's pointer before its metadata. Only remove can mislead a
//     reader, by shifting an entry back past it. remove makes seq odd
//     while it shifts, and a lookup trusts a miss only if seq stayed even
//     and unchanged. A grown table is built aside and published whole.
//   - The deadline: a writer first freezes an entry (see freeze), swapping
//     its deadline for writing, and stores the deadline it keeps last.
//     Touch renews with a compare-and-swap from the deadline it read.
//     It fails against a frozen entry, and never renews one on its way out.
//   - The value: a value of one word or one pointer is stored in place
//     with an atomic, between writing and the new deadline (see valMode).
//     While an entry is in the index its deadline only moves later, but
//     for the moments it is frozen. readVal reads the deadline before and
//     after the value, so a value read between two equal deadlines is one
//     that deadline belongs to. Any other value, and any deadline moved
//     earlier, goes in a new entry (see replaceLocked).
//
// The rest a reader touches: ready is an atomic, and the configuration
// it covers is written before it is set and never again. An entry's ttl
// is an atomic written under mu. The hit, miss, load and backlog counters
// are atomics.
type shard[K comparable, V any] struct {
	mu sync.RWMutex

	m       *Map[K, V]
	buckets map[int64]*bucket[K, V] // guarded by mu; by due; made by the first Set
	order   bucketHeap[K, V]        // guarded by mu; kept only with a capacity or a maximum weight
	last    *bucket[K, V]           // guarded by mu; the bucket linked into last
	left    [Capacity + 1]uint64    // guarded by mu; entries that left, by Reason
	loads   map[K]*call[V]          // guarded by mu; loaders running, by key
	queued  bool                    // guarded by mu; a callback was queued since takeQueuedLocked
	closed  bool                    // guarded by mu

	_     [128]byte   // keeps the lines writers write off the index's
	items index[K, V] // written under mu; read without it: see Locking
	_     [128]byte   // keeps the next shard's lock off the index's lines

	// Written by the options alone, after the pad, so that a map without
	// them writes the same lines as before they were added.
	weight uint64              // guarded by mu; the entries' total, with a maximum weight
	age    [Capacity + 1]int64 // guarded by mu; the time in the map of the entries that left, with WithAges
}

// maxShards bounds the number of shards of a Map.
const maxShards = 256

// shardCount returns the number of shards of a Map. It is one with a
// capacity or a maximum weight (bounded): evicting the entry closest to
// expiry must see every deadline under one lock. Otherwise it is the
// power of two at or above 8×GOMAXPROCS, up to maxShards, so two
// goroutines rarely want one lock.
func shardCount(bounded bool) int {
	if bounded {
		return 1
	}
	n := 1
	for n < 8*runtime.GOMAXPROCS(0) && n < maxShards {
		n <<= 1
	}
	return n
}

// locate returns the shard of k and k's hash, which the shard's index
// takes: a key is hashed once per operation.
func (m *Map[K, V]) locate(k K) (*shard[K, V], uint64) {
	h := m.hash(k)
	return &m.shards[h&m.mask], h
}

// hash returns k's hash under the Map's seed.
func (m *Map[K, V]) hash(k K) uint64 { return maphash.Comparable(m.seed, k) }

// found is what the access path found of a key: its shard, its hash,
// its entry (nil if none), the time, and whether the entry is live then.
type found[K comparable, V any] struct {
	s    *shard[K, V]
	h    uint64
	e    *entry[K, V]
	now  int64
	live bool
}

// access is the one path of every write of a key, and of every read that
// must see the key's entry as writers leave it. It locks k's shard, finds
// k's entry and whether it is live at the wheel's now, and calls op with
// what it found. Then it unlocks, even if op panics, and delivers the
// callbacks op queued. Get, Touch and TTL read without the lock first:
// see Locking, on shard.
func (m *Map[K, V]) access(k K, op func(f found[K, V])) {
	s, h := m.locate(k)
	m.deliver(s.access(k, h, m.now(), op))
}

// access is Map.access on s, which holds k, whose hash is h, at now; it
// reports whether op queued a callback, for the caller to deliver.
func (s *shard[K, V]) access(k K, h uint64, now int64, op func(f found[K, V])) (kick bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.items.find(k, h)
	op(found[K, V]{s: s, h: h, e: e, now: now, live: live(e, now)})
	return s.takeQueuedLocked()
}

// live reports whether e, an entry or nil, is live at now. Its caller
// holds e's shard's lock, under which a live entry's deadline only moves
// later.
func live[K comparable, V any](e *entry[K, V], now int64) bool {
	return e != nil && e.deadline.Load() > now
}

// lockAll write-locks every shard, in index order (see Locking, on
// shard); unlockAll unlocks them.
func (m *Map[K, V]) lockAll() {
	for i := range m.shards {
		m.shards[i].mu.Lock()
	}
}

func (m *Map[K, V]) unlockAll() {
	for i := range m.shards {
		m.shards[i].mu.Unlock()
	}
}

// setLocked stores v under k with the given deadline. h is k's hash,
// and e what s.items.find(k, h) returned: k's entry, or nil. A value
// that fits one atomic store goes in place, unless the deadline is
// earlier than the entry's; any other goes in a new entry (see Locking,
// on shard).
func (s *shard[K, V]) setLocked(e *entry[K, V], k K, h uint64, v V, ttl time.Duration, deadline, now int64) {
	lockcheck.WriteHeld(&s.mu, "shard.setLocked")
	if e != nil {
		d := e.freeze()
		if s.m.hooks && d > now {
			s.replacingLocked(e, v, d, now)
		}
		switch {
		case d <= now:
			s.removeLocked(e, h, Expired) // it had left already; only its timer had not run
		case s.m.vals != valCopy && deadline >= d:
			old := e.val
			s.m.storeValLocked(e, v) // between writing and the new deadline
			if e.ttl.Load() != int64(ttl) {
				e.ttl.Store(int64(ttl)) // an atomic store is an exchange: skip it when it can
			}
			s.moveLocked(e, deadline, now) // unfreezes e
			s.queueLocked(k, old, Replaced)
			if s.m.hooks {
				s.replacedLocked(e, k, old, v, now)
			}
			return
		default:
			ne := s.replaceLocked(e, h, v, ttl, deadline, now)
			s.queueLocked(k, e.val, Replaced)
			if s.m.hooks {
				s.replacedLocked(ne, k, e.val, v, now)
			}
			return
		}
	}
	ne := newEntry(k, v, ttl, deadline)
	if s.buckets == nil {
		s.buckets = make(map[int64]*bucket[K, V])
	}
	if s.m.bounded {
		if c := s.m.capacity; c > 0 && s.items.n >= c {
			s.evictOneLocked(now)
		}
		if s.m.weigher != nil {
			w := s.weightLocked(k, v)
			s.fitLocked(w, 0, nil, 0, now)
			s.weight += w
		}
	}
	s.items.insert(ne, h, s.m.seed)
	s.linkLocked(ne, deadline, now)
	if s.m.hooks {
		s.insertedLocked(ne, k, v, now)
	}
}

// replaceLocked gives e, frozen, whose key's hash is h, a successor: a new
// entry of v, ttl and deadline. The successor takes e's place in its
// bucket, is filed by its deadline, and only then takes e's place in the
// index. e stays frozen, so a reader who found it takes the lock and
// finds the new entry. It returns the new entry.
//
// Were a deadline moved earlier in place, a later Set could bring it
// back to a deadline it had before, with another value. A Get that read
// that deadline before and after the value could then pair a value with a
// deadline that was never its own. A Set whose deadline is earlier
// than the entry's, and a SetTTL or Touch that moves one earlier, replace
// the entry instead (see Locking, on shard).
func (s *shard[K, V]) replaceLocked(e *entry[K, V], h uint64, v V, ttl time.Duration, deadline, now int64) *entry[K, V] {
	lockcheck.WriteHeld(&s.mu, "shard.replaceLocked")
	ne := newEntry(e.key, v, ttl, deadline)
	s.spliceLocked(e, ne)
	s.moveLocked(ne, deadline, now)
	s.items.replace(e, ne, h)
	if s.m.hooks {
		s.movedLocked(e, ne) // the caller that writes a new value says so
	}
	return ne
}

// updateLocked stores v in e, frozen at deadline d (live at now), whose
// key's hash is h, keeping d and e's ttl. It queues the old value's
// callback, Replaced. A value stored in place keeps d, which both values
// belong to; any other goes in a new entry (see replaceLocked).
func (s *shard[K, V]) updateLocked(e *entry[K, V], h uint64, v V, d, now int64) {
	lockcheck.WriteHeld(&s.mu, "shard.updateLocked")
	old := e.val
	if s.m.hooks {
		s.replacingLocked(e, v, d, now)
	}
	if s.m.vals != valCopy {
		s.m.storeValLocked(e, v)
		e.deadline.Store(d)
	} else {
		e = s.replaceLocked(e, h, v, time.Duration(e.ttl.Load()), d, now)
	}
	s.queueLocked(e.key, old, Replaced)
	if s.m.hooks {
		s.replacedLocked(e, e.key, old, v, now)
	}
}

// newEntry returns an entry of k and v, not yet in the index or a
// bucket, with its ttl and deadline set before any reader can see it.
func newEntry[K comparable, V any](k K, v V, ttl time.Duration, deadline int64) *entry[K, V] {
	e := &entry[K, V]{key: k, val: v}
	e.ttl.Store(int64(ttl))
	e.deadline.Store(deadline)
	return e
}

// retimeLocked gives e, frozen at deadline d, whose key's hash is h, the
// ttl and the deadline next, and reports true. If e had expired by now,
// it unfreezes e as it was and reports false. A later deadline is
// recorded lazily; an earlier one replaces the entry (see replaceLocked).
func (s *shard[K, V]) retimeLocked(e *entry[K, V], h uint64, d, next int64, ttl time.Duration, now int64) bool {
	lockcheck.WriteHeld(&s.mu, "shard.retimeLocked")
	switch {
	case d <= now:
		e.deadline.Store(d)
		return false
	case next >= d:
		if e.ttl.Load() != int64(ttl) {
			e.ttl.Store(int64(ttl)) // an atomic store is an exchange: skip it when it can
		}
		s.moveLocked(e, next, now)
	default:
		s.replaceLocked(e, h, e.val, ttl, next, now)
	}
	return true
}

// removeLocked takes e, whose key's hash is h, out of the map and queues
// its callback.
func (s *shard[K, V]) removeLocked(e *entry[K, V], h uint64, why Reason) {
	lockcheck.WriteHeld(&s.mu, "shard.removeLocked")
	s.items.remove(e, h)
	s.unlinkLocked(e)
	if s.m.hooks {
		s.removedLocked(e, why)
	}
	s.queueLocked(e.key, e.val, why)
}

// evictOneLocked makes room in a full map, which has one shard: it evicts
// the first entry of the earliest bucket, after filing again in their own
// buckets the entries a lazy Touch left before it.
func (s *shard[K, V]) evictOneLocked(now int64) {
	lockcheck.WriteHeld(&s.mu, "shard.evictOneLocked")
	for len(s.order) > 0 {
		b := s.order[0]
		e := b.head
		d := e.freeze()
		if s.m.dueFor(d) > b.due {
			s.unlinkLocked(e)
			s.linkLocked(e, d, now)
			continue
		}
		why := Capacity
		if d <= now {
			why = Expired
		}
		s.removeLocked(e, s.m.hash(e.key), why)
		return
	}
}

// takeQueuedLocked reports whether a callback was queued since its last
// call, and forgets it: the caller, once it has unlocked, passes the
// answer to m.deliver.
func (s *shard[K, V]) takeQueuedLocked() bool {
	lockcheck.WriteHeld(&s.mu, "shard.takeQueuedLocked")
	q := s.queued
	s.queued = false
	return q
}

// closeLocked drops the shard's entries and stops its timers.
func (s *shard[K, V]) closeLocked() {
	lockcheck.WriteHeld(&s.mu, "shard.closeLocked")
	s.closed = true
	for _, b := range s.buckets {
		b.dead = true
		b.t.Stop()
	}
	clear(s.buckets)
	if s.m.ages != nil {
		for e := range s.items.all() {
			s.m.ages.born.Delete(e)
		}
	}
	s.items.reset()
	s.weight = 0
	s.order, s.last = nil, nil
}

// records copies the entries live at the wheel's now, in deadline order,
// with every shard read-locked at once; with forSnapshot, it returns
// ErrClosed on a closed map.
func (m *Map[K, V]) records(forSnapshot bool) ([]snapEntry[K, V], error) {
	now := m.now()
	for i := range m.shards {
		m.shards[i].mu.RLock()
	}
	defer func() {
		for i := range m.shards {
			m.shards[i].mu.RUnlock()
		}
	}()
	if forSnapshot && m.shards[0].closed {
		return nil, ErrClosed
	}
	n := 0
	for i := range m.shards {
		n += m.shards[i].items.n
	}
	recs := make([]snapEntry[K, V], 0, n)
	for i := range m.shards {
		for _, b := range m.shards[i].sortedBucketsLocked() {
			for e := b.head; e != nil; e = e.next {
				if d := e.deadline.Load(); d > now {
					recs = append(recs, snapEntry[K, V]{e.key, e.val, d, e.ttl.Load()})
				}
			}
		}
	}
	slices.SortStableFunc(recs, func(a, b snapEntry[K, V]) int { return cmp.Compare(a.Deadline, b.Deadline) })
	return recs, nil
}
