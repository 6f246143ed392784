package expiry

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// TestChurn runs Set, Touch, Get, Delete, the atomic updates, All and
// Snapshot from several
// goroutines at once on a striped map while the clock moves, and checks
// that nothing is stale, lost or doubled. Each writer owns its keys, so
// it knows what Get must return for them; the callbacks must tell each
// writer exactly the values it replaced and deleted, once each; short-lived
// keys carry their deadline as their value, and no reader may see one
// past it.
func TestChurn(t *testing.T) {
	for _, capacity := range []int{0, 1 << 20} { // striped, and one shard
		t.Run(fmt.Sprint("capacity=", capacity), func(t *testing.T) {
			churn(t, capacity)
		})
	}
}

func churn(t *testing.T, capacity int) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	const writers, keysEach, steps = 4, 64, 2000
	var mu sync.Mutex
	left := map[string][]int{} // key -> values that left as Replaced or Deleted, in order
	opts := []Option{WithWheel(w), WithGranularity(5 * time.Millisecond),
		WithOnEvict(func(k string, v int, why Reason) {
			if why == Replaced || why == Deleted {
				mu.Lock()
				left[k] = append(left[k], v)
				mu.Unlock()
			}
		})}
	if capacity > 0 {
		opts = append(opts, WithCapacity(capacity))
	}
	m := New[string, int](opts...)
	defer m.Close()
	var wg sync.WaitGroup
	wants := make([]map[string][]int, writers) // per writer: key -> values that must leave, in order
	for g := range writers {
		wants[g] = map[string][]int{}
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 2))
			cur := map[string]int{}
			for i := range steps {
				k := fmt.Sprintf("w%d:%d", g, r.IntN(keysEach))
				v := g*steps + i + 1 // a value no other write stores
				switch r.IntN(11) {
				case 0, 1:
					if err := m.Set(k, v, time.Hour); err != nil {
						t.Errorf("Set(%s): %v", k, err)
						return
					}
					if old, ok := cur[k]; ok {
						wants[g][k] = append(wants[g][k], old)
					}
					cur[k] = v
				case 2:
					if _, ok := cur[k]; m.Touch(k) != ok {
						t.Errorf("Touch(%s) = %v, want %v", k, !ok, ok)
					}
				case 3:
					old, ok := cur[k]
					if m.Delete(k) != ok {
						t.Errorf("Delete(%s) = %v, want %v", k, !ok, ok)
					}
					if ok {
						wants[g][k] = append(wants[g][k], old)
						delete(cur, k)
					}
				case 6, 7, 8, 9, 10:
					atomicStep(t, m, k, v, r.IntN(7), cur, wants[g])
				default:
					want, ok := cur[k]
					if v, got := m.Get(k); got != ok || v != want {
						t.Errorf("Get(%s) = %d, %v; want %d, %v (stale or lost)", k, v, got, want, ok)
					}
				}
			}
		})
	}
	clockDone := make(chan struct{})
	wg.Go(func() { // short-lived keys while the clock moves; no Get may return one past its deadline
		r := rand.New(rand.NewPCG(99, 2))
		// latest[id] is the latest deadline the Set of value id can have
		// given: the clock after the Set returned, plus the ttl. Only this
		// goroutine sets short keys, so an id is stored before any Get
		// returns it, and reused only long after its entry has left.
		latest := make([]int64, 1<<16)
		for i := 1; ; i = (i + 1) % len(latest) {
			select {
			case <-clockDone:
				return
			default:
			}
			k := fmt.Sprint("short:", r.IntN(256))
			if i%4 == 0 {
				ttl := time.Duration(1+r.IntN(20)) * time.Millisecond
				m.Set(k, i, ttl)
				latest[i] = int64(clk.Now().Add(ttl).Sub(start))
				continue
			}
			before := clk.Now().Sub(start)
			if v, ok := m.Get(k); ok {
				if dl := time.Duration(latest[v]); dl <= before {
					t.Errorf("Get(%s) returned an entry due by %v, at %v", k, dl, before)
					return
				}
			}
		}
	})
	wg.Go(func() { // the clock, readers of everything, snapshots
		defer close(clockDone)
		for range 200 {
			clk.Advance(time.Millisecond)
			seen := map[string]bool{}
			for k := range m.All() {
				if seen[k] {
					t.Errorf("All yields %s twice", k)
				}
				seen[k] = true
			}
			var buf bytes.Buffer
			if err := m.Snapshot(&buf); err != nil {
				t.Errorf("Snapshot: %v", err)
			}
		}
	})
	wg.Wait()
	m.Flush()
	if err := m.verify(); err != nil {
		t.Fatal(err)
	}
	for _, want := range wants {
		for k, vs := range want {
			if got := left[k]; fmt.Sprint(got) != fmt.Sprint(vs) {
				t.Fatalf("%s: callbacks for %v, want %v (lost or doubled)", k, got, vs)
			}
		}
	}
}

// atomicStep runs one atomic update (which, 0 to 6) of k, a key only the
// calling writer writes, whose live value the writer holds in cur, with
// the new value v, checks what it returns, and records in want the
// values that must leave (Replaced or Deleted).
func atomicStep(t *testing.T, m *Map[string, int], k string, v, which int, cur map[string]int, want map[string][]int) {
	t.Helper()
	old, had := cur[k]
	replaced := func() {
		if had {
			want[k] = append(want[k], old)
		}
		cur[k] = v
	}
	switch which {
	case 0, 1, 2: // Compute: Write, Update, Remove
		op := []ComputeOp{Write, Update, Remove}[which]
		got, ok, err := m.Compute(k, time.Hour, func(o int, found bool) (int, ComputeOp) {
			if found != had || o != old {
				t.Errorf("Compute(%s) given %d, %v; want %d, %v (stale or lost)", k, o, found, old, had)
			}
			return v, op
		})
		if err != nil || ok != (op != Remove) || (ok && got != v) {
			t.Errorf("Compute(%s, %v) = %d, %v, %v", k, op, got, ok, err)
		}
		if op != Remove {
			replaced()
		} else if had {
			want[k] = append(want[k], old)
			delete(cur, k)
		}
	case 3:
		if got, ok := m.GetAndDelete(k); ok != had || got != old {
			t.Errorf("GetAndDelete(%s) = %d, %v; want %d, %v", k, got, ok, old, had)
		}
		if had {
			want[k] = append(want[k], old)
			delete(cur, k)
		}
	case 4:
		got, loaded, err := m.GetOrSet(k, v, time.Hour)
		if err != nil || loaded != had || (had && got != old) || (!had && got != v) {
			t.Errorf("GetOrSet(%s) = %d, %v, %v; held %d, %v", k, got, loaded, err, old, had)
		}
		if !had {
			cur[k] = v
		}
	case 5:
		if m.Update(k, v) != had {
			t.Errorf("Update(%s) = %v, want %v", k, !had, had)
		}
		if had {
			replaced()
		}
	default:
		if m.CompareAndSwap(k, old+1, v) { // never the value held
			t.Errorf("CompareAndSwap(%s) of a value it does not hold", k)
		}
		if m.CompareAndSwap(k, old, v) != had {
			t.Errorf("CompareAndSwap(%s) = %v, want %v", k, !had, had)
		}
		if had {
			replaced()
		}
	}
}
