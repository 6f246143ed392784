package expiry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
)

// bubbleMap returns a map on a wheel of its own, for a synctest bubble:
// both are closed when the test ends.
func bubbleMap(t *testing.T) *Map[string, int] {
	w := timewheel.New()
	m := New[string, int](WithWheel(w))
	t.Cleanup(func() {
		m.Close()
		w.Close()
	})
	return m
}

// loadResult is what one caller of GetOrLoad got.
type loadResult struct {
	v   int
	err error
}

// loadAtOnce runs n GetOrLoad(k) at once in a synctest bubble, with a
// loader that blocks until every caller is waiting and then returns
// what ret says; it returns the loader's calls and what each caller got.
func loadAtOnce(t *testing.T, n int, ret func(call int) (int, time.Duration, error)) (calls int, got []loadResult) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		m := bubbleMap(t)
		release := make(chan struct{})
		var called atomic.Int32
		load := func(ctx context.Context, k string) (int, time.Duration, error) {
			c := called.Add(1)
			<-release
			return ret(int(c))
		}
		got = make([]loadResult, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				v, err := m.GetOrLoad(context.Background(), "k", load)
				got[i] = loadResult{v, err}
			})
		}
		synctest.Wait() // the loader and every waiter are blocked
		close(release)
		wg.Wait()
		calls = int(called.Load())
	})
	return calls, got
}

func TestGetOrLoadOncePerKey(t *testing.T) {
	calls, got := loadAtOnce(t, 64, func(int) (int, time.Duration, error) { return 7, time.Hour, nil })
	if calls != 1 {
		t.Fatalf("64 callers at once ran the loader %d times, want 1", calls)
	}
	for i, r := range got {
		if r != (loadResult{7, nil}) {
			t.Fatalf("caller %d got %v", i, r)
		}
	}
}

func TestGetOrLoadErrorShared(t *testing.T) {
	boom := errors.New("boom")
	calls, got := loadAtOnce(t, 16, func(int) (int, time.Duration, error) { return 7, time.Hour, boom })
	if calls != 1 {
		t.Fatalf("loader ran %d times, want 1", calls)
	}
	for i, r := range got {
		if r.v != 0 || !errors.Is(r.err, boom) {
			t.Fatalf("caller %d got %v, want 0 and boom", i, r)
		}
	}
}

// loaderFixture is a map on a virtual clock, as newFixture's, and a
// loader that counts its calls and returns its key's length.
func loaderFixture(t *testing.T, opts ...Option) (*fixture, *int, Loader[string, int]) {
	f := newFixture(t, opts...)
	calls := new(int)
	return f, calls, func(ctx context.Context, k string) (int, time.Duration, error) {
		*calls++
		return len(k), time.Second, nil
	}
}

func TestGetOrLoad(t *testing.T) {
	ctx := context.Background()
	f, calls, load := loaderFixture(t, WithGranularity(time.Millisecond))
	step := func(k string, want, wantCalls int) {
		t.Helper()
		v, err := f.m.GetOrLoad(ctx, k, load)
		if v != want || err != nil || *calls != wantCalls {
			t.Fatalf("at %v: GetOrLoad(%q) = %d, %v after %d loads; want %d, nil after %d",
				f.clk.Now().Sub(start), k, v, err, *calls, want, wantCalls)
		}
		f.verify()
	}
	step("abc", 3, 1)
	step("abc", 3, 1) // stored for the ttl the loader said
	f.advanceTo(999 * time.Millisecond)
	step("abc", 3, 1)
	f.advanceTo(time.Second)
	f.wantEvicted(evicted{"abc", 3, Expired, time.Second})
	step("abc", 3, 2) // gone, loaded again
	f.set("x", 42, time.Hour)
	step("x", 42, 2) // a hit does not load
	f.take()

	// An error is not stored: the next call loads again.
	fail := true
	flaky := func(ctx context.Context, k string) (int, time.Duration, error) {
		*calls++
		if fail {
			return 1, time.Hour, errors.New("down")
		}
		return 5, time.Hour, nil
	}
	if v, err := f.m.GetOrLoad(ctx, "f", flaky); v != 0 || err == nil || err.Error() != "down" {
		t.Fatalf("failing load: %v, %v", v, err)
	}
	fail = false
	if v, err := f.m.GetOrLoad(ctx, "f", flaky); v != 5 || err != nil || *calls != 4 {
		t.Fatalf("load after a failure: %v, %v after %d loads", v, err, *calls)
	}

	// A value Set while the loader runs wins.
	racing := func(ctx context.Context, k string) (int, time.Duration, error) {
		f.m.Set(k, 100, time.Hour)
		return 1, time.Hour, nil
	}
	if v, err := f.m.GetOrLoad(ctx, "r", racing); v != 100 || err != nil {
		t.Fatalf("GetOrLoad with a Set during the load: %v, %v; want the value set", v, err)
	}
	f.wantGet("r", 100, true)

	// NoTTL from a loader: the entry stays.
	forever := func(context.Context, string) (int, time.Duration, error) { return 9, NoTTL, nil }
	if v, err := f.m.GetOrLoad(ctx, "n", forever); v != 9 || err != nil {
		t.Fatalf("NoTTL load: %v, %v", v, err)
	}
	f.advanceTo(1000 * time.Hour)
	f.wantGet("n", 9, true)

	// A loader may load other keys of the map through its context.
	outer := func(ctx context.Context, k string) (int, time.Duration, error) {
		v, err := f.m.GetOrLoad(ctx, k+"/inner", load)
		return v + 1, time.Hour, err
	}
	if v, err := f.m.GetOrLoad(ctx, "o", outer); v != len("o/inner")+1 || err != nil {
		t.Fatalf("nested load: %v, %v", v, err)
	}
	f.verify()
}

// A waiter whose context is done stops waiting; the loader goes on, and
// stores its value for the others.
func TestGetOrLoadWaiterCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := bubbleMap(t)
		release := make(chan struct{})
		load := func(context.Context, string) (int, time.Duration, error) {
			<-release
			return 1, time.Hour, nil
		}
		done := make(chan loadResult)
		go func() {
			v, err := m.GetOrLoad(context.Background(), "k", load)
			done <- loadResult{v, err}
		}()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if v, err := m.GetOrLoad(ctx, "k", load); v != 0 || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("waiter past its deadline: %v, %v", v, err)
		}
		close(release)
		if r := <-done; r != (loadResult{1, nil}) {
			t.Fatalf("the loading caller got %v", r)
		}
		if v, ok := m.Get("k"); !ok || v != 1 {
			t.Fatalf("Get after the load: %v, %v", v, ok)
		}
	})
}

// A loader that panics panics its caller; the callers waiting for it get
// an error; the next call loads again.
func TestGetOrLoadPanics(t *testing.T) {
	var waiter loadResult
	var p any
	synctest.Test(t, func(t *testing.T) {
		m := bubbleMap(t)
		release := make(chan struct{})
		load := func(context.Context, string) (int, time.Duration, error) {
			<-release
			panic("loader")
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() { p = recover() }()
			m.GetOrLoad(context.Background(), "k", load)
		}()
		synctest.Wait()
		waited := make(chan struct{})
		go func() {
			defer close(waited)
			v, err := m.GetOrLoad(context.Background(), "k", load)
			waiter = loadResult{v, err}
		}()
		synctest.Wait()
		close(release)
		<-done
		<-waited
		lockFree(t, m)
		ok := func(context.Context, string) (int, time.Duration, error) { return 3, time.Hour, nil }
		if v, err := m.GetOrLoad(context.Background(), "k", ok); v != 3 || err != nil {
			t.Errorf("GetOrLoad after a panicking load: %v, %v", v, err)
		}
	})
	if fmt.Sprint(p) != "loader" {
		t.Fatalf("the loading caller recovered %v, want the loader's panic", p)
	}
	if want := "expiry: GetOrLoad: the loader of key k panicked"; waiter.v != 0 || waiter.err == nil || waiter.err.Error() != want {
		t.Fatalf("waiter got %v, want error %q", waiter, want)
	}
}
