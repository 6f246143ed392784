package expiry

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// TestGetNeverMissesAnEntryThatStays reads keys that stay in the map
// without the lock while other goroutines insert and delete keys of the
// same shards (so that the index grows and removals shift the staying
// keys' slots back under the readers) and overwrite the staying keys
// (so that their entries are replaced under the readers). Every Get must
// find its key, with a value that is the key's, and Stats must count
// every Get a hit.
func TestGetNeverMissesAnEntryThatStays(t *testing.T) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk))
	defer w.Close()
	m := New[int, int](WithWheel(w))
	defer m.Close()
	const stay, transient, ver = 512, 768, 1000
	for k := range stay {
		if err := m.Set(k, k*ver, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	const reads = 100_000 // per reader
	var stop atomic.Bool
	var writers, readers sync.WaitGroup
	writers.Go(func() { // inserts and deletes transient keys
		r := rand.New(rand.NewPCG(1, 1))
		for !stop.Load() {
			k := stay + r.IntN(transient)
			if r.IntN(2) == 0 {
				m.Set(k, -1, time.Hour)
			} else {
				m.Delete(k)
			}
		}
	})
	writers.Go(func() { // replaces the staying keys' entries
		r := rand.New(rand.NewPCG(2, 2))
		for i := 0; !stop.Load(); i++ {
			k := r.IntN(stay)
			m.Set(k, k*ver+i%ver, time.Hour)
		}
	})
	var bad atomic.Int64
	for g := range 2 {
		readers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 3))
			for range reads {
				k := r.IntN(stay)
				if v, ok := m.Get(k); !ok || v/ver != k {
					if bad.Add(1) <= 5 {
						t.Errorf("Get(%d) = %d, %v; want a value of key %d, true", k, v, ok, k)
					}
				}
			}
		})
	}
	readers.Wait()
	stop.Store(true)
	writers.Wait()
	if n := bad.Load(); n > 0 {
		t.Errorf("%d of %d Gets went wrong", n, 2*reads)
	}
	if st := m.Stats(); st.Hits != uint64(2*reads) || st.Misses != 0 {
		t.Errorf("Stats: %d hits, %d misses; want %d, 0", st.Hits, st.Misses, 2*reads)
	}
}

// TestGetReadsAValueWithItsOwnDeadline holds readVal, which Get uses
// without the lock, to its promise while Sets of one key store values in
// place (int64, pointer) or in new entries (string): the value it
// returns is the one stored with the deadline it returns. The clock
// stands still, so each Set's deadline is the map's now plus its ttl,
// and each value says its ttl. The ttls go up and down, so deadlines
// repeat: when a Set stored values of an earlier deadline in place too,
// a reader could read deadline X, then the value of a Set of deadline Y,
// then X again from the next Set, and took them for a pair (under -race,
// 2 runs of 4 failed so); without the writing marker it fails too.
func TestGetReadsAValueWithItsOwnDeadline(t *testing.T) {
	t.Run("in place", func(t *testing.T) {
		valueDeadlinePairs(t, func(ttl time.Duration) int64 { return int64(ttl) },
			func(v int64) time.Duration { return time.Duration(v) })
	})
	t.Run("copied", func(t *testing.T) {
		valueDeadlinePairs(t, func(ttl time.Duration) string { return ttl.String() },
			func(v string) time.Duration { d, _ := time.ParseDuration(v); return d })
	})
	t.Run("pointer", func(t *testing.T) {
		valueDeadlinePairs(t, func(ttl time.Duration) *time.Duration { return &ttl },
			func(v *time.Duration) time.Duration { return *v })
	})
}

func valueDeadlinePairs[V any](t *testing.T, enc func(time.Duration) V, dec func(V) time.Duration) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk))
	defer w.Close()
	m := New[int, V](WithWheel(w), WithGranularity(time.Second))
	defer m.Close()
	// Long and short ttls, in different buckets: a shorter one moves the
	// entry to an earlier bucket, a longer one is stored lazily.
	ttls := []time.Duration{time.Hour, 3 * time.Second, 2 * time.Hour, 10 * time.Second}
	const k = 7
	m.Set(k, enc(ttls[0]), ttls[0])
	now := m.now()
	var stop atomic.Bool
	var writer sync.WaitGroup
	writer.Go(func() {
		for i := 1; !stop.Load(); i++ {
			ttl := ttls[i%len(ttls)]
			m.Set(k, enc(ttl), ttl)
		}
	})
	s, h := m.locate(k)
	bad, fellBack := 0, 0
	for range 200_000 {
		e, ok := s.items.lookup(k, h)
		if !ok || e == nil {
			t.Fatalf("lookup(%d) = %p, %v; the key is always there", k, e, ok)
		}
		v, d, ok := m.readVal(e)
		if !ok {
			fellBack++
			continue
		}
		if want := now + int64(dec(v)); d != want && bad < 5 {
			bad++
			t.Errorf("read value of ttl %v with deadline now%+v", dec(v), time.Duration(d-now))
		}
	}
	stop.Store(true)
	writer.Wait()
	t.Logf("%d reads fell back to the lock", fellBack)
}

// TestTouchIsNeverLost races Touch, which takes no lock, with the buckets
// that expire entries while the clock moves: an entry that a Touch
// renewed (it returned true) must not be evicted before the clock read
// just before that Touch plus the ttl. Each goroutine owns its keys and
// sets a key again, as a new generation, when Touch finds it gone; the
// eviction callbacks say when each generation left. The sliding Get, which
// renews the same way, is held to the same, less its tolerance.
func TestTouchIsNeverLost(t *testing.T) {
	t.Run("Touch", func(t *testing.T) {
		renewalsRace(t, WithGranularity(time.Millisecond), func(m *Map[int, int], k int) bool { return m.Touch(k) }, 0)
	})
	t.Run("sliding Get", func(t *testing.T) {
		renewalsRace(t, WithSliding(), func(m *Map[int, int], k int) bool { _, ok := m.Get(k); return ok }, renewalTTL/16)
	})
}

const renewalTTL = 3 * time.Millisecond

func renewalsRace(t *testing.T, opt Option, renew func(*Map[int, int], int) bool, slack time.Duration) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	const ttl = renewalTTL
	type gen struct{ k, g int }
	var mu sync.Mutex
	evicted := map[gen]time.Duration{} // when each generation left
	m := New[int, int](WithWheel(w), WithGranularity(time.Millisecond), WithInlineCallbacks(),
		WithOnEvict(func(k, g int, why Reason) {
			if why == Expired {
				mu.Lock()
				evicted[gen{k, g}] = clk.Since(start)
				mu.Unlock()
			}
		}), opt)
	defer m.Close()
	const owners, keysEach = 2, 16
	renewed := make([]map[gen]time.Duration, owners) // per owner: the latest clock+ttl a true Touch promised
	var stop atomic.Bool
	var ops atomic.Int64
	var wg sync.WaitGroup
	for o := range owners {
		renewed[o] = map[gen]time.Duration{}
		wg.Go(func() {
			cur := make([]int, keysEach)
			for i := range keysEach {
				m.Set(o*keysEach+i, 0, ttl)
			}
			for i := 0; !stop.Load(); i++ {
				ops.Add(1)
				j := i % keysEach
				k := o*keysEach + j
				before := clk.Since(start)
				if renew(m, k) {
					renewed[o][gen{k, cur[j]}] = before + ttl - slack
					continue
				}
				cur[j]++
				m.Set(k, cur[j], ttl)
			}
		})
	}
	for ops.Load() < 200_000 {
		clk.Advance(100 * time.Microsecond)
	}
	stop.Store(true)
	wg.Wait()
	lost := 0
	for _, r := range renewed {
		for g, promised := range r {
			if at, ok := evicted[g]; ok && at < promised {
				if lost++; lost <= 5 {
					t.Errorf("key %d, generation %d: evicted at %v, though a renewal returned true promising %v", g.k, g.g, at, promised)
				}
			}
		}
	}
	t.Logf("%d generations expired, %d renewed", len(evicted), len(renewed[0])+len(renewed[1]))
}
