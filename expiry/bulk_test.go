package expiry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestGetAll(t *testing.T) {
	f := newFixture(t)
	f.set("a", 1, time.Hour)
	f.set("b", 2, time.Second)
	f.clk.Advance(time.Second)
	got := f.m.GetAll([]string{"a", "b", "c", "a"})
	if want := map[string]int{"a": 1}; !maps.Equal(got, want) {
		t.Fatalf("GetAll = %v, want %v", got, want)
	}
	if st := f.m.Stats(); st.Hits != 2 || st.Misses != 2 {
		t.Fatalf("Stats: %d hits, %d misses; want 2, 2", st.Hits, st.Misses)
	}
}

// TestGetAllOrLoad: one call of the loader for the missing keys, each
// once; its values stored with their ttls; a key it leaves out missing,
// one with a bad ttl an error naming it; the loader statistics count
// the call and the time it took on the wheel's clock.
func TestGetAllOrLoad(t *testing.T) {
	f := newFixture(t)
	f.set("a", 1, time.Hour)
	var asked [][]string
	load := func(ctx context.Context, keys []string) (map[string]Loaded[int], error) {
		asked = append(asked, slices.Clone(keys))
		f.clk.Advance(2 * time.Second) // the load takes two seconds
		return map[string]Loaded[int]{"b": {2, time.Minute}, "c": {3, 0}, "x": {9, time.Minute}}, nil
	}
	got, err := f.m.GetAllOrLoad(context.Background(), []string{"a", "b", "c", "d", "b"}, load)
	if want := map[string]int{"a": 1, "b": 2}; !maps.Equal(got, want) {
		t.Fatalf("GetAllOrLoad = %v, want %v", got, want)
	}
	if !errors.Is(err, ErrTTL) || err.Error() != "expiry: non-positive ttl 0s from the bulk loader for key c" {
		t.Fatalf("error %v", err)
	}
	if want := [][]string{{"b", "c", "d"}}; !slices.EqualFunc(asked, want, slices.Equal) {
		t.Fatalf("loader asked for %v, want %v", asked, want)
	}
	f.wantTTL("b", time.Minute)
	f.wantGet("c", 0, false)
	f.wantGet("x", 0, false) // not asked for: not stored
	st := f.m.Stats()
	if st.Loads != 1 || st.LoadFailures != 0 || st.LoadTime != 2*time.Second {
		t.Fatalf("Stats: %d loads, %d failures, %v loading", st.Loads, st.LoadFailures, st.LoadTime)
	}
	got, err = f.m.GetAllOrLoad(context.Background(), []string{"a", "b"}, load)
	if err != nil || len(got) != 2 || len(asked) != 1 {
		t.Fatalf("GetAllOrLoad of held keys = %v, %v; the loader was called %d times", got, err, len(asked))
	}
	f.verify()
}

// TestGetAllOrLoadSharesLoads: a key a GetOrLoad is loading is not
// given to the bulk loader, whose caller waits for it; a GetOrLoad of a
// key the bulk loader is loading waits for it; a key it leaves out is
// ErrNotFound to that GetOrLoad; a loader error reaches every waiter.
func TestGetAllOrLoadSharesLoads(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			release := make(chan struct{})
			single := make(chan error)
			go func() { // loads b, slowly
				_, err := f.m.GetOrLoad(ctx, "b", func(context.Context, string) (int, time.Duration, error) {
					<-release
					return 2, time.Minute, nil
				})
				single <- err
			}()
			waitLoading(f.m, "b")
			bulkIn := make(chan struct{})
			waiters := make(chan error, 2)
			load := func(ctx context.Context, keys []string) (map[string]Loaded[int], error) {
				if !slices.Equal(keys, []string{"a", "c"}) {
					t.Errorf("bulk loader asked for %v, want [a c]", keys)
				}
				close(bulkIn)
				for _, k := range []string{"a", "c"} { // a GetOrLoad of each waits for this load
					go func() {
						v, err := f.m.GetOrLoad(context.Background(), k, func(context.Context, string) (int, time.Duration, error) {
							t.Errorf("GetOrLoad of %s called its loader during the bulk load", k)
							return 0, time.Minute, nil
						})
						if err == nil && v != 1 {
							err = fmt.Errorf("GetOrLoad of %s = %d", k, v)
						}
						waiters <- err
					}()
					waitJoined(f.m, k)
				}
				close(release)
				if fail {
					return nil, errors.New("store down")
				}
				return map[string]Loaded[int]{"a": {1, time.Minute}}, nil // c left out
			}
			got, err := f.m.GetAllOrLoad(ctx, []string{"a", "b", "c"}, load)
			<-bulkIn
			if err := <-single; err != nil {
				t.Fatal(err)
			}
			errA, errC := <-waiters, <-waiters
			if fail {
				if err == nil || err.Error() != "store down" || !maps.Equal(got, map[string]int{"b": 2}) {
					t.Fatalf("GetAllOrLoad = %v, %v", got, err)
				}
				if errA == nil || errA.Error() != "store down" || errC == nil || errC.Error() != "store down" {
					t.Fatalf("waiters got %v, %v", errA, errC)
				}
				return
			}
			if err != nil || !maps.Equal(got, map[string]int{"a": 1, "b": 2}) {
				t.Fatalf("GetAllOrLoad = %v, %v", got, err)
			}
			if errA != nil {
				errA, errC = errC, errA // they come in either order
			}
			if errA != nil || !errors.Is(errC, ErrNotFound) || errC.Error() != "expiry: no value for the key c: the bulk loader left it out" {
				t.Fatalf("waiters got %v, %v", errA, errC)
			}
		})
	}
}

// waitLoading waits until a load of k runs.
func waitLoading(m *Map[string, int], k string) {
	for {
		s, _ := m.locate(k)
		s.mu.Lock()
		c := s.loads[k]
		s.mu.Unlock()
		if c != nil {
			return
		}
		runtime.Gosched()
	}
}

// waitJoined waits until a caller waits for the load of k.
func waitJoined(m *Map[string, int], k string) {
	for {
		s, _ := m.locate(k)
		s.mu.Lock()
		c := s.loads[k]
		joined := c != nil && c.joined
		s.mu.Unlock()
		if joined {
			return
		}
		runtime.Gosched()
	}
}

// TestGetAllOrLoadOnceEach: goroutines ask for overlapping sets of keys
// at once; every key is loaded exactly once, and every caller gets every
// key's one value.
func TestGetAllOrLoadOnceEach(t *testing.T) {
	m := New[int, int]()
	defer m.Close()
	var mu sync.Mutex
	loads := map[int]int{}
	var calls atomic.Int64
	load := func(_ context.Context, keys []int) (map[int]Loaded[int], error) {
		calls.Add(1)
		out := make(map[int]Loaded[int], len(keys))
		mu.Lock()
		for _, k := range keys {
			loads[k]++
			out[k] = Loaded[int]{k * 10, time.Hour}
		}
		mu.Unlock()
		runtime.Gosched()
		return out, nil
	}
	const keys, goroutines = 200, 8
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			var ask []int
			for k := g * 20; k < g*20+keys/2; k++ {
				ask = append(ask, k%keys)
			}
			got, err := m.GetAllOrLoad(context.Background(), ask, load)
			if err != nil || len(got) != len(ask) {
				t.Errorf("GetAllOrLoad: %d of %d values, %v", len(got), len(ask), err)
			}
			for k, v := range got {
				if v != k*10 {
					t.Errorf("key %d = %d", k, v)
				}
			}
		})
	}
	wg.Wait()
	for k, n := range loads {
		if n != 1 {
			t.Errorf("key %d loaded %d times", k, n)
		}
	}
	if st := m.Stats(); st.Loads != uint64(calls.Load()) {
		t.Fatalf("Stats: %d loads, the loader ran %d times", st.Loads, calls.Load())
	}
}

// TestGetAllOrLoadPanics: a bulk loader that panics panics its caller,
// leaves no load registered, and is counted as a failure.
func TestGetAllOrLoadPanics(t *testing.T) {
	f := newFixture(t)
	func() {
		defer func() {
			if r := recover(); r != "expiry test: boom" {
				t.Fatalf("recovered %v", r)
			}
		}()
		f.m.GetAllOrLoad(context.Background(), []string{"a", "b"}, func(context.Context, []string) (map[string]Loaded[int], error) {
			panic("expiry test: boom")
		})
	}()
	lockFree(t, f.m)
	v, err := f.m.GetOrLoad(context.Background(), "a", constLoader(1, time.Hour, nil))
	if v != 1 || err != nil {
		t.Fatalf("GetOrLoad after the panic = %v, %v", v, err)
	}
	if st := f.m.Stats(); st.Loads != 2 || st.LoadFailures != 1 {
		t.Fatalf("Stats: %d loads, %d failures", st.Loads, st.LoadFailures)
	}
}
