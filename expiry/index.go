package expiry

import (
	"fmt"
	"hash/maphash"
	"iter"
	"sync/atomic"
)

// index is a shard's entries by key: an open-addressing hash table with
// linear probing. It holds a pointer to each entry (which holds its key)
// and two bytes of metadata per slot. Slots come in groups of eight, so
// a slot's metadata and pointer share a cache line or two.
//
// It exists for memory. A Go map from K to *entry holds the key again
// beside the pointer (24 bytes a slot for a string key, plus a control
// byte); the index holds 10 bytes a slot. At a million entries that is
// about 21 bytes an entry against the map's 56 (BenchmarkMemoryFloor).
// It takes the hash that picked the shard, so a key is hashed once per
// operation.
//
// A slot's metadata is zero when empty. Otherwise its high byte is 0x80
// and 7 bits of the hash, a tag that settles most mismatches without
// loading the entry. Its low byte is the slot's distance from the key's
// home slot. The distance lets a deletion shift the entries after it
// back into the hole (Knuth's algorithm R). There are no tombstones,
// and a table under churn never degrades or needs rebuilding. An insert
// that would land more than 255 slots from home grows the table instead.
// The table is at most three quarters full. It never shrinks, as a Go
// map does not, until Close drops it.
//
// Writers (insert, replace, remove, grow, reset) hold the shard's lock;
// lookup reads without it, so Gets write nothing. How that stays safe,
// seq included, is told in Locking, on shard. A lookup that found its
// key needs no check of seq: the entry was in the table when its slot
// was read.
type index[K comparable, V any] struct {
	tab atomic.Pointer[table[K, V]] // nil until the first insert, and after reset
	seq atomic.Uint64               // odd while remove shifts entries
	n   int                         // entries; guarded by the shard's lock
}

type table[K comparable, V any] struct {
	mask   uint64 // slots - 1
	groups []indexGroup[K, V]
}

type indexGroup[K comparable, V any] struct {
	meta [2]atomic.Uint64 // slot j's metadata is bits 16*(j%4) up of meta[j/4]
	e    [8]atomic.Pointer[entry[K, V]]
}

const (
	usedBit   = 0x8000
	maxDist   = 0xff
	minGroups = 1
	// lookupTries is how many probes a lookup makes, while removals
	// shift entries under it, before it asks for the lock.
	lookupTries = 4
)

// tagOf returns the metadata high byte of hash h; posOf its home slot.
// The low bits of h pick the shard (see Map.locate), so the home slot
// is taken from the bits above them and the tag from the top ones.
func tagOf(h uint64) uint16                  { return usedBit | uint16(h>>57)<<8 }
func (t *table[K, V]) posOf(h uint64) uint64 { return (h >> 8) & t.mask }

// meta returns slot i's metadata.
func (t *table[K, V]) meta(i uint64) uint16 {
	return uint16(t.groups[i>>3].meta[i>>2&1].Load() >> (16 * (i & 3)))
}

// setMeta sets slot i's metadata. Only writers call it, one at a time.
func (t *table[K, V]) setMeta(i uint64, m uint16) {
	w := &t.groups[i>>3].meta[i>>2&1]
	sh := 16 * (i & 3)
	w.Store(w.Load()&^(0xffff<<sh) | uint64(m)<<sh)
}

// slot returns slot i's entry pointer.
func (t *table[K, V]) slot(i uint64) *atomic.Pointer[entry[K, V]] {
	return &t.groups[i>>3].e[i&7]
}

// probe returns the entry of k, whose hash is h, or nil. Under a
// concurrent remove it may miss an entry that is there (see index).
func (t *table[K, V]) probe(k K, h uint64) *entry[K, V] {
	tag := tagOf(h)
	i := t.posOf(h)
	for range maxDist + 1 {
		m := t.meta(i)
		if m == 0 {
			return nil
		}
		if m&0xff00 == tag {
			if e := t.slot(i).Load(); e != nil && e.key == k {
				return e
			}
		}
		i = (i + 1) & t.mask
	}
	return nil
}

// find returns the entry of k, whose hash is h, or nil. The caller holds
// the shard's lock, read or write.
func (x *index[K, V]) find(k K, h uint64) *entry[K, V] {
	if t := x.tab.Load(); t != nil {
		return t.probe(k, h)
	}
	return nil
}

// lookup is find without the lock: it returns the entry of k, whose hash
// is h, or nil, and ok. It returns ok false if removals kept shifting
// entries under it; the caller must then find under the lock.
func (x *index[K, V]) lookup(k K, h uint64) (e *entry[K, V], ok bool) {
	for range lookupTries {
		s := x.seq.Load()
		t := x.tab.Load()
		if t == nil {
			return nil, true
		}
		if e := t.probe(k, h); e != nil {
			return e, true
		}
		if s&1 == 0 && x.seq.Load() == s {
			return nil, true
		}
	}
	return nil, false
}

// insert adds e, whose key has hash h under seed and is not in x.
func (x *index[K, V]) insert(e *entry[K, V], h uint64, seed maphash.Seed) {
	t := x.tab.Load()
	if t == nil || (x.n+1)*4 > len(t.groups)*8*3 {
		t = x.grow(t, seed)
	}
	for !t.place(e, h) {
		t = x.grow(t, seed)
	}
	x.n++
}

// place puts e in the first empty slot from its home, or reports false
// if that is more than maxDist slots away. It stores the pointer before
// the metadata, so that a reader who sees the slot used sees its entry.
func (t *table[K, V]) place(e *entry[K, V], h uint64) bool {
	tag := tagOf(h)
	i := t.posOf(h)
	for d := uint16(0); d <= maxDist; d++ {
		if t.meta(i) == 0 {
			t.slot(i).Store(e)
			t.setMeta(i, tag|d)
			return true
		}
		i = (i + 1) & t.mask
	}
	return false
}

// grow publishes a table twice the size of old (or the first), holding
// every entry of old placed again by its key's hash under seed. Should a
// cluster come out longer than maxDist even so, it doubles again. It
// returns the new table.
func (x *index[K, V]) grow(old *table[K, V], seed maphash.Seed) *table[K, V] {
	n := minGroups
	if old != nil {
		n = 2 * len(old.groups)
	}
	for ; ; n *= 2 {
		if n > 64*(x.n+64) {
			// Not with a seeded 64-bit hash: only keys of equal hashes,
			// hundreds of them, crowd one home so.
			panic(fmt.Sprintf("expiry: internal error: %d entries crowd a table of %d slots", x.n, 8*n))
		}
		if t := refill(old, n, seed); t != nil {
			x.tab.Store(t)
			return t
		}
	}
}

// refill returns a table of n groups holding the entries of old, or nil
// if one would land more than maxDist slots from home.
func refill[K comparable, V any](old *table[K, V], n int, seed maphash.Seed) *table[K, V] {
	t := &table[K, V]{mask: uint64(n*8 - 1), groups: make([]indexGroup[K, V], n)}
	if old == nil {
		return t
	}
	for i := range old.mask + 1 {
		if old.meta(i) != 0 {
			e := old.slot(i).Load()
			if !t.place(e, maphash.Comparable(seed, e.key)) {
				return nil
			}
		}
	}
	return t
}

// replace puts e in the slot of old, whose key (e's too) has hash h and
// which must be in x. Readers see one or the other.
func (x *index[K, V]) replace(old, e *entry[K, V], h uint64) {
	t := x.tab.Load()
	t.slot(t.slotOf(old, h)).Store(e)
}

// slotOf returns the slot of e, whose key has hash h and which must be
// in t.
func (t *table[K, V]) slotOf(e *entry[K, V], h uint64) uint64 {
	i := t.posOf(h)
	for t.slot(i).Load() != e {
		if t.meta(i) == 0 {
			panic(fmt.Sprintf("expiry: internal error: key %v is not in the index", e.key))
		}
		i = (i + 1) & t.mask
	}
	return i
}

// remove deletes e, whose key has hash h, which must be in x.
func (x *index[K, V]) remove(e *entry[K, V], h uint64) {
	t := x.tab.Load()
	if t == nil {
		panic(fmt.Sprintf("expiry: internal error: key %v is not in the index", e.key))
	}
	i := t.slotOf(e, h)
	x.n--
	x.seq.Add(1) // odd: lookups that miss while it is must try again
	// Algorithm R: walk the cluster after the hole, moving back into it
	// each entry whose home is not between the hole and the entry.
	hole := i
	for {
		i = (i + 1) & t.mask
		m := t.meta(i)
		if m == 0 {
			break
		}
		if back := (i - hole) & t.mask; back <= uint64(m&0xff) {
			t.slot(hole).Store(t.slot(i).Load())
			t.setMeta(hole, m-uint16(back))
			hole = i
		}
	}
	t.setMeta(hole, 0)
	t.slot(hole).Store(nil)
	x.seq.Add(1)
}

// all yields every entry, in no set order. x must not change during it.
func (x *index[K, V]) all() iter.Seq[*entry[K, V]] {
	return func(yield func(*entry[K, V]) bool) {
		t := x.tab.Load()
		if t == nil {
			return
		}
		for i := range t.mask + 1 {
			if t.meta(i) != 0 && !yield(t.slot(i).Load()) {
				return
			}
		}
	}
}

// reset drops every entry and the table.
func (x *index[K, V]) reset() {
	x.tab.Store(nil)
	x.n = 0
}
