package expiry

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// reloads is a loader for WithRefresh that the test drives: each call
// announces its key on calls and returns what the test sends on replies.
type reloads struct {
	calls   chan string
	replies chan reply
	n       atomic.Int64
}

type reply struct {
	v   int
	ttl time.Duration
	err error
}

func newReloads() *reloads {
	return &reloads{calls: make(chan string, 2*MaxRefreshes), replies: make(chan reply)}
}

func (r *reloads) load(ctx context.Context, k string) (int, time.Duration, error) {
	r.n.Add(1)
	r.calls <- k
	select {
	case rep := <-r.replies:
		if rep.err != nil && strings.HasPrefix(rep.err.Error(), "panic") {
			panic(rep.err.Error())
		}
		return rep.v, rep.ttl, rep.err
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
}

// refreshFixture is a map with WithRefresh on a virtual clock, whose
// loader the test drives.
type refreshFixture struct {
	*fixture
	r    *reloads
	errs chan string
}

func newRefreshFixture(t *testing.T, after time.Duration, opts ...Option) *refreshFixture {
	rf := &refreshFixture{r: newReloads(), errs: make(chan string, 16)}
	opts = append(opts, WithRefresh(after, rf.r.load), WithRefreshErrorHandler(func(k string, err error) {
		rf.errs <- k + ": " + err.Error()
	}))
	rf.fixture = newFixture(t, opts...)
	return rf
}

// settle waits until no reload runs.
func (rf *refreshFixture) settle() { rf.m.refresh.wg.Wait() }

// running returns the number of reloads running.
func (rf *refreshFixture) running() int { return len(rf.m.refresh.slots) }

// TestRefreshAhead: before the refresh age a Get reloads nothing; after
// it, Gets return the old value at once while one reload runs, however
// many ask; its value then replaces the old one with the loader's ttl.
// A failed reload keeps the old value, is counted and reported, and the
// next Get tries again; the old value still leaves at its deadline.
func TestRefreshAhead(t *testing.T) {
	rf := newRefreshFixture(t, 30*time.Second)
	rf.set("k", 1, time.Minute)
	rf.clk.Advance(29 * time.Second)
	rf.wantGet("k", 1, true)
	if rf.running() != 0 {
		t.Fatal("a reload started before the refresh age")
	}
	rf.clk.Advance(time.Second)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if v, ok := rf.m.Get("k"); v != 1 || !ok {
					t.Errorf("Get during the reload = %d, %v", v, ok)
				}
			}
		})
	}
	wg.Wait()
	if k := <-rf.r.calls; k != "k" || rf.running() != 1 || rf.r.n.Load() != 1 {
		t.Fatalf("reload of %q, %d running, %d calls; want one of k", k, rf.running(), rf.r.n.Load())
	}
	rf.r.replies <- reply{v: 2, ttl: time.Minute}
	rf.settle()
	rf.wantGet("k", 2, true)
	rf.wantTTL("k", time.Minute)
	rf.wantEvicted(evicted{"k", 1, Replaced, 30 * time.Second})
	if st := rf.m.Stats(); st.Refreshes != 1 || st.RefreshFailures != 0 {
		t.Fatalf("Stats: %d refreshes, %d failures", st.Refreshes, st.RefreshFailures)
	}

	rf.clk.Advance(30 * time.Second) // due again, at 60s; expires at 90s
	rf.wantGet("k", 2, true)
	<-rf.r.calls
	rf.r.replies <- reply{err: errors.New("store down")}
	if e := <-rf.errs; e != "k: store down" {
		t.Fatalf("handler got %q", e)
	}
	rf.settle()
	rf.wantGet("k", 2, true) // kept, and tried again
	<-rf.r.calls
	rf.r.replies <- reply{v: 3, ttl: 0}
	if e := <-rf.errs; e != "k: expiry: non-positive ttl 0s from the loader of key k" {
		t.Fatalf("handler got %q", e)
	}
	rf.settle()
	if st := rf.m.Stats(); st.Refreshes != 1 || st.RefreshFailures != 2 {
		t.Fatalf("Stats: %d refreshes, %d failures", st.Refreshes, st.RefreshFailures)
	}
	rf.clk.Advance(30 * time.Second)
	rf.wantGet("k", 0, false)
	if rf.running() != 0 {
		t.Fatal("a Get that missed started a reload")
	}
}

// TestRefreshLosesToAWrite: a value written while a reload runs wins
// over the reload's.
func TestRefreshLosesToAWrite(t *testing.T) {
	for _, write := range []string{"Set", "Update", "Delete"} {
		t.Run(write, func(t *testing.T) {
			rf := newRefreshFixture(t, time.Second)
			rf.set("k", 1, time.Minute)
			rf.clk.Advance(time.Second)
			rf.wantGet("k", 1, true)
			<-rf.r.calls
			switch write {
			case "Set":
				rf.set("k", 5, time.Minute)
			case "Update":
				rf.m.Update("k", 5)
			case "Delete":
				rf.m.Delete("k")
			}
			rf.r.replies <- reply{v: 2, ttl: time.Minute}
			rf.settle()
			if write == "Delete" {
				rf.wantGet("k", 0, false)
			} else {
				rf.wantGet("k", 5, true)
			}
			if st := rf.m.Stats(); st.Refreshes != 0 {
				t.Fatalf("Stats: %d refreshes stored", st.Refreshes)
			}
			rf.verify()
		})
	}
}

// TestRefreshNoTTLAndSliding: the refresh age counts from the write,
// for entries without a ttl and for a sliding map whose Gets renew the
// deadline, and a Touch does not restart it.
func TestRefreshNoTTLAndSliding(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []Option
		ttl  time.Duration
	}{
		{"NoTTL", nil, NoTTL},
		{"sliding", []Option{WithSliding()}, time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			rf := newRefreshFixture(t, 10*time.Second, c.opts...)
			rf.set("k", 1, c.ttl)
			for range 9 {
				rf.clk.Advance(time.Second)
				rf.wantGet("k", 1, true)
				rf.m.Touch("k")
			}
			if rf.running() != 0 {
				t.Fatal("a reload started before the refresh age")
			}
			rf.clk.Advance(time.Second)
			rf.wantGet("k", 1, true)
			<-rf.r.calls
			rf.r.replies <- reply{v: 2, ttl: c.ttl}
			rf.settle()
			rf.wantGet("k", 2, true)
		})
	}
}

// TestRefreshBound: no more than MaxRefreshes reloads run at once; the
// keys a full map did not reload are reloaded by their next Get.
func TestRefreshBound(t *testing.T) {
	rf := newRefreshFixture(t, time.Second)
	const n = MaxRefreshes + 10
	for i := range n {
		rf.set(fmt.Sprint(i), i, time.Minute)
	}
	rf.clk.Advance(time.Second)
	for i := range n {
		rf.wantGet(fmt.Sprint(i), i, true)
	}
	if got := rf.r.n.Load(); got > MaxRefreshes || rf.running() != MaxRefreshes {
		t.Fatalf("%d loader calls, %d running; want at most %d", got, rf.running(), MaxRefreshes)
	}
	for reloaded := 0; reloaded < n; {
		for range rf.running() {
			<-rf.r.calls
			rf.r.replies <- reply{v: -1, ttl: time.Minute}
			reloaded++
		}
		rf.settle()
		for i := range n { // starts the reloads of the keys left
			rf.m.Get(fmt.Sprint(i))
		}
	}
	rf.settle()
	for i := range n {
		rf.wantGet(fmt.Sprint(i), -1, true)
	}
	if got := rf.r.n.Load(); got != n {
		t.Fatalf("%d loader calls for %d keys", got, n)
	}
}

// TestRefreshPanicAndClose: a loader that panics is a failure; Close
// cancels the context of a reload that waits for it and waits for it.
func TestRefreshPanicAndClose(t *testing.T) {
	rf := newRefreshFixture(t, time.Second)
	rf.set("k", 1, time.Minute)
	rf.clk.Advance(time.Second)
	rf.m.Get("k")
	<-rf.r.calls
	rf.r.replies <- reply{err: errors.New("panic: boom")}
	if e := <-rf.errs; e != "k: expiry: the refresh loader of key k panicked: panic: boom" {
		t.Fatalf("handler got %q", e)
	}
	rf.settle()
	rf.m.Get("k")
	<-rf.r.calls // it waits for its context now
	rf.m.Close()
	if rf.running() != 0 {
		t.Fatal("Close returned with a reload running")
	}
	if e := <-rf.errs; e != "k: context canceled" {
		t.Fatalf("handler got %q", e)
	}
}

func TestRefreshMisuse(t *testing.T) {
	load := func(context.Context, string) (int, time.Duration, error) { return 0, time.Second, nil }
	for _, c := range []struct {
		do   func()
		want string
	}{
		{func() { WithRefresh(0, load) }, "expiry: WithRefresh: non-positive refresh age 0s"},
		{func() { WithRefresh[string, int](time.Second, nil) }, "expiry: WithRefresh: nil loader"},
		{func() { WithRefreshErrorHandler[string](nil) }, "expiry: WithRefreshErrorHandler: nil handler"},
		{func() { New[int, int](WithRefresh(time.Second, load)) }, "expiry: New: WithRefresh loader is expiry.Loader[string,int], want expiry.Loader[int,int]"},
		{func() { New[string, int](WithRefreshErrorHandler(func(string, error) {})) }, "expiry: New: WithRefreshErrorHandler without WithRefresh"},
		{func() {
			New[string, int](WithRefresh(time.Second, load), WithRefreshErrorHandler(func(int, error) {}))
		}, "expiry: New: WithRefreshErrorHandler handler is func(int, error), want func(string, error)"},
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

// TestRefreshJoinedByGetOrLoad: a GetOrLoad that misses a key whose old
// value expired while its reload ran waits for that reload, which stores
// its value, rather than call a loader of its own.
func TestRefreshJoinedByGetOrLoad(t *testing.T) {
	rf := newRefreshFixture(t, 30*time.Second)
	rf.set("k", 1, time.Minute)
	rf.clk.Advance(30 * time.Second)
	rf.wantGet("k", 1, true)
	<-rf.r.calls
	rf.clk.Advance(30 * time.Second) // the old value expires
	got := make(chan int)
	go func() {
		v, err := rf.m.GetOrLoad(context.Background(), "k", func(context.Context, string) (int, time.Duration, error) {
			t.Error("GetOrLoad called its loader while a reload ran")
			return -1, time.Minute, nil
		})
		if err != nil {
			t.Error(err)
		}
		got <- v
	}()
	for !rf.joined("k") {
		runtime.Gosched()
	}
	rf.r.replies <- reply{v: 2, ttl: time.Minute}
	if v := <-got; v != 2 {
		t.Fatalf("GetOrLoad = %d, want the reload's 2", v)
	}
	rf.settle()
	rf.wantGet("k", 2, true)
	if n := rf.r.n.Load(); n != 1 {
		t.Fatalf("%d loader calls, want 1", n)
	}
}

// joined reports whether a GetOrLoad waits for the load of k.
func (rf *refreshFixture) joined(k string) bool {
	s, _ := rf.m.locate(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.loads[k]
	return c != nil && c.joined
}
