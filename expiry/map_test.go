package expiry

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// evicted is one eviction callback as a test records it.
type evicted struct {
	key string
	val int
	why Reason
	at  time.Duration // virtual time since start
}

// fixture is a map on a virtual clock whose wheel and callbacks run
// inline: when Advance returns, every eviction due has been delivered.
type fixture struct {
	t   *testing.T
	clk *clock.Virtual
	w   *timewheel.Wheel
	m   *Map[string, int]
	mu  sync.Mutex
	got []evicted
}

func newFixture(t *testing.T, opts ...Option) *fixture {
	t.Helper()
	f := &fixture{t: t, clk: clock.NewVirtual(start)}
	f.w = timewheel.New(timewheel.WithClock(f.clk), timewheel.WithExecutor(timewheel.Inline()))
	base := []Option{WithWheel(f.w), WithInlineCallbacks(), WithOnEvict(f.record)}
	f.m = New[string, int](append(base, opts...)...)
	t.Cleanup(func() {
		f.m.Close()
		f.w.Close()
	})
	return f
}

func (f *fixture) record(k string, v int, why Reason) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, evicted{k, v, why, f.clk.Now().Sub(start)})
}

// take returns the evictions recorded since the last take.
func (f *fixture) take() []evicted {
	f.mu.Lock()
	defer f.mu.Unlock()
	got := f.got
	f.got = nil
	return got
}

func (f *fixture) set(k string, v int, ttl time.Duration) {
	f.t.Helper()
	if err := f.m.Set(k, v, ttl); err != nil {
		f.t.Fatalf("Set(%q, %d, %v): %v", k, v, ttl, err)
	}
	f.verify()
}

func (f *fixture) verify() {
	f.t.Helper()
	if err := f.m.verify(); err != nil {
		f.t.Fatalf("at %v: %v", f.clk.Now().Sub(start), err)
	}
}

// advanceTo moves the clock to start+d.
func (f *fixture) advanceTo(d time.Duration) {
	f.t.Helper()
	f.clk.AdvanceTo(start.Add(d))
	f.verify()
}

// shardsOf returns the number of shards keys fall in: the number of
// buckets, and wheel timers, that keys with deadlines in one span take.
func (f *fixture) shardsOf(keys ...string) int {
	seen := map[*shard[string, int]]bool{}
	for _, k := range keys {
		seen[f.m.shardFor(k)] = true
	}
	return len(seen)
}

// wantTimers fails the test unless the wheel holds n timers, and the map
// says it has n buckets.
func (f *fixture) wantTimers(n int) {
	f.t.Helper()
	if got, buckets := f.w.Len(), f.m.Stats().Buckets; got != n || buckets != n {
		f.t.Fatalf("at %v: %d wheel timers, %d buckets; want %d", f.clk.Now().Sub(start), got, buckets, n)
	}
}

func (f *fixture) wantGet(k string, want int, ok bool) {
	f.t.Helper()
	v, got := f.m.Get(k)
	if got != ok || v != want {
		f.t.Fatalf("at %v: Get(%q) = %d, %v; want %d, %v", f.clk.Now().Sub(start), k, v, got, want, ok)
	}
}

func (f *fixture) wantEvicted(want ...evicted) {
	f.t.Helper()
	if got := f.take(); !slices.Equal(got, want) {
		f.t.Fatalf("at %v: evicted %v, want %v", f.clk.Now().Sub(start), got, want)
	}
}

func TestExpiresAtDeadline(t *testing.T) {
	f := newFixture(t, WithGranularity(time.Second))
	f.set("a", 1, 1500*time.Millisecond) // bucket (1s, 2s]
	f.set("b", 2, 2*time.Second)         // same bucket
	f.set("c", 3, 3*time.Second)
	f.wantTimers(f.shardsOf("a", "b") + 1) // a bucket per shard and span
	f.advanceTo(1499 * time.Millisecond)
	f.wantGet("a", 1, true)
	f.advanceTo(1500 * time.Millisecond)
	f.wantGet("a", 0, false) // exact for readers, before the bucket fires
	if _, ok := f.m.TTL("a"); ok || f.m.Touch("a") {
		t.Fatal("TTL or Touch sees an entry past its deadline")
	}
	if f.m.Len() != 3 {
		t.Fatalf("Len = %d before the bucket fired, want 3", f.m.Len())
	}
	f.wantEvicted()
	f.advanceTo(2 * time.Second)
	f.wantEvicted(evicted{"a", 1, Expired, 2 * time.Second}, evicted{"b", 2, Expired, 2 * time.Second})
	f.wantGet("c", 3, true)
	f.advanceTo(10 * time.Second)
	f.wantEvicted(evicted{"c", 3, Expired, 3 * time.Second})
	if f.m.Len() != 0 || f.w.Len() != 0 {
		t.Fatalf("Len %d, wheel timers %d after all expired", f.m.Len(), f.w.Len())
	}
}

func TestReasons(t *testing.T) {
	f := newFixture(t)
	f.set("a", 1, time.Minute)
	f.set("a", 2, time.Minute)
	f.wantEvicted(evicted{"a", 1, Replaced, 0})
	if !f.m.Delete("a") || f.m.Delete("a") {
		t.Fatal("Delete: want true then false")
	}
	f.wantEvicted(evicted{"a", 2, Deleted, 0})

	// An entry past its deadline whose bucket has not fired left already:
	// Set, Delete and the capacity report it as Expired.
	f.set("b", 1, 50*time.Millisecond)
	f.set("c", 1, 50*time.Millisecond)
	f.advanceTo(60 * time.Millisecond) // bucket ends at 100ms
	f.set("b", 2, time.Minute)
	if f.m.Delete("c") {
		t.Fatal("Delete of an expired entry returned true")
	}
	f.wantEvicted(evicted{"b", 1, Expired, 60 * time.Millisecond}, evicted{"c", 1, Expired, 60 * time.Millisecond})
	f.advanceTo(time.Second)
	f.wantEvicted()
	f.wantGet("b", 2, true)
}

func TestTouch(t *testing.T) {
	f := newFixture(t, WithGranularity(time.Millisecond))
	f.set("s", 1, time.Second)
	f.advanceTo(900 * time.Millisecond)
	if !f.m.Touch("s") {
		t.Fatal("Touch of a live entry returned false")
	}
	f.verify()
	if ttl, _ := f.m.TTL("s"); ttl != time.Second {
		t.Fatalf("TTL after Touch = %v, want 1s", ttl)
	}
	f.advanceTo(1899 * time.Millisecond)
	f.wantGet("s", 1, true)
	f.wantEvicted()
	f.advanceTo(1900 * time.Millisecond)
	f.wantEvicted(evicted{"s", 1, Expired, 1900 * time.Millisecond})
	if f.m.Touch("s") || f.m.Touch("nope") {
		t.Fatal("Touch of a missing entry returned true")
	}
}

func TestCapacityEvictsClosestToExpiry(t *testing.T) {
	f := newFixture(t, WithCapacity(3), WithGranularity(time.Second))
	f.set("long", 1, time.Hour)
	f.set("short", 2, time.Minute)
	f.set("mid", 3, 30*time.Minute)
	f.set("mid", 4, 30*time.Minute) // a replaced key does not evict
	f.wantEvicted(evicted{"mid", 3, Replaced, 0})
	f.set("new", 5, 2*time.Hour)
	f.wantEvicted(evicted{"short", 2, Capacity, 0})
	f.set("newer", 6, 2*time.Hour)
	f.wantEvicted(evicted{"mid", 4, Capacity, 0})
	if f.m.Len() != 3 {
		t.Fatalf("Len = %d, want 3", f.m.Len())
	}
	for _, k := range []string{"long", "new", "newer"} {
		if _, ok := f.m.Get(k); !ok {
			t.Fatalf("%q was evicted", k)
		}
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t)
	for _, ttl := range []time.Duration{0, -time.Second} {
		err := f.m.Set("k", 1, ttl)
		if !errors.Is(err, ErrTTL) || !strings.HasPrefix(err.Error(), "expiry: ") || !strings.Contains(err.Error(), ttl.String()) {
			t.Errorf("Set with ttl %v: error %v", ttl, err)
		}
	}
	if f.m.Len() != 0 {
		t.Fatal("a bad Set stored an entry")
	}
	mustPanic(t, "expiry: New: WithOnEvict callback is func(int, int, expiry.Reason)", func() {
		New[string, int](WithOnEvict(func(int, int, Reason) {}))
	})
	mustPanic(t, "expiry: WithGranularity: non-positive granularity -1s", func() { WithGranularity(-time.Second) })
	mustPanic(t, "expiry: WithCapacity: negative capacity -1", func() { WithCapacity(-1) })
}

func mustPanic(t *testing.T, prefix string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), prefix) {
			t.Errorf("panic %v, want one starting %q", r, prefix)
		}
	}()
	f()
}

func TestClose(t *testing.T) {
	f := newFixture(t)
	f.set("a", 1, time.Minute)
	if err := f.m.Close(); err != nil {
		t.Fatal(err)
	}
	if f.w.Len() != 0 {
		t.Fatalf("%d wheel timers after Close", f.w.Len())
	}
	if err := f.m.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	if err := f.m.Set("b", 1, time.Minute); !errors.Is(err, ErrClosed) {
		t.Fatalf("Set after Close: %v", err)
	}
	f.wantGet("a", 0, false)
	f.advanceTo(time.Hour)
	f.wantEvicted()
}

// Entries of one shard set together share one wheel timer; a Touch moves
// nothing (the old bucket files the entry again when it fires); a bucket
// emptied by Delete gives its timer back at once.
func TestOneTimerPerBucket(t *testing.T) {
	f := newFixture(t, WithGranularity(time.Second))
	keys := strKeys(1000)
	for i, k := range keys {
		f.set(k, i, time.Minute)
	}
	f.wantTimers(f.shardsOf(keys...)) // one span, a bucket in each shard
	f.advanceTo(10 * time.Second)
	for _, k := range keys[:500] {
		f.m.Touch(k) // now due at 70s
	}
	f.verify()
	f.wantTimers(f.shardsOf(keys...))
	for _, k := range keys[500:] {
		f.m.Delete(k)
	}
	f.verify()
	f.wantTimers(f.shardsOf(keys[:500]...))
	f.take()
	f.advanceTo(60 * time.Second) // the old buckets file the touched entries at 70s
	f.wantEvicted()
	f.wantTimers(f.shardsOf(keys[:500]...))
	f.wantGet(keys[0], 0, true)
	f.advanceTo(70 * time.Second)
	if got := len(f.take()); got != 500 {
		t.Fatalf("%d evicted at 70s, want 500", got)
	}
	f.wantTimers(0)
}

func TestAll(t *testing.T) {
	f := newFixture(t, WithGranularity(time.Second))
	f.set("c", 3, 3*time.Second)
	f.set("a", 1, 1500*time.Millisecond)
	f.set("b", 2, 2*time.Second)
	f.set("d", 4, 4*time.Second)
	f.advanceTo(1600 * time.Millisecond) // a is past its deadline
	var keys []string
	for k, v := range f.m.All() {
		keys = append(keys, fmt.Sprint(k, v))
		if k == "b" {
			f.set("x", 9, time.Hour) // the loop may use the map
		}
		if k == "c" {
			break
		}
	}
	if want := []string{"b2", "c3"}; !slices.Equal(keys, want) {
		t.Fatalf("All gave %v, want %v", keys, want)
	}
}

// All gives the entries in deadline order, whatever their shards and
// buckets: a Touch or a Set moves an entry to its new place.
func TestAllDeadlineOrder(t *testing.T) {
	f := newFixture(t, WithGranularity(time.Second))
	all := func() []string {
		var keys []string
		for k := range f.m.All() {
			keys = append(keys, k)
		}
		return keys
	}
	f.set("a", 1, 1500*time.Millisecond) // bucket (1s, 2s]
	f.set("b", 2, 1600*time.Millisecond) // same span
	f.set("c", 3, 2500*time.Millisecond) // span (2s, 3s]
	f.advanceTo(100 * time.Millisecond)
	if !f.m.Touch("a") { // a: 1.6s, after b
		t.Fatal("Touch(a) = false")
	}
	f.set("b", 4, 1400*time.Millisecond) // b: 1.5s
	if got, want := all(), []string{"b", "a", "c"}; !slices.Equal(got, want) {
		t.Fatalf("All gave %v after a Touch and a Set within their span, want %v", got, want)
	}
	f.advanceTo(time.Second)
	if !f.m.Touch("a") { // a: 2.5s, as c
		t.Fatal("Touch(a) = false")
	}
	f.set("c", 5, 1400*time.Millisecond) // c: 2.4s
	if got, want := all(), []string{"b", "c", "a"}; !slices.Equal(got, want) {
		t.Fatalf("All gave %v after a Touch into another span, want %v", got, want)
	}
	f.verify()
}

// A callback that panics is recovered and reported; the entries after it
// are still evicted and their callbacks still run, inline and on the
// delivery goroutine alike.
func TestCallbackPanics(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprint("inline=", inline), func(t *testing.T) {
			clk := clock.NewVirtual(start)
			w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
			defer w.Close()
			var mu sync.Mutex
			var got, panics []string
			opts := []Option{
				WithWheel(w),
				WithOnEvict(func(k string, v int, why Reason) {
					mu.Lock()
					got = append(got, k)
					mu.Unlock()
					if v < 0 {
						panic("bad value " + k)
					}
				}),
				WithPanicHandler(func(r any) {
					mu.Lock()
					panics = append(panics, fmt.Sprint(r))
					mu.Unlock()
				}),
			}
			if inline {
				opts = append(opts, WithInlineCallbacks())
			}
			m := New[string, int](opts...)
			defer m.Close()
			m.Set("a", 1, time.Second)
			m.Set("b", -1, time.Second)
			m.Set("c", 1, time.Second)
			m.Set("d", -1, 2*time.Second)
			m.Set("e", 1, 3*time.Second)
			clk.Advance(5 * time.Second)
			m.Flush()
			mu.Lock()
			defer mu.Unlock()
			// a, b and c leave together, from buckets of their shards
			// that fire in no set order; d and e after them.
			if len(got) == 5 {
				slices.Sort(got[:3])
			}
			if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(got, want) {
				t.Fatalf("callbacks for %v, want %v", got, want)
			}
			if want := []string{"bad value b", "bad value d"}; !slices.Equal(panics, want) {
				t.Fatalf("panics %v, want %v", panics, want)
			}
			if m.Len() != 0 {
				t.Fatalf("Len = %d", m.Len())
			}
		})
	}
}

// A callback that blocks holds back the callbacks behind it, not expiry:
// every entry leaves the map on time while the first callback is stuck.
func TestCallbackBlocks(t *testing.T) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	release := make(chan struct{})
	entered := make(chan struct{})
	var mu sync.Mutex
	var got []string
	m := New[string, int](WithWheel(w), WithOnEvict(func(k string, _ int, _ Reason) {
		if k == "stuck" {
			close(entered)
			<-release
		}
		mu.Lock()
		got = append(got, k)
		mu.Unlock()
	}))
	defer m.Close()
	m.Set("stuck", 0, time.Second)
	for i := range 100 {
		m.Set(fmt.Sprint(i), i, time.Duration(i+2)*time.Second)
	}
	clk.Advance(time.Second)
	<-entered
	for i := range 100 {
		clk.Advance(time.Second)
		if n := m.Len(); n != 99-i {
			t.Fatalf("at %v: Len = %d, want %d: expiry stalled", clk.Now().Sub(start), n, 99-i)
		}
		if err := m.Set("later", 1, time.Hour); err != nil {
			t.Fatal(err)
		}
		m.Delete("later")
	}
	close(release)
	m.Flush()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1+100+100 || got[0] != "stuck" || got[1] != "0" || got[2] != "later" {
		t.Fatalf("%d callbacks, first %v", len(got), got[:3])
	}
}

// TestAgainstModel runs random operations from several goroutines while
// the clock moves, checking the structure after each step, and then holds
// a single-goroutine run against a plain model of deadlines.
func TestAgainstModel(t *testing.T) {
	for _, capacity := range []int{0, 50} {
		t.Run(fmt.Sprint("capacity=", capacity), func(t *testing.T) {
			f := newFixture(t, WithCapacity(capacity), WithGranularity(10*time.Millisecond))
			r := rand.New(rand.NewPCG(7, uint64(capacity)))
			model := map[string]time.Duration{} // key -> deadline since start
			ttls := map[string]time.Duration{}
			vals := map[string]int{}
			now := time.Duration(0)
			keys := make([]string, 80)
			for i := range keys {
				keys[i] = fmt.Sprint(i)
			}
			for step := range 3000 {
				k := keys[r.IntN(len(keys))]
				switch op := r.IntN(10); {
				case op < 4:
					ttl := time.Duration(1+r.IntN(500)) * time.Millisecond
					if capacity > 0 {
						if _, ok := model[k]; !ok && len(model) >= capacity {
							// The map evicts some entry closest to expiry; let
							// the model learn which from the callback.
							f.set(k, step, ttl)
							for _, ev := range f.take() {
								if ev.why != Capacity && ev.why != Expired {
									t.Fatalf("step %d: eviction %v", step, ev)
								}
								delete(model, ev.key)
							}
							model[k], ttls[k], vals[k] = now+ttl, ttl, step
							continue
						}
					}
					f.set(k, step, ttl)
					model[k], ttls[k], vals[k] = now+ttl, ttl, step
				case op < 6:
					ok := f.m.Touch(k)
					dl, live := model[k]
					live = live && dl > now
					if ok != live {
						t.Fatalf("step %d: Touch(%s) = %v, model %v", step, k, ok, live)
					}
					if live {
						model[k] = now + ttls[k]
					}
				case op < 7:
					ok := f.m.Delete(k)
					dl, had := model[k]
					if ok != (had && dl > now) {
						t.Fatalf("step %d: Delete(%s) = %v", step, k, ok)
					}
					delete(model, k)
				default:
					now += time.Duration(r.IntN(30)) * time.Millisecond
					f.advanceTo(now)
				}
				f.verify()
				f.take()
				for k, dl := range model {
					if dl+10*time.Millisecond+time.Millisecond <= now {
						delete(model, k) // its bucket has fired
					}
				}
				for _, k := range keys {
					v, ok := f.m.Get(k)
					dl, had := model[k]
					if want := had && dl > now; ok != want || (ok && v != vals[k]) {
						t.Fatalf("step %d: Get(%s) = %d, %v; model deadline %v, now %v", step, k, v, ok, dl, now)
					}
				}
			}
		})
	}
}

func TestConcurrent(t *testing.T) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	var mu sync.Mutex
	count := map[Reason]int{}
	m := New[int, int](WithWheel(w), WithCapacity(500), WithGranularity(5*time.Millisecond),
		WithOnEvict(func(_ int, _ int, why Reason) {
			mu.Lock()
			count[why]++
			mu.Unlock()
		}))
	defer m.Close()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 3000 {
				k := r.IntN(1000)
				switch r.IntN(5) {
				case 0, 1:
					m.Set(k, k, time.Duration(1+r.IntN(100))*time.Millisecond)
				case 2:
					m.Touch(k)
				case 3:
					m.Delete(k)
				default:
					if v, ok := m.Get(k); ok && v != k {
						t.Errorf("Get(%d) = %d", k, v)
					}
				}
			}
		})
	}
	wg.Go(func() {
		for range 300 {
			clk.Advance(time.Millisecond)
			for range m.All() {
			}
		}
	})
	wg.Wait()
	if err := m.verify(); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	m.Flush()
	if m.Len() != 0 || w.Len() != 0 {
		t.Fatalf("Len %d, wheel timers %d after everything expired", m.Len(), w.Len())
	}
	if count[Expired] == 0 || count[Capacity] == 0 || count[Deleted] == 0 || count[Replaced] == 0 {
		t.Fatalf("reasons seen: %v", count)
	}
}
