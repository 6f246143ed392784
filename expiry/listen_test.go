package expiry

import (
	"bytes"
	"context"
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

// journal records every callback of a map, of the three kinds, in the
// order they are delivered, as "insert k v", "update k old new" and
// "<reason> k v".
type journal struct {
	mu  sync.Mutex
	log []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	j.log = append(j.log, s)
	j.mu.Unlock()
}

func (j *journal) take() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	l := j.log
	j.log = nil
	return l
}

func (j *journal) options() []Option {
	return []Option{
		WithOnInsert(func(k string, v int) { j.add(fmt.Sprintf("insert %s %d", k, v)) }),
		WithOnUpdate(func(k string, old, v int) { j.add(fmt.Sprintf("update %s %d %d", k, old, v)) }),
		WithOnEvict(func(k string, v int, why Reason) { j.add(fmt.Sprintf("%v %s %d", why, k, v)) }),
	}
}

// TestListeners: every way of gaining a key calls the insert callback,
// every way of replacing a live value the update callback (after the
// Replaced eviction), in the order of the changes.
func TestListeners(t *testing.T) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	var j journal
	m := New[string, int](append(j.options(), WithWheel(w), WithInlineCallbacks(), WithGranularity(time.Minute))...)
	defer m.Close()
	step := func(name string, do func(), want ...string) {
		t.Helper()
		do()
		if got := j.take(); !slices.Equal(got, want) {
			t.Fatalf("%s: callbacks %q, want %q", name, got, want)
		}
	}
	inc := func(v int, _ bool) (int, ComputeOp) { return v + 1, Write }
	step("Set new", func() { m.Set("a", 1, time.Second) }, "insert a 1")
	step("Set over", func() { m.Set("a", 2, time.Hour) }, "replaced a 1", "update a 1 2")
	step("Update", func() { m.Update("a", 3) }, "replaced a 2", "update a 2 3")
	step("CompareAndSwap", func() { m.CompareAndSwap("a", 3, 4) }, "replaced a 3", "update a 3 4")
	step("Compute over", func() { m.Compute("a", time.Hour, inc) }, "replaced a 4", "update a 4 5")
	step("Compute new", func() { m.Compute("b", time.Second, inc) }, "insert b 1")
	step("GetOrSet new", func() { m.GetOrSet("c", 7, time.Hour) }, "insert c 7")
	step("GetOrSet hit", func() { m.GetOrSet("c", 8, time.Hour) })
	step("SetIfAbsent", func() { m.SetIfAbsent("c", 8, time.Hour) })
	step("GetOrLoad", func() {
		m.GetOrLoad(context.Background(), "d", func(context.Context, string) (int, time.Duration, error) { return 9, time.Hour, nil })
	}, "insert d 9")
	clk.Advance(2 * time.Second) // b is past its deadline; its bucket is not due
	step("Set over expired", func() { m.Set("b", 2, time.Hour) }, "expired b 1", "insert b 2")
	step("Delete", func() { m.Delete("b") }, "deleted b 2")
	step("GetAndDelete", func() { m.GetAndDelete("c") }, "deleted c 7")
	var snap bytes.Buffer
	if err := m.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	m.Delete("d")
	j.take()
	if err := m.Restore(&snap); err != nil {
		t.Fatal(err)
	}
	got := j.take() // entries of one deadline come in no set order
	if i := slices.Index(got, "insert d 9"); i >= 0 {
		got = slices.Delete(got, i, i+1)
	} else {
		t.Fatalf("Restore: callbacks %q, without the insert of d", got)
	}
	if want := []string{"replaced a 5", "update a 5 5"}; !slices.Equal(got, want) {
		t.Fatalf("Restore: callbacks %q besides the insert of d, want %q", got, want)
	}
}

// TestListenersOneKeyManyGoroutines sets, updates, computes and deletes
// one key from many goroutines: replayed in the order delivered, the
// callbacks must describe a key that is inserted only when absent,
// updated or deleted only when present, from the value it holds; and
// end in the state the map is in.
func TestListenersOneKeyManyGoroutines(t *testing.T) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk))
	defer w.Close()
	var j journal
	m := New[string, int](append(j.options(), WithWheel(w))...)
	defer m.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range 400 {
				v := g*10_000 + i
				switch r.IntN(5) {
				case 0:
					m.Set("k", v, time.Hour)
				case 1:
					m.Update("k", v)
				case 2:
					m.Compute("k", time.Hour, func(int, bool) (int, ComputeOp) { return v, Update })
				case 3:
					m.SetIfAbsent("k", v, time.Hour)
				default:
					m.Delete("k")
				}
			}
		})
	}
	wg.Wait()
	m.Flush()
	present, val := false, 0
	for i, line := range j.take() {
		f := strings.Fields(line)
		var a, b int
		fmt.Sscan(f[2], &a)
		if len(f) > 3 {
			fmt.Sscan(f[3], &b)
		}
		ok := true
		switch f[0] {
		case "insert":
			ok = !present
			present, val = true, a
		case "replaced":
			ok = present && a == val
		case "update":
			ok = present && a == val
			val = b
		case "deleted":
			ok = present && a == val
			present = false
		default:
			ok = false
		}
		if !ok {
			t.Fatalf("callback %d, %q, with the key present %v holding %d", i, line, present, val)
		}
	}
	if v, ok := m.Get("k"); ok != present || (ok && v != val) {
		t.Fatalf("Get = %d, %v; the callbacks say %d, %v", v, ok, val, present)
	}
}

func TestListenersOfTheWrongType(t *testing.T) {
	for _, c := range []struct {
		opt  Option
		want string
	}{
		{WithOnInsert(func(int, int) {}), "expiry: New: WithOnInsert callback is func(int, int), want func(string, int)"},
		{WithOnUpdate(func(string, string, string) {}), "expiry: New: WithOnUpdate callback is func(string, string, string), want func(string, int, int)"},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.want {
					t.Errorf("panic %v, want %q", r, c.want)
				}
			}()
			New[string, int](c.opt)
		}()
	}
}
