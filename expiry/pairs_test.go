package expiry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// Every pair of the Map's options tried together through one script of
// writes, reads and time passing, on the virtual clock. Each pair is held
// to the options' docs: nothing crashes and the structure verifies after
// every step; a Get returns only a value written for its key, never one
// past its deadline; the capacity and the weight hold; every key that
// entered leaves once, and every value replaced is told, to the
// listeners that are set; the ages add up to no more than the time that
// passed.

// pairListen records what the listeners are told.
type pairListen struct {
	mu                      sync.Mutex
	left, replaced, inserts int
	updates                 int
	lastWhy                 map[string]Reason
}

func (l *pairListen) evict(k string, _ int, why Reason) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if why == Replaced {
		l.replaced++
		return
	}
	l.left++
	l.lastWhy[k] = why
}

func (l *pairListen) insert(string, int) {
	l.mu.Lock()
	l.inserts++
	l.mu.Unlock()
}

func (l *pairListen) update(string, int, int) {
	l.mu.Lock()
	l.updates++
	l.mu.Unlock()
}

// pairMapOption is an option of the Map as the pairs test knows it.
type pairMapOption struct {
	name string
	opt  func(l *pairListen) Option
}

const (
	pairCapacity = 4
	pairWeight   = 40
)

// pairReload is the loader of WithRefresh: the value grows by 1000, and
// every third key fails.
func pairReload(_ context.Context, k string) (int, time.Duration, error) {
	if len(k) > 0 && k[len(k)-1] == '2' {
		return 0, 0, errors.New("no reload for this key")
	}
	return 1000, time.Minute, nil
}

var pairMapOptions = []pairMapOption{
	{"capacity", func(*pairListen) Option { return WithCapacity(pairCapacity) }},
	{"weight", func(*pairListen) Option {
		return WithMaxWeight(pairWeight, func(_ string, v int) uint64 { return uint64(v%100) + 1 })
	}},
	{"weight at the top", func(*pairListen) Option {
		return WithMaxWeight(math.MaxUint64, func(_ string, v int) uint64 { return uint64(v%4) << 62 })
	}},
	{"granularity", func(*pairListen) Option { return WithGranularity(time.Second) }},
	{"sliding", func(*pairListen) Option { return WithSliding() }},
	{"refresh", func(*pairListen) Option { return WithRefresh(20*time.Second, Loader[string, int](pairReload)) }},
	{"refresh errors", func(*pairListen) Option { return WithRefreshErrorHandler(func(string, error) {}) }},
	{"ages", func(*pairListen) Option { return WithAges() }},
	{"on evict", func(l *pairListen) Option { return WithOnEvict(l.evict) }},
	{"on insert", func(l *pairListen) Option { return WithOnInsert(l.insert) }},
	{"on update", func(l *pairListen) Option { return WithOnUpdate(l.update) }},
	{"inline", func(*pairListen) Option { return WithInlineCallbacks() }},
	{"panic handler", func(*pairListen) Option { return WithPanicHandler(func(any) {}) }},
	{"logger", func(*pairListen) Option { return WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))) }},
}

func TestMapOptionPairs(t *testing.T) {
	for i, a := range pairMapOptions {
		for _, b := range pairMapOptions[i:] {
			name := a.name + "+" + b.name
			if a.name == b.name {
				name = a.name
			}
			t.Run(name, func(t *testing.T) {
				l := &pairListen{lastWhy: map[string]Reason{}}
				opts := []Option{a.opt(l), b.opt(l)}
				has := func(n string) bool { return a.name == n || b.name == n }
				if has("refresh errors") && !has("refresh") {
					opts = append(opts, WithRefresh(20*time.Second, Loader[string, int](pairReload)))
				}
				pairScript(t, opts, l, has)
			})
		}
	}
}

// pairScript runs the script on a map made with opts, whose listeners
// record into l; has says which options are set.
func pairScript(t *testing.T, opts []Option, l *pairListen, has func(string) bool) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	m := New[string, int](append([]Option{WithWheel(w)}, opts...)...)
	defer m.Close()
	rng := rand.New(rand.NewPCG(36, 1))
	written := map[string]map[int]bool{} // the values written for each key
	write := func(k string, v int) {
		if written[k] == nil {
			written[k] = map[int]bool{1000: true} // the reload's
		}
		written[k][v] = true
	}
	step := func(what string) {
		t.Helper()
		if err := m.verify(); err != nil {
			t.Fatalf("after %s: %v", what, err)
		}
		st := m.Stats()
		if has("capacity") && st.Entries > pairCapacity {
			t.Fatalf("after %s: %d entries, capacity %d", what, st.Entries, pairCapacity)
		}
		if has("weight") && !has("weight at the top") && st.Weight > pairWeight {
			t.Fatalf("after %s: weight %d, bound %d", what, st.Weight, pairWeight)
		}
	}
	for i := range 400 {
		k := fmt.Sprint("k", rng.IntN(6))
		v := rng.IntN(30)
		ttl := time.Duration(1+rng.IntN(90)) * time.Second
		var what string
		switch op := rng.IntN(10); op {
		case 0, 1:
			what = fmt.Sprintf("Set(%s, %d, %v)", k, v, ttl)
			write(k, v)
			if err := m.Set(k, v, ttl); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case 2, 3:
			what = fmt.Sprintf("Get(%s)", k)
			got, ok := m.Get(k)
			left, live := m.TTL(k)
			if ok && !written[k][got] {
				t.Fatalf("%s = %d, never written for it", what, got)
			}
			if ok && live && left <= 0 {
				t.Fatalf("%s = %d with %v left", what, got, left)
			}
		case 4:
			what = fmt.Sprintf("Touch(%s)", k)
			m.Touch(k)
		case 5:
			what = fmt.Sprintf("Update(%s, %d)", k, v)
			write(k, v)
			m.Update(k, v)
		case 6:
			what = fmt.Sprintf("Compute(%s)", k)
			write(k, v)
			if _, _, err := m.Compute(k, ttl, func(old int, found bool) (int, ComputeOp) {
				return v, ComputeOp(i % 4)
			}); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case 7:
			what = fmt.Sprintf("Delete(%s)", k)
			m.Delete(k)
		case 8:
			what = fmt.Sprintf("SetTTL(%s, %v)", k, ttl)
			if _, err := m.SetTTL(k, ttl); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		default:
			d := time.Duration(rng.IntN(20)) * time.Second
			what = fmt.Sprintf("Advance(%v)", d)
			clk.Advance(d)
		}
		step(what)
	}
	// Past every deadline: every key has left.
	clk.Advance(10 * time.Minute)
	if m.refresh != nil {
		m.refresh.wg.Wait() // a reload may have stored a value meanwhile
		clk.Advance(10 * time.Minute)
	}
	m.Flush()
	step("the end")
	st := m.Stats()
	if st.Entries != 0 {
		t.Fatalf("%d entries past every deadline", st.Entries)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	left := st.Expired + st.Deleted + st.Capacity
	if has("on evict") && (uint64(l.left) != left || uint64(l.replaced) != st.Replaced) {
		t.Fatalf("told of %d leaving and %d replaced; Stats %+v", l.left, l.replaced, st)
	}
	if has("on insert") && uint64(l.inserts) != left {
		t.Fatalf("told of %d inserts; %d keys left (Stats %+v)", l.inserts, left, st)
	}
	if has("on update") && uint64(l.updates) != st.Replaced {
		t.Fatalf("told of %d updates; %d values replaced (Stats %+v)", l.updates, st.Replaced, st)
	}
	if !has("capacity") && !has("weight") && !has("weight at the top") && st.Capacity != 0 {
		t.Fatalf("%d evictions for capacity in a map without a bound", st.Capacity)
	}
	elapsed := clk.Since(start)
	for _, age := range []struct {
		n   uint64
		sum time.Duration
	}{{st.Expired, st.ExpiredAge}, {st.Deleted, st.DeletedAge}, {st.Capacity, st.CapacityAge}} {
		if age.sum < 0 || age.sum > time.Duration(age.n)*elapsed || (!has("ages") && age.sum != 0) {
			t.Fatalf("ages %+v in %v", st, elapsed)
		}
	}
}
