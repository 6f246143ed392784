package expiry

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// byValue weighs an entry by its value.
func byValue(_ string, v int) uint64 { return uint64(v) }

// TestMaxWeight: entries that would take the total past the bound evict
// the entries closest to expiry first, as many as it takes, never the
// key written; an entry heavier than the bound alone is refused and
// changes nothing.
func TestMaxWeight(t *testing.T) {
	f := newFixture(t, WithMaxWeight(10, byValue))
	f.set("a", 4, 3*time.Hour)
	f.set("b", 3, time.Hour)
	f.set("c", 2, 2*time.Hour)
	f.wantEvicted()
	f.set("d", 5, 4*time.Hour) // 14: b (1h) then c (2h) go
	f.wantEvicted(evicted{"b", 3, Capacity, 0}, evicted{"c", 2, Capacity, 0})
	if st := f.m.Stats(); st.Weight != 9 || st.Entries != 2 {
		t.Fatalf("Stats: weight %d, %d entries; want 9, 2", st.Weight, st.Entries)
	}
	// a, the closest to expiry, grows: it is not evicted for its own room.
	f.set("a", 6, 3*time.Hour)
	f.wantEvicted(evicted{"d", 5, Capacity, 0}, evicted{"a", 4, Replaced, 0}) // room first
	f.m.Update("a", 9)                                                        // keeps the deadline; fits
	f.wantGet("a", 9, true)
	f.take()

	err := f.m.Set("e", 11, time.Hour)
	if !errors.Is(err, ErrTooHeavy) || err.Error() != "expiry: entry heavier than the maximum weight: key e weighs 11, the maximum is 10" {
		t.Fatalf("Set of a too heavy entry: %v", err)
	}
	if _, _, err := f.m.Compute("a", time.Hour, func(int, bool) (int, ComputeOp) { return 12, Write }); !errors.Is(err, ErrTooHeavy) {
		t.Fatalf("Compute of a too heavy value: %v", err)
	}
	if f.m.Update("a", 11) || f.m.CompareAndSwap("a", 9, 11) {
		t.Fatal("Update or CompareAndSwap stored a too heavy value")
	}
	if _, err := f.m.SetIfAbsent("e", 11, time.Hour); !errors.Is(err, ErrTooHeavy) {
		t.Fatalf("SetIfAbsent of a too heavy entry: %v", err)
	}
	if _, err := f.m.GetOrLoad(context.Background(), "e", constLoader(11, time.Hour, nil)); !errors.Is(err, ErrTooHeavy) {
		t.Fatalf("GetOrLoad of a too heavy value: %v", err)
	}
	f.wantGet("a", 9, true)
	f.wantEvicted()
	if st := f.m.Stats(); st.Weight != 9 || st.Entries != 1 {
		t.Fatalf("Stats: weight %d, %d entries; want 9, 1", st.Weight, st.Entries)
	}
	f.clk.Advance(3 * time.Hour)
	if st := f.m.Stats(); st.Weight != 0 || st.Entries != 0 {
		t.Fatalf("Stats after expiry: weight %d, %d entries", st.Weight, st.Entries)
	}
}

// TestMaxWeightRestore: a snapshot holding an entry heavier than the
// bound restores nothing; one whose total is heavier restores what fits,
// evicting the entries closest to expiry.
func TestMaxWeightRestore(t *testing.T) {
	src := newFixture(t)
	src.set("a", 6, time.Hour)
	src.set("b", 6, 2*time.Hour)
	var snap bytes.Buffer
	if err := src.m.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	small := newFixture(t, WithMaxWeight(5, byValue))
	if err := small.m.Restore(bytes.NewReader(snap.Bytes())); !errors.Is(err, ErrTooHeavy) || small.m.Len() != 0 {
		t.Fatalf("Restore of too heavy entries: %v, %d entries", err, small.m.Len())
	}
	f := newFixture(t, WithMaxWeight(10, byValue))
	if err := f.m.Restore(&snap); err != nil {
		t.Fatal(err)
	}
	f.wantGet("b", 6, true)
	f.wantGet("a", 0, false)
	f.verify()
}

// TestMaxWeightManyGoroutines writes keys of random weights, a few of
// them hot, from many goroutines: the total never passes the bound and
// always matches the entries.
func TestMaxWeightManyGoroutines(t *testing.T) {
	f := newFixture(t, WithMaxWeight(1000, byValue))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 500 {
				k := strings.Repeat("k", 1+r.IntN(40))
				v := 1 + r.IntN(120)
				ttl := time.Duration(1+r.IntN(100)) * time.Minute
				switch r.IntN(4) {
				case 0:
					f.m.Update(k, v)
				case 1:
					f.m.Compute(k, ttl, func(old int, _ bool) (int, ComputeOp) { return (old + v) % 200, Write })
				default:
					f.m.Set(k, v, ttl)
				}
			}
		})
	}
	wg.Wait()
	f.verify()
	if st := f.m.Stats(); st.Weight > 1000 {
		t.Fatalf("weight %d", st.Weight)
	}
}

func TestMaxWeightMisuse(t *testing.T) {
	for _, c := range []struct {
		do   func()
		want string
	}{
		{func() { WithMaxWeight[string, int](1, nil) }, "expiry: WithMaxWeight: nil weigher"},
		{func() { New[int, int](WithMaxWeight(1, byValue)) }, "expiry: New: WithMaxWeight weigher is func(string, int) uint64, want func(int, int) uint64"},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.want {
					t.Errorf("panic %v, want %q", r, c.want)
				}
			}()
			c.do()
		}()
	}
}

// TestMaxWeightAtTheTop: a bound or weights near 2^64 are counted
// without overflow. A bound of MaxUint64 was read as -1, so that every
// Set evicted the rest; two weights of 2^62 under a bound of 2^62 added
// up past it.
func TestMaxWeightAtTheTop(t *testing.T) {
	one := func(string, int) uint64 { return 1 }
	f := newFixture(t, WithMaxWeight(math.MaxUint64, one))
	f.set("a", 1, time.Hour)
	f.set("b", 2, time.Hour)
	if n, st := f.m.Len(), f.m.Stats(); n != 2 || st.Weight != 2 {
		t.Fatalf("bound MaxUint64, two entries of 1: Len %d, Weight %d; want 2, 2", n, st.Weight)
	}

	const max = 1 << 62
	heavy := func(string, int) uint64 { return max }
	g := newFixture(t, WithMaxWeight(max, heavy))
	g.set("a", 1, time.Hour)
	g.set("b", 2, 2*time.Hour)
	if n, st := g.m.Len(), g.m.Stats(); n != 1 || st.Weight != max {
		t.Fatalf("bound 2^62, two entries of 2^62: Len %d, Weight %d; want 1, 2^62", n, st.Weight)
	}
	g.wantEvicted(evicted{"a", 1, Capacity, 0})

	h := newFixture(t, WithMaxWeight(math.MaxUint64, func(_ string, v int) uint64 { return uint64(v) << 62 }))
	h.set("a", 3, time.Hour) // 3·2^62
	h.set("b", 1, 2*time.Hour)
	h.set("c", 1, 3*time.Hour) // 5·2^62 would pass the bound: a goes
	if n, st := h.m.Len(), h.m.Stats(); n != 2 || st.Weight != 2<<62 {
		t.Fatalf("weights 3·2^62, 2^62, 2^62 under MaxUint64: Len %d, Weight %d; want 2, 2^63", n, st.Weight)
	}
}
