package expiry

import (
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/internal/misusetest"
)

// compute runs m.Compute(k, ttl, f) and fails t on an error.
func (f *fixture) compute(k string, ttl time.Duration, fn func(int, bool) (int, ComputeOp)) (int, bool) {
	f.t.Helper()
	v, ok, err := f.m.Compute(k, ttl, fn)
	if err != nil {
		f.t.Fatalf("Compute(%q): %v", k, err)
	}
	f.verify()
	return v, ok
}

// wantArgs returns a Compute function that fails t unless it is given
// old and found, and then returns v and op.
func wantArgs(t *testing.T, old int, found bool, v int, op ComputeOp) func(int, bool) (int, ComputeOp) {
	return func(gotOld int, gotFound bool) (int, ComputeOp) {
		t.Helper()
		if gotOld != old || gotFound != found {
			t.Errorf("Compute's function got (%d, %v), want (%d, %v)", gotOld, gotFound, old, found)
		}
		return v, op
	}
}

func (f *fixture) wantTTL(k string, want time.Duration) {
	f.t.Helper()
	if left, ok := f.m.TTL(k); left != want || ok != (want > 0) {
		f.t.Fatalf("TTL(%q) = %v, %v; want %v", k, left, ok, want)
	}
}

// TestComputeOps walks one key through every op, as otter's Compute test
// does: each call sees the value the one before left, returns the value
// after, and the callbacks say what left.
func TestComputeOps(t *testing.T) {
	f := newFixture(t)
	steps := []struct {
		name          string
		old           int
		found         bool
		ret           int
		op            ComputeOp
		want          int
		wantOK        bool
		wantCallbacks []evicted
	}{
		{"create", 0, false, 42, Write, 42, true, nil},
		{"write over", 42, true, 84, Write, 84, true, []evicted{{"k", 42, Replaced, 0}}},
		{"keep", 84, true, 1, Keep, 84, true, nil},
		{"update", 84, true, 85, Update, 85, true, []evicted{{"k", 84, Replaced, 0}}},
		{"remove", 85, true, 7, Remove, 0, false, []evicted{{"k", 85, Deleted, 0}}},
		{"remove absent", 0, false, 7, Remove, 0, false, nil},
		{"keep absent", 0, false, 7, Keep, 0, false, nil},
		{"update absent creates", 0, false, 9, Update, 9, true, nil},
	}
	for _, st := range steps {
		v, ok := f.compute("k", time.Hour, wantArgs(t, st.old, st.found, st.ret, st.op))
		if v != st.want || ok != st.wantOK {
			t.Fatalf("%s: Compute = %d, %v; want %d, %v", st.name, v, ok, st.want, st.wantOK)
		}
		f.wantGet("k", st.want, st.wantOK)
		f.wantEvicted(st.wantCallbacks...)
	}
}

// TestComputeDeadlines: Write renews the deadline as Set does; Update
// keeps it, and a later Touch still renews by the entry's own ttl.
func TestComputeDeadlines(t *testing.T) {
	f := newFixture(t)
	f.set("w", 1, 10*time.Second)
	f.set("u", 1, 10*time.Second)
	f.clk.Advance(4 * time.Second)
	f.compute("w", time.Minute, func(v int, _ bool) (int, ComputeOp) { return v + 1, Write })
	f.compute("u", time.Minute, func(v int, _ bool) (int, ComputeOp) { return v + 1, Update })
	f.wantTTL("w", time.Minute)
	f.wantTTL("u", 6*time.Second)
	f.take()
	f.clk.Advance(6 * time.Second)
	f.wantGet("u", 0, false)
	f.wantGet("w", 2, true)
	f.wantEvicted(evicted{"u", 2, Expired, 10 * time.Second})
	f.set("u", 5, 10*time.Second)
	f.compute("u", time.Minute, func(v int, _ bool) (int, ComputeOp) { return v + 1, Update })
	f.clk.Advance(5 * time.Second)
	f.m.Touch("u")
	f.wantTTL("u", 10*time.Second) // the ttl it was set with, not Compute's
}

// TestComputeSeesNoExpiredEntry: an entry past its deadline whose bucket
// has not fired is no value to Compute, as to Get; writing over it, or
// removing it, says Expired for it.
func TestComputeSeesNoExpiredEntry(t *testing.T) {
	f := newFixture(t, WithGranularity(time.Hour))
	for _, op := range []ComputeOp{Keep, Write, Update, Remove} {
		t.Run(op.String(), func(t *testing.T) {
			f.t = t
			f.set("k", 1, time.Second)
			f.clk.Advance(time.Second)
			v, ok := f.compute("k", time.Minute, wantArgs(t, 0, false, 2, op))
			wantOK := op == Write || op == Update
			if ok != wantOK || (ok && v != 2) {
				t.Fatalf("Compute = %d, %v", v, ok)
			}
			var want []evicted
			if op != Keep {
				want = []evicted{{"k", 1, Expired, f.clk.Now().Sub(start)}}
			}
			f.wantEvicted(want...)
			f.m.Delete("k")
			f.take()
		})
	}
}

// TestComputeMisuse: errors leave f uncalled; a panicking f or a bad op
// changes nothing and leaves the map unlocked.
func TestComputeMisuse(t *testing.T) {
	never := func(t *testing.T) func(int, bool) (int, ComputeOp) {
		return func(int, bool) (int, ComputeOp) {
			t.Error("Compute called its function")
			return 0, Write
		}
	}
	// after checks that m still holds k=1 and is not locked.
	after := func(t *testing.T, f *fixture) {
		lockFree(t, f.m)
		f.wantGet("k", 1, true)
		f.verify()
	}
	misusetest.Run(t, []misusetest.Case{
		{
			Name: "ttl 0",
			Call: func(t *testing.T) error {
				_, _, err := newFixture(t).m.Compute("k", 0, never(t))
				return err
			},
			Is: ErrTTL, Msg: "expiry: non-positive ttl 0s",
		},
		{
			Name: "closed map",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				f.m.Close()
				_, _, err := f.m.Compute("k", time.Hour, never(t))
				return err
			},
			Is: ErrClosed, Msg: "expiry: map closed",
		},
		{
			Name: "closed wheel",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				f.w.Close()
				_, _, err := f.m.Compute("k", time.Hour, never(t))
				if !errors.Is(err, timewheel.ErrClosed) {
					t.Errorf("error %v does not wrap timewheel.ErrClosed", err)
				}
				return err
			},
			Is: ErrClosed, Msg: "expiry: map closed: " + timewheel.ErrClosed.Error(),
		},
		{
			Name:  "nil function",
			Call:  func(t *testing.T) error { _, _, err := newFixture(t).m.Compute("k", time.Hour, nil); return err },
			Panic: "expiry: Compute called with a nil function",
		},
		{
			Name: "function panics",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				f.set("k", 1, time.Hour)
				defer after(t, f)
				f.m.Compute("k", time.Hour, func(int, bool) (int, ComputeOp) { panic("expiry test: boom") })
				return nil
			},
			Panic: "expiry test: boom",
		},
		{
			Name: "bad op",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				f.set("k", 1, time.Hour)
				defer after(t, f)
				f.m.Compute("k", time.Hour, func(int, bool) (int, ComputeOp) { return 2, 9 })
				return nil
			},
			Panic: "expiry: Compute's function returned ComputeOp(9), which is none of Keep, Write, Update and Remove",
		},
		{
			Name: "NaN key",
			Call: func(t *testing.T) error {
				m := New[float64, int]()
				defer m.Close()
				m.Compute(math.NaN(), time.Hour, func(int, bool) (int, ComputeOp) { return 1, Write })
				return nil
			},
			Panic: "expiry: Compute called with a key holding NaN (NaN), which no lookup finds",
		},
		{
			Name: "GetOrSet NaN key",
			Call: func(t *testing.T) error {
				m := New[float64, int]()
				defer m.Close()
				_, _, err := m.GetOrSet(math.NaN(), 1, time.Hour)
				return err
			},
			Panic: "expiry: GetOrSet called with a key holding NaN (NaN), which no lookup finds",
		},
		{
			Name: "SetIfAbsent ttl -1s",
			Call: func(t *testing.T) error {
				_, err := newFixture(t).m.SetIfAbsent("k", 1, -time.Second)
				return err
			},
			Is: ErrTTL, Msg: "expiry: non-positive ttl -1s",
		},
		{
			Name: "GetOrSet after Close",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				f.m.Close()
				_, _, err := f.m.GetOrSet("k", 1, time.Hour)
				return err
			},
			Is: ErrClosed, Msg: "expiry: map closed",
		},
		{
			Name: "CompareAndSwap of slices",
			Call: func(t *testing.T) error {
				m := New[string, []int]()
				defer m.Close()
				m.CompareAndSwap("k", nil, []int{1})
				return nil
			},
			Panic: "expiry: CompareAndSwap called on a Map whose values, of type []int, are not comparable",
		},
		{
			Name: "CompareAndDelete of an any holding a slice",
			Call: func(t *testing.T) error {
				m := New[string, any]()
				defer m.Close()
				m.Set("k", []int{1}, time.Hour)
				defer func() { lockFree(t, m) }()
				m.CompareAndDelete("k", []int{1})
				return nil
			},
			Panic: "expiry: CompareAndDelete called with a value holding an incomparable type: []int{1}",
		},
	})
}

// TestComputeOneKeyManyGoroutines adds 1 to one key from many goroutines
// at once, by Compute, for values stored in place (int) and values that
// take a new entry per write (string), while others read it: no increment
// is lost, every Compute returns the value it wrote, and a reader never
// sees the count go down.
func TestComputeOneKeyManyGoroutines(t *testing.T) {
	t.Run("V=int", func(t *testing.T) {
		oneKeyCounter(t, func(n int) int { return n }, func(v int) int { return v })
	})
	t.Run("V=string", func(t *testing.T) {
		oneKeyCounter(t, strconv.Itoa, func(s string) int { n, _ := strconv.Atoi(s); return n })
	})
}

func oneKeyCounter[V any](t *testing.T, enc func(int) V, dec func(V) int) {
	const goroutines, adds = 8, 500
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk))
	defer w.Close()
	var replaced atomic.Int64
	m := New[string, V](WithWheel(w), WithOnEvict(func(string, V, Reason) { replaced.Add(1) }))
	defer m.Close()
	var stop atomic.Bool
	var readers, writers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			last := 0
			for !stop.Load() {
				if v, ok := m.Get("k"); ok {
					if n := dec(v); n < last {
						t.Errorf("Get read %d after %d", n, last)
						return
					} else {
						last = n
					}
				}
			}
		})
	}
	for range goroutines {
		writers.Go(func() {
			for range adds {
				var wrote int
				v, ok, err := m.Compute("k", time.Hour, func(old V, found bool) (V, ComputeOp) {
					wrote = 1
					if found {
						wrote = dec(old) + 1
					}
					return enc(wrote), Update
				})
				if err != nil || !ok || dec(v) != wrote {
					t.Errorf("Compute = %v, %v, %v; it wrote %d", v, ok, err, wrote)
					return
				}
			}
		})
	}
	writers.Wait()
	stop.Store(true)
	readers.Wait()
	m.Flush()
	if v, ok := m.Get("k"); !ok || dec(v) != goroutines*adds {
		t.Fatalf("Get = %v, %v; want %d", v, ok, goroutines*adds)
	}
	if got := replaced.Load(); got != goroutines*adds-1 {
		t.Fatalf("%d Replaced callbacks, want %d", got, goroutines*adds-1)
	}
	if err := m.verify(); err != nil {
		t.Fatal(err)
	}
}

// TestComputeReturnsItsOwnValue: with a Set of the key racing it, Compute
// returns the value its function wrote, not the Set's.
func TestComputeReturnsItsOwnValue(t *testing.T) {
	m := New[int, int]()
	defer m.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			m.Set(1, -1, time.Hour)
		}
	})
	defer wg.Wait()
	defer stop.Store(true)
	for i := range 20_000 {
		v, ok, err := m.Compute(1, time.Hour, func(int, bool) (int, ComputeOp) { return i, Write })
		if err != nil || !ok || v != i {
			t.Fatalf("Compute wrote %d, returned %d, %v, %v", i, v, ok, err)
		}
	}
}

// TestOneWinnerPerAbsentKey races GetOrSet, SetIfAbsent and GetAndDelete
// of one key from many goroutines, round after round: in each round
// exactly one GetOrSet or SetIfAbsent stores, every GetOrSet returns the
// value stored, and exactly one GetAndDelete takes it.
func TestOneWinnerPerAbsentKey(t *testing.T) {
	const goroutines, rounds = 8, 300
	m := New[string, int]()
	defer m.Close()
	for r := range rounds {
		var stored, took atomic.Int64
		var wg sync.WaitGroup
		got := make([]int, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				mine := r*100 + g
				if g%2 == 0 {
					ok, err := m.SetIfAbsent("k", mine, time.Hour)
					if err != nil {
						t.Error(err)
					}
					if ok {
						stored.Add(1)
					}
					got[g] = -1
					return
				}
				v, loaded, err := m.GetOrSet("k", mine, time.Hour)
				if err != nil {
					t.Error(err)
				}
				if !loaded {
					stored.Add(1)
					if v != mine {
						t.Errorf("GetOrSet stored %d, returned %d", mine, v)
					}
				}
				got[g] = v
			})
		}
		wg.Wait()
		want, _ := m.Get("k")
		for g, v := range got {
			if v != -1 && v != want {
				t.Fatalf("round %d: GetOrSet %d returned %d, the map holds %d", r, g, v, want)
			}
		}
		for range goroutines {
			wg.Go(func() {
				if v, ok := m.GetAndDelete("k"); ok {
					took.Add(1)
					if v != want {
						t.Errorf("GetAndDelete = %d, want %d", v, want)
					}
				}
			})
		}
		wg.Wait()
		if stored.Load() != 1 || took.Load() != 1 {
			t.Fatalf("round %d: %d stored, %d took", r, stored.Load(), took.Load())
		}
	}
}

// TestCompareAndSwapCounts adds to one key from many goroutines by
// CompareAndSwap loops: every swap that reports true counted, none more;
// the deadline never moves.
func TestCompareAndSwapCounts(t *testing.T) {
	const goroutines, adds = 8, 300
	f := newFixture(t)
	f.set("k", 0, 10*time.Second)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range adds {
				for {
					v, _ := f.m.Get("k")
					if f.m.CompareAndSwap("k", v, v+1) {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	f.wantGet("k", goroutines*adds, true)
	f.wantTTL("k", 10*time.Second)
	if f.m.CompareAndSwap("k", 0, 1) || f.m.CompareAndDelete("k", 0) {
		t.Fatal("a swap or delete of a value the key does not hold")
	}
	if !f.m.CompareAndDelete("k", goroutines*adds) {
		t.Fatal("CompareAndDelete of the value held failed")
	}
	f.wantGet("k", 0, false)
	f.verify()
}

// TestUpdateKeepsTheDeadline: Update keeps the deadline and ttl of a live
// entry, in place or by a new entry, and stores nothing without one.
func TestUpdateKeepsTheDeadline(t *testing.T) {
	f := newFixture(t, WithGranularity(time.Minute))
	if f.m.Update("k", 1) {
		t.Fatal("Update of an absent key reported true")
	}
	f.set("k", 1, 10*time.Second)
	f.clk.Advance(3 * time.Second)
	if !f.m.Update("k", 2) {
		t.Fatal("Update of a live key reported false")
	}
	f.verify()
	f.wantGet("k", 2, true)
	f.wantTTL("k", 7*time.Second)
	f.wantEvicted(evicted{"k", 1, Replaced, 3 * time.Second})
	f.clk.Advance(7 * time.Second) // past the deadline, not the bucket
	if f.m.Update("k", 3) {
		t.Fatal("Update of an expired key reported true")
	}
	f.wantGet("k", 0, false)

	ms := New[string, string](WithWheel(f.w)) // values in new entries
	defer ms.Close()
	ms.Set("k", "a", 10*time.Second)
	f.clk.Advance(4 * time.Second)
	if !ms.Update("k", "b") {
		t.Fatal("Update of a live key reported false")
	}
	if v, _ := ms.Get("k"); v != "b" {
		t.Fatalf("Get = %q", v)
	}
	if left, _ := ms.TTL("k"); left != 6*time.Second {
		t.Fatalf("TTL %v after Update, want 6s", left)
	}
	if err := ms.verify(); err != nil {
		t.Fatal(err)
	}
}
