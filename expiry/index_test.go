package expiry

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"
)

// verify checks the index's invariants: the count, the load, and for
// every entry its tag, its distance, and that no empty slot lies between
// its home and it (else find would stop short of it).
func (x *index[K, V]) verify(seed maphash.Seed) error {
	t := x.tab.Load()
	if t == nil {
		if x.n != 0 {
			return fmt.Errorf("no table, count %d", x.n)
		}
		return nil
	}
	if x.seq.Load()&1 != 0 {
		return fmt.Errorf("seq %d is odd with no remove running", x.seq.Load())
	}
	n := 0
	for i := range t.mask + 1 {
		m := t.meta(i)
		e := t.slot(i).Load()
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
		if d := (i - t.posOf(h)) & t.mask; d != uint64(m&0xff) {
			return fmt.Errorf("slot %d: key %v: distance %d, want %d", i, e.key, m&0xff, d)
		}
		for j := t.posOf(h); j != i; j = (j + 1) & t.mask {
			if t.meta(j) == 0 {
				return fmt.Errorf("slot %d: key %v: empty slot %d between it and its home", i, e.key, j)
			}
		}
	}
	if n != x.n {
		return fmt.Errorf("%d entries, count %d", n, x.n)
	}
	if 4*n > 3*int(t.mask+1) {
		return fmt.Errorf("%d entries in %d slots", n, t.mask+1)
	}
	return nil
}

// TestIndexAgainstMap holds the index to a Go map under random inserts,
// removals, replacements and lookups of a small key space, so that
// tables are small, full to three quarters, and clusters wrap round their
// end. With no writer running, lookup must answer at once, as find does.
func TestIndexAgainstMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var x index[int, int]
		seed := maphash.MakeSeed()
		ref := map[int]*entry[int, int]{}
		h := func(k int) uint64 { return maphash.Comparable(seed, k) }
		keys := rapid.IntRange(0, rapid.IntRange(1, 300).Draw(t, "space"))
		for range rapid.IntRange(0, 600).Draw(t, "ops") {
			k := keys.Draw(t, "k")
			switch op := rapid.IntRange(0, 3).Draw(t, "op"); {
			case op == 0 && ref[k] == nil:
				e := &entry[int, int]{key: k}
				x.insert(e, h(k), seed)
				ref[k] = e
			case op == 1 && ref[k] != nil:
				x.remove(ref[k], h(k))
				delete(ref, k)
			case op == 2 && ref[k] != nil:
				e := &entry[int, int]{key: k}
				x.replace(ref[k], e, h(k))
				ref[k] = e
			}
			if got := x.find(k, h(k)); got != ref[k] {
				t.Fatalf("find(%d) = %p, want %p", k, got, ref[k])
			}
			if got, ok := x.lookup(k, h(k)); got != ref[k] || !ok {
				t.Fatalf("lookup(%d) = %p, %v, want %p, true", k, got, ok, ref[k])
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

// TestLookupDuringRemovals holds lookup, which takes no lock, to its
// promise while a writer inserts and removes keys of the same table: a
// key that stays in the table throughout a lookup is found, however the
// removals shift it back under the reader, and a key never inserted is
// never found. Every key is given a hash of the same home slot, so that
// they make one cluster that removals keep shifting; the writer also
// takes the staying keys out and puts them back at the cluster's end,
// counting up a version of the key around it, so that they keep moving
// and a reader knows when one has stayed. More readers than processors
// get preempted mid-lookup, when the cluster shifts most under them.
// (Without the check of seq, lookup misses a few hundred times in a
// million; the test fails at once.)
func TestLookupDuringRemovals(t *testing.T) {
	var x index[int, int]
	seed := maphash.MakeSeed()
	const stay, churn = 16, 32
	// Grow the table to 64 slots with real hashes first: a table grown
	// with the hashes below would be refilled by the real ones.
	for k := range stay + churn {
		x.insert(&entry[int, int]{key: k}, maphash.Comparable(seed, k), seed)
	}
	for _, e := range slices.Collect(x.all()) {
		x.remove(e, maphash.Comparable(seed, e.key))
	}
	h := func(k int) uint64 { return uint64(k&0x7f) << 57 } // home 0, tags vary
	stays := make([]*entry[int, int], stay)
	var ver [stay]atomic.Uint64 // odd while the key is out
	for i := range stays {
		stays[i] = &entry[int, int]{key: 1000 + i}
		x.insert(stays[i], h(1000+i), seed)
	}
	var stop atomic.Bool
	var writer sync.WaitGroup
	writer.Go(func() {
		in := make([]*entry[int, int], churn)
		r := rand.New(rand.NewPCG(1, 1))
		for !stop.Load() {
			if r.IntN(4) == 0 {
				i := r.IntN(stay)
				ver[i].Add(1)
				x.remove(stays[i], h(1000+i))
				x.insert(stays[i], h(1000+i), seed)
				ver[i].Add(1)
				continue
			}
			i := r.IntN(churn)
			if in[i] == nil {
				in[i] = &entry[int, int]{key: i}
				x.insert(in[i], h(i), seed)
			} else {
				x.remove(in[i], h(i))
				in[i] = nil
			}
		}
	})
	const readers, reads = 4, 500_000
	var missed, found, retried atomic.Int64
	var rg sync.WaitGroup
	for g := range readers {
		rg.Go(func() {
			var miss, find, retry int64
			for j := range reads {
				i := (j + g) % stay
				v := ver[i].Load()
				e, ok := x.lookup(1000+i, h(1000+i))
				switch {
				case !ok:
					retry++
				case e == nil && v&1 == 0 && ver[i].Load() == v:
					miss++
				case e != nil && e != stays[i]:
					find++
				}
				if e, _ := x.lookup(2000+i, h(1000+i)); e != nil {
					find++
				}
			}
			missed.Add(miss)
			found.Add(find)
			retried.Add(retry)
		})
	}
	rg.Wait()
	stop.Store(true)
	writer.Wait()
	if missed.Load() > 0 || found.Load() > 0 {
		t.Errorf("of %d lookups, %d missed a key that stayed and %d found a wrong key", readers*reads, missed.Load(), found.Load())
	}
	t.Logf("%d of %d lookups gave up for the lock", retried.Load(), readers*reads)
}
