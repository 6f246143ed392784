package expiry

import (
	"fmt"
	"hash/maphash"
	"testing"

	"pgregory.net/rapid"
)

// verify checks the index's invariants: the count, the load, and for
// every entry its tag, its distance, and that no empty slot lies between
// its home and it (else find would stop short of it).
func (x *index[K, V]) verify(seed maphash.Seed) error {
	n := 0
	for i := range uint64(len(x.groups) * 8) {
		m := x.groups[i>>3].meta[i&7]
		e := x.groups[i>>3].e[i&7]
		if m == 0 {
			if e != nil {
				return fmt.Errorf("slot %d: empty with an entry", i)
			}
			continue
		}
		n++
		h := maphash.Comparable(seed, e.key)
		if m&0xff00 != tagOf(h) {
			return fmt.Errorf("slot %d: key %v: tag %#x, want %#x", i, e.key, m&0xff00, tagOf(h))
		}
		if d := (i - x.posOf(h)) & x.mask; d != uint64(m&0xff) {
			return fmt.Errorf("slot %d: key %v: distance %d, want %d", i, e.key, m&0xff, d)
		}
		for j := x.posOf(h); j != i; j = (j + 1) & x.mask {
			if x.groups[j>>3].meta[j&7] == 0 {
				return fmt.Errorf("slot %d: key %v: empty slot %d between it and its home", i, e.key, j)
			}
		}
	}
	if n != x.n {
		return fmt.Errorf("%d entries, count %d", n, x.n)
	}
	if 4*n > 3*8*len(x.groups) {
		return fmt.Errorf("%d entries in %d slots", n, 8*len(x.groups))
	}
	return nil
}

// TestIndexAgainstMap holds the index to a Go map under random inserts,
// removals and lookups of a small key space, so that tables are small,
// full to three quarters, and clusters wrap round their end.
func TestIndexAgainstMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var x index[int, int]
		seed := maphash.MakeSeed()
		ref := map[int]*entry[int, int]{}
		h := func(k int) uint64 { return maphash.Comparable(seed, k) }
		keys := rapid.IntRange(0, rapid.IntRange(1, 300).Draw(t, "space"))
		for range rapid.IntRange(0, 600).Draw(t, "ops") {
			k := keys.Draw(t, "k")
			switch op := rapid.IntRange(0, 2).Draw(t, "op"); {
			case op == 0 && ref[k] == nil:
				e := &entry[int, int]{key: k}
				x.insert(e, h(k), seed)
				ref[k] = e
			case op == 1 && ref[k] != nil:
				x.remove(ref[k], h(k))
				delete(ref, k)
			}
			if got := x.find(k, h(k)); got != ref[k] {
				t.Fatalf("find(%d) = %p, want %p", k, got, ref[k])
			}
			if err := x.verify(seed); err != nil {
				t.Fatal(err)
			}
		}
		for k, e := range ref {
			if got := x.find(k, h(k)); got != e {
				t.Fatalf("find(%d) = %p, want %p", k, got, e)
			}
		}
		seen := 0
		for e := range x.all() {
			if ref[e.key] != e {
				t.Fatalf("all yields %d, not in the map", e.key)
			}
			seen++
		}
		if seen != len(ref) {
			t.Fatalf("all yields %d entries, want %d", seen, len(ref))
		}
	})
}
