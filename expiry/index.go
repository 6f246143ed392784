package expiry

import (
	"fmt"
	"hash/maphash"
	"iter"
)

// index is a shard's entries by key: an open-addressing hash table with
// linear probing, holding a pointer to each entry (which holds its key)
// and two bytes of metadata per slot, in groups of eight so that a slot's
// metadata and pointer share a cache line or two.
//
// It exists for memory: a Go map from K to *entry holds the key again
// beside the pointer (24 bytes a slot for a string key, plus a control
// byte), where the entry already has it; the index holds 10 bytes a slot.
// At a million entries that is about 21 bytes an entry against the map's
// 56 (BenchmarkMemoryFloor). It takes the hash the Map computed to pick
// the shard, so a key is hashed once per operation, not twice.
//
// A slot's metadata is zero when empty; otherwise its high byte is 0x80
// and 7 bits of the hash (a tag that settles most mismatches without
// loading the entry), and its low byte the slot's distance from the
// key's home slot. The distance lets a deletion shift the entries after
// it back into the hole (Knuth's algorithm R), so there are no tombstones
// and a table under churn never degrades or needs rebuilding; an insert
// that would land more than 255 slots from home grows the table instead.
// The table is at most three quarters full. It never shrinks, as a Go
// map does not, until Close drops it.
type index[K comparable, V any] struct {
	groups []indexGroup[K, V]
	mask   uint64 // slots - 1
	n      int    // entries
}

type indexGroup[K comparable, V any] struct {
	meta [8]uint16
	e    [8]*entry[K, V]
}

const (
	usedBit   = 0x8000
	maxDist   = 0xff
	minGroups = 1
)

// tagOf returns the metadata high byte of hash h; posOf its home slot.
// The low bits of h pick the shard (see Map.locate), so the home slot
// is taken from the bits above them and the tag from the top ones.
func tagOf(h uint64) uint16                  { return usedBit | uint16(h>>57)<<8 }
func (x *index[K, V]) posOf(h uint64) uint64 { return (h >> 8) & x.mask }

// find returns the entry of k, whose hash is h, or nil.
func (x *index[K, V]) find(k K, h uint64) *entry[K, V] {
	if x.n == 0 {
		return nil
	}
	t := tagOf(h)
	for i := x.posOf(h); ; i = (i + 1) & x.mask {
		g := &x.groups[i>>3]
		m := g.meta[i&7]
		if m == 0 {
			return nil
		}
		if m&0xff00 == t {
			if e := g.e[i&7]; e.key == k {
				return e
			}
		}
	}
}

// insert adds e, whose key has hash h under seed and is not in x.
func (x *index[K, V]) insert(e *entry[K, V], h uint64, seed maphash.Seed) {
	if (x.n+1)*4 > len(x.groups)*8*3 {
		x.grow(seed)
	}
	for !x.place(e, h) {
		x.grow(seed)
	}
	x.n++
}

// place puts e in the first empty slot from its home, or reports false
// if that is more than maxDist slots away.
func (x *index[K, V]) place(e *entry[K, V], h uint64) bool {
	t := tagOf(h)
	i := x.posOf(h)
	for d := uint16(0); d <= maxDist; d++ {
		g := &x.groups[i>>3]
		if g.meta[i&7] == 0 {
			g.meta[i&7] = t | d
			g.e[i&7] = e
			return true
		}
		i = (i + 1) & x.mask
	}
	return false
}

// grow doubles the table (or makes its first), placing every entry again
// by its key's hash under seed, computed again; should a cluster come out
// longer than maxDist even so, it doubles again.
func (x *index[K, V]) grow(seed maphash.Seed) {
	old := x.groups
	for n := max(2*len(old), minGroups); !x.refill(old, n, seed); n *= 2 {
		if n > 64*(x.n+64) {
			// Not with a seeded 64-bit hash: only keys of equal hashes,
			// hundreds of them, crowd one home so.
			panic(fmt.Sprintf("expiry: internal error: %d entries crowd a table of %d slots", x.n, 8*n))
		}
	}
}

// refill makes a table of n groups holding the entries of old, or
// reports false if one would land more than maxDist slots from home.
func (x *index[K, V]) refill(old []indexGroup[K, V], n int, seed maphash.Seed) bool {
	x.groups = make([]indexGroup[K, V], n)
	x.mask = uint64(n*8 - 1)
	for gi := range old {
		g := &old[gi]
		for j, m := range g.meta {
			if m != 0 && !x.place(g.e[j], maphash.Comparable(seed, g.e[j].key)) {
				return false
			}
		}
	}
	return true
}

// remove deletes e, whose key has hash h, which must be in x.
func (x *index[K, V]) remove(e *entry[K, V], h uint64) {
	i := x.posOf(h)
	for x.groups[i>>3].e[i&7] != e {
		if x.groups[i>>3].meta[i&7] == 0 {
			panic(fmt.Sprintf("expiry: internal error: removing key %v, which the index does not hold", e.key))
		}
		i = (i + 1) & x.mask
	}
	x.n--
	// Algorithm R: walk the cluster after the hole, moving back into it
	// each entry whose home is not between the hole and the entry.
	hole := i
	for {
		i = (i + 1) & x.mask
		g := &x.groups[i>>3]
		m := g.meta[i&7]
		if m == 0 {
			break
		}
		if back := (i - hole) & x.mask; back <= uint64(m&0xff) {
			hg := &x.groups[hole>>3]
			hg.meta[hole&7] = m - uint16(back)
			hg.e[hole&7] = g.e[i&7]
			hole = i
		}
	}
	hg := &x.groups[hole>>3]
	hg.meta[hole&7] = 0
	hg.e[hole&7] = nil
}

// all yields every entry, in no set order. x must not change during it.
func (x *index[K, V]) all() iter.Seq[*entry[K, V]] {
	return func(yield func(*entry[K, V]) bool) {
		for gi := range x.groups {
			g := &x.groups[gi]
			for j, m := range g.meta {
				if m != 0 && !yield(g.e[j]) {
					return
				}
			}
		}
	}
}

// reset drops every entry and the table.
func (x *index[K, V]) reset() { *x = index[K, V]{} }
