package expiry

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/internal/misusetest"
)

// lockFree fails t if one of m's locks is held: a panic inside the map
// must not leave it locked, or every later call would hang.
func lockFree[K comparable, V any](t *testing.T, m *Map[K, V]) {
	t.Helper()
	for i := range m.shards {
		if !m.shards[i].mu.TryLock() {
			t.Fatalf("the lock of shard %d is held after the call: every later call hangs", i)
		}
		m.shards[i].mu.Unlock()
	}
	if !m.evMu.TryLock() {
		t.Fatal("the callbacks' lock is held after the call: every later call hangs")
	}
	m.evMu.Unlock()
}

// TestZeroMap: the zero Map, declared or made by new, is an empty map as
// New with no options makes it, whichever method is called first.
func TestZeroMap(t *testing.T) {
	first := map[string]func(m *Map[string, int]) error{
		"Set":   func(m *Map[string, int]) error { return m.Set("k", 1, time.Hour) },
		"Get":   func(m *Map[string, int]) error { return wantMissing(m.Get("k")) },
		"TTL":   func(m *Map[string, int]) error { return wantMissing(m.TTL("k")) },
		"Touch": func(m *Map[string, int]) error { return wantFalse("Touch", m.Touch("k")) },
		"SetTTL": func(m *Map[string, int]) error {
			ok, err := m.SetTTL("k", time.Hour)
			return errors.Join(err, wantFalse("SetTTL", ok))
		},
		"GetOrLoad": func(m *Map[string, int]) error {
			v, err := m.GetOrLoad(context.Background(), "k", func(context.Context, string) (int, time.Duration, error) {
				return 1, time.Hour, nil
			})
			return errors.Join(err, wantInt("GetOrLoad", v, 1))
		},
		"Delete": func(m *Map[string, int]) error {
			return wantFalse("Delete", m.Delete("k"))
		},
		"Len": func(m *Map[string, int]) error { return wantInt("Len", m.Len(), 0) },
		"All": func(m *Map[string, int]) error {
			for k := range m.All() {
				return fmt.Errorf("All yields %q", k)
			}
			return nil
		},
		"Stats": func(m *Map[string, int]) error {
			if s := m.Stats(); s != (Stats{}) {
				return fmt.Errorf("Stats = %+v", s)
			}
			return nil
		},
		"Flush":    func(m *Map[string, int]) error { m.Flush(); return nil },
		"Snapshot": func(m *Map[string, int]) error { return m.Snapshot(new(bytes.Buffer)) },
		"Restore": func(m *Map[string, int]) error {
			var buf bytes.Buffer
			if err := New[string, int]().Snapshot(&buf); err != nil {
				return err
			}
			return m.Restore(&buf)
		},
	}
	var cases []misusetest.Case
	for _, how := range []string{"var", "new"} {
		for _, name := range slices.Sorted(maps.Keys(first)) {
			cases = append(cases, misusetest.Case{
				Name: fmt.Sprintf("%s Map: %s first", how, name),
				Call: func(t *testing.T) error {
					m := new(Map[string, int])
					if how == "var" {
						var zero Map[string, int]
						m = &zero
					}
					if err := first[name](m); err != nil {
						return err
					}
					return useZero(m)
				},
			})
		}
		cases = append(cases, misusetest.Case{
			Name: how + " Map: first used by 8 goroutines at once",
			Call: func(t *testing.T) error {
				m := new(Map[string, int])
				if how == "var" {
					var zero Map[string, int]
					m = &zero
				}
				defer m.Close()
				var wg sync.WaitGroup
				for i := range 8 {
					wg.Go(func() { m.Set(fmt.Sprint(i), i, time.Hour) })
				}
				wg.Wait()
				return wantInt("Len", m.Len(), 8)
			},
		})
		cases = append(cases, misusetest.Case{
			Name: how + " Map: Close first",
			Call: func(t *testing.T) error {
				var m Map[string, int]
				if err := m.Close(); err != nil {
					return err
				}
				if err := m.Set("k", 1, time.Hour); !errors.Is(err, ErrClosed) {
					return fmt.Errorf("Set after Close: %v", err)
				}
				return m.Close()
			},
			Is:  ErrClosed,
			Msg: "expiry: map closed",
		})
	}
	misusetest.Run(t, cases)
}

// useZero checks that m, a zero Map after one call, works as New's: on
// the default wheel, with the default granularity, no capacity and no
// callback; then closes it.
func useZero(m *Map[string, int]) error {
	defer m.Close()
	m.Delete("k") // what the first call may have set
	if err := m.Set("a", 1, time.Hour); err != nil {
		return err
	}
	if err := m.Set("a", 2, time.Hour); err != nil {
		return err
	}
	if v, ok := m.Get("a"); !ok || v != 2 {
		return fmt.Errorf("Get = %v, %v", v, ok)
	}
	if ttl, ok := m.TTL("a"); !ok || ttl <= 0 || ttl > time.Hour {
		return fmt.Errorf("TTL = %v, %v", ttl, ok)
	}
	if !m.Touch("a") || m.Len() != 1 || m.w != timewheel.Default() || m.gran != int64(DefaultGranularity) {
		return fmt.Errorf("Touch, Len %d, wheel, granularity %v: not New's", m.Len(), time.Duration(m.gran))
	}
	if s := m.Stats(); s.Entries != 1 || s.Buckets != 1 || s.Replaced != 1 {
		return fmt.Errorf("Stats = %+v", s)
	}
	var buf bytes.Buffer
	if err := m.Snapshot(&buf); err != nil {
		return err
	}
	var again Map[string, int]
	defer again.Close()
	if err := again.Restore(&buf); err != nil {
		return err
	}
	if v, ok := again.Get("a"); !ok || v != 2 {
		return fmt.Errorf("restored Get = %v, %v", v, ok)
	}
	if !m.Delete("a") || m.Len() != 0 {
		return fmt.Errorf("Delete, Len %d", m.Len())
	}
	m.Flush()
	return m.verify()
}

func wantMissing[T comparable](v T, ok bool) error {
	var zero T
	if ok || v != zero {
		return fmt.Errorf("found %v, %v in an empty map", v, ok)
	}
	return nil
}

func wantFalse(what string, got bool) error {
	if got {
		return fmt.Errorf("%s = true on an empty map", what)
	}
	return nil
}

func wantInt(what string, got, want int) error {
	if got != want {
		return fmt.Errorf("%s = %d, want %d", what, got, want)
	}
	return nil
}

// TestMisuseArguments: nil arguments, nil options and the extremes of
// every duration and count.
func TestMisuseArguments(t *testing.T) {
	misusetest.Run(t, []misusetest.Case{
		{
			Name: "zero Reason, and one out of range",
			Call: func(t *testing.T) error {
				if got := Reason(0).String() + " " + Reason(200).String(); got != "Reason(0) Reason(200)" {
					return fmt.Errorf("String: %q", got)
				}
				return nil
			},
		},
		{
			Name:  "Restore(nil)",
			Call:  func(t *testing.T) error { return newFixture(t).m.Restore(nil) },
			Panic: "expiry: Restore called with a nil io.Reader",
		},
		{
			Name:  "Snapshot(nil)",
			Call:  func(t *testing.T) error { return newFixture(t).m.Snapshot(nil) },
			Panic: "expiry: Snapshot called with a nil io.Writer",
		},
		// Typed nils used to die with a nil dereference in the library.
		{
			Name:  "Restore(nil *bytes.Reader)",
			Call:  func(t *testing.T) error { return newFixture(t).m.Restore((*bytes.Reader)(nil)) },
			Panic: "expiry: Restore called with a nil io.Reader (a nil *bytes.Reader)",
		},
		{
			Name: "Snapshot(nil *bytes.Buffer)",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				f.set("k", 1, time.Hour)
				return f.m.Snapshot((*bytes.Buffer)(nil))
			},
			Panic: "expiry: Snapshot called with a nil io.Writer (a nil *bytes.Buffer)",
		},
		{
			Name:  "New(nil option)",
			Call:  func(t *testing.T) error { New[string, int](WithCapacity(1), nil); return nil },
			Panic: "expiry: New: option 1 is nil",
		},
		{
			Name: "WithMaxWeight(0) is no bound",
			Call: func(t *testing.T) error {
				m := New[string, int](WithMaxWeight(10, byValue), WithMaxWeight(0, byValue))
				defer m.Close()
				if m.bounded {
					return fmt.Errorf("a map of WithMaxWeight(0) is bounded")
				}
				return nil
			},
		},
		{Name: "WithWheel(nil)", Call: func(t *testing.T) error { WithWheel(nil); return nil }, Panic: "expiry: WithWheel: nil wheel"},
		{
			Name:  "WithWheel(zero Wheel)",
			Call:  func(t *testing.T) error { New[string, int](WithWheel(new(timewheel.Wheel))); return nil },
			Panic: "timewheel: Resolution called on a zero Wheel; make one with New",
		},
		{
			Name:  "WithOnEvict(nil)",
			Call:  func(t *testing.T) error { WithOnEvict[string, int](nil); return nil },
			Panic: "expiry: WithOnEvict: nil callback",
		},
		{
			Name: "WithOnEvict of other types",
			Call: func(t *testing.T) error {
				New[string, int](WithOnEvict(func(int, int, Reason) {}))
				return nil
			},
			Panic: "expiry: New: WithOnEvict callback is func(int, int, expiry.Reason), want func(string, int, expiry.Reason)",
		},
		{
			Name:  "WithPanicHandler(nil)",
			Call:  func(t *testing.T) error { WithPanicHandler(nil); return nil },
			Panic: "expiry: WithPanicHandler: nil handler",
		},
		{
			Name:  "WithLogger(nil)",
			Call:  func(t *testing.T) error { WithLogger(nil); return nil },
			Panic: "expiry: WithLogger: nil logger",
		},
		{
			Name: "GetOrLoad(nil loader)",
			Call: func(t *testing.T) error {
				_, err := newFixture(t).m.GetOrLoad(context.Background(), "k", nil)
				return err
			},
			Panic: "expiry: GetOrLoad called with a nil loader",
		},
		{
			Name: "GetOrLoad(nil context)",
			Call: func(t *testing.T) error {
				var ctx context.Context // nil: the misuse under test
				_, err := newFixture(t).m.GetOrLoad(ctx, "k", constLoader(1, time.Hour, nil))
				return err
			},
			Panic: "expiry: GetOrLoad called with a nil context",
		},
		{Name: "loader ttl 0", Call: loadTTL(0), Is: ErrTTL, Msg: "expiry: non-positive ttl 0s from the loader of key k"},
		{Name: "loader ttl -1s", Call: loadTTL(-time.Second), Is: ErrTTL, Msg: "expiry: non-positive ttl -1s from the loader of key k"},
		{Name: "loader ttl MinInt64", Call: loadTTL(math.MinInt64), Is: ErrTTL, Msg: "expiry: non-positive ttl -2562047h47m16.854775808s from the loader of key k"},
		{
			Name: "GetOrLoad of its own key from the loader",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				var self Loader[string, int]
				self = func(ctx context.Context, k string) (int, time.Duration, error) {
					v, err := f.m.GetOrLoad(ctx, k, self)
					return v, time.Hour, err
				}
				defer lockFree(t, f.m)
				_, err := f.m.GetOrLoad(context.Background(), "k", self)
				return err
			},
			Panic: "expiry: GetOrLoad of key k called from a loader that the load of that key waits for, which would wait for itself",
		},
		// Through another context the cycle cannot be seen (there is no
		// goroutine identity): the loader waits for itself until that
		// context is done, as GetOrLoad documents.
		{
			Name: "GetOrLoad of its own key from the loader, with a context not derived from its own",
			Call: func(t *testing.T) error {
				var err error
				synctest.Test(t, func(t *testing.T) {
					f := newFixture(t)
					var self Loader[string, int]
					self = func(_ context.Context, k string) (int, time.Duration, error) {
						ctx, cancel := context.WithTimeout(context.Background(), time.Second)
						defer cancel()
						v, err := f.m.GetOrLoad(ctx, k, self)
						return v, time.Hour, err
					}
					_, err = f.m.GetOrLoad(context.Background(), "k", self)
					if f.m.Len() != 0 {
						t.Errorf("Len %d after the loader failed", f.m.Len())
					}
				})
				return err
			},
			Is:  context.DeadlineExceeded,
			Msg: "context deadline exceeded",
		},
		{
			Name: "GetOrLoad cycle a -> b -> a through the loaders' contexts",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				var next Loader[string, int]
				next = func(ctx context.Context, k string) (int, time.Duration, error) {
					other := map[string]string{"a": "b", "b": "a"}[k]
					v, err := f.m.GetOrLoad(ctx, other, next)
					return v, time.Hour, err
				}
				_, err := f.m.GetOrLoad(context.Background(), "a", next)
				return err
			},
			Panic: "expiry: GetOrLoad of key a called from a loader that the load of that key waits for, which would wait for itself",
		},
		{Name: "SetTTL ttl 0", Call: setTTLOf(0), Is: ErrTTL, Msg: "expiry: non-positive ttl 0s"},
		{Name: "SetTTL ttl -1ns", Call: setTTLOf(-1), Is: ErrTTL, Msg: "expiry: non-positive ttl -1ns"},
		{Name: "WithSliding on a NoTTL entry", Call: func(t *testing.T) error {
			f := newFixture(t, WithSliding())
			f.set("k", 1, NoTTL)
			f.advanceTo(1000 * time.Hour)
			f.wantGet("k", 1, true)
			if ttl, _ := f.m.TTL("k"); ttl != NoTTL-1000*time.Hour {
				return fmt.Errorf("TTL after a sliding read = %v", ttl)
			}
			return nil
		}},
		{Name: "Set ttl 0", Call: setTTL(0), Is: ErrTTL, Msg: "expiry: non-positive ttl 0s"},
		{Name: "Set ttl -1ns", Call: setTTL(-1), Is: ErrTTL, Msg: "expiry: non-positive ttl -1ns"},
		{Name: "Set ttl MinInt64", Call: setTTL(math.MinInt64), Is: ErrTTL, Msg: "expiry: non-positive ttl -2562047h47m16.854775808s"},
		{
			Name: "Set ttl MaxInt64",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				f.set("k", 1, math.MaxInt64)
				f.advanceTo(1000 * time.Hour)
				f.wantGet("k", 1, true)
				if !f.m.Touch("k") {
					return errors.New("Touch = false")
				}
				// saturated at the end of time, as DESIGN says
				if ttl, ok := f.m.TTL("k"); !ok || ttl != math.MaxInt64-1000*time.Hour {
					return fmt.Errorf("TTL = %v, %v", ttl, ok)
				}
				f.wantEvicted()
				return nil
			},
		},
		{
			Name: "Set ttl 1ns, below the tick",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				f.set("k", 1, 1)
				f.wantGet("k", 1, true)
				f.advanceTo(1)
				f.wantGet("k", 0, false)
				f.wantEvicted()
				f.advanceTo(DefaultGranularity)
				f.wantEvicted(evicted{"k", 1, Expired, DefaultGranularity})
				return nil
			},
		},
		{
			Name:  "WithCapacity(-1)",
			Call:  func(t *testing.T) error { WithCapacity(-1); return nil },
			Panic: "expiry: WithCapacity: negative capacity -1 (0 means no bound)",
		},
		{
			Name:  "WithCapacity(MinInt)",
			Call:  func(t *testing.T) error { WithCapacity(math.MinInt); return nil },
			Panic: "expiry: WithCapacity: negative capacity -9223372036854775808 (0 means no bound)",
		},
		{Name: "WithCapacity(0) is no bound", Call: capacity(0, 5, 0)},
		{Name: "WithCapacity(1)", Call: capacity(1, 3, 2)},
		{Name: "WithCapacity(MaxInt)", Call: capacity(math.MaxInt, 5, 0)},
		{
			Name:  "WithGranularity(0)",
			Call:  func(t *testing.T) error { WithGranularity(0); return nil },
			Panic: "expiry: WithGranularity: non-positive granularity 0s",
		},
		{
			Name:  "WithGranularity(MinInt64)",
			Call:  func(t *testing.T) error { WithGranularity(math.MinInt64); return nil },
			Panic: "expiry: WithGranularity: non-positive granularity -2562047h47m16.854775808s",
		},
		{
			Name: "WithGranularity(1ns) is the wheel's tick",
			Call: func(t *testing.T) error {
				f := newFixture(t, WithGranularity(1))
				f.set("k", 1, 1)
				f.advanceTo(time.Millisecond)
				f.wantEvicted(evicted{"k", 1, Expired, time.Millisecond})
				return nil
			},
		},
		{
			Name: "WithGranularity(MaxInt64)",
			Call: func(t *testing.T) error {
				f := newFixture(t, WithGranularity(math.MaxInt64))
				f.set("k", 1, time.Second)
				f.set("j", 1, time.Hour)
				f.advanceTo(2 * time.Second)
				f.wantGet("k", 0, false) // readers check the deadline itself
				f.wantGet("j", 1, true)
				f.wantEvicted() // one bucket per shard, at the end of time, as asked
				return wantInt("Buckets", f.m.Stats().Buckets, f.shardsOf("k", "j"))
			},
		},
	})
}

// constLoader returns a loader that returns v, ttl and err.
func constLoader(v int, ttl time.Duration, err error) Loader[string, int] {
	return func(context.Context, string) (int, time.Duration, error) { return v, ttl, err }
}

// loadTTL returns a misuse run of a loader returning ttl: nothing may be
// stored, and the error must come back.
func loadTTL(ttl time.Duration) func(t *testing.T) error {
	return func(t *testing.T) error {
		f := newFixture(t)
		v, err := f.m.GetOrLoad(context.Background(), "k", constLoader(1, ttl, nil))
		if v != 0 || f.m.Len() != 0 {
			t.Errorf("a loader's ttl %v gave %d and stored %d entries", ttl, v, f.m.Len())
		}
		return err
	}
}

// setTTLOf returns a misuse run of SetTTL(k, ttl) on a live k: its ttl
// and deadline must stay as they were.
func setTTLOf(ttl time.Duration) func(t *testing.T) error {
	return func(t *testing.T) error {
		f := newFixture(t)
		f.set("k", 1, time.Hour)
		ok, err := f.m.SetTTL("k", ttl)
		if left, _ := f.m.TTL("k"); ok || left != time.Hour {
			t.Errorf("SetTTL(k, %v) = %v and left %v", ttl, ok, left)
		}
		return err
	}
}

func setTTL(ttl time.Duration) func(t *testing.T) error {
	return func(t *testing.T) error {
		f := newFixture(t)
		err := f.m.Set("k", 1, ttl)
		if f.m.Len() != 0 {
			t.Errorf("Set with ttl %v stored an entry", ttl)
		}
		return err
	}
}

// capacity sets n keys in a map of capacity c and wants evicted of them
// evicted for room.
func capacity(c, n, evicted int) func(t *testing.T) error {
	return func(t *testing.T) error {
		f := newFixture(t, WithCapacity(c))
		for i := range n {
			f.set(fmt.Sprint(i), i, time.Duration(i+1)*time.Hour)
		}
		if got := len(f.take()); got != evicted || f.m.Len() != n-evicted {
			return fmt.Errorf("capacity %d, %d keys: %d evicted, Len %d; want %d evicted", c, n, got, f.m.Len(), evicted)
		}
		return nil
	}
}

// TestMisuseAfterClose: a second Close, every method after Close, and a
// map whose wheel was closed under it.
func TestMisuseAfterClose(t *testing.T) {
	closed := func(t *testing.T) *fixture {
		f := newFixture(t)
		f.set("k", 1, time.Hour)
		if err := f.m.Close(); err != nil {
			t.Fatal(err)
		}
		return f
	}
	var snap bytes.Buffer
	if err := New[string, int](WithWheel(timewheel.New(timewheel.WithClock(clock.NewVirtual(start))))).Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	misusetest.Run(t, []misusetest.Case{
		{Name: "Close twice", Call: func(t *testing.T) error { return closed(t).m.Close() }, Is: ErrClosed, Msg: "expiry: map closed"},
		{Name: "Set after Close", Call: func(t *testing.T) error { return closed(t).m.Set("j", 1, time.Hour) }, Is: ErrClosed, Msg: "expiry: map closed"},
		{
			Name: "GetOrLoad after Close",
			Call: func(t *testing.T) error {
				_, err := closed(t).m.GetOrLoad(context.Background(), "j", constLoader(1, time.Hour, nil))
				return err
			},
			Is:  ErrClosed,
			Msg: "expiry: map closed",
		},
		{
			Name: "SetTTL after Close",
			Call: func(t *testing.T) error {
				ok, err := closed(t).m.SetTTL("k", time.Hour)
				return errors.Join(err, wantFalse("SetTTL", ok))
			},
		},
		{
			Name: "Restore after Close",
			Call: func(t *testing.T) error {
				return closed(t).m.Restore(bytes.NewReader(snap.Bytes()))
			},
			Is:  ErrClosed,
			Msg: "expiry: map closed",
		},
		{
			Name: "Snapshot after Close",
			Call: func(t *testing.T) error { return closed(t).m.Snapshot(new(bytes.Buffer)) },
			Is:   ErrClosed,
			Msg:  "expiry: map closed",
		},
		{
			Name: "readers after Close",
			Call: func(t *testing.T) error {
				f := closed(t)
				f.wantGet("k", 0, false)
				if _, ok := f.m.TTL("k"); ok || f.m.Touch("k") || f.m.Delete("k") || f.m.Len() != 0 {
					return errors.New("a closed map still holds k")
				}
				for k := range f.m.All() {
					return fmt.Errorf("All yields %q after Close", k)
				}
				f.m.Flush()
				f.wantEvicted()
				return nil
			},
		},
		{
			Name: "Set on a closed wheel",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				f.w.Close()
				err := f.m.Set("k", 1, time.Hour)
				if !errors.Is(err, timewheel.ErrClosed) || f.m.Len() != 0 {
					t.Errorf("Set on a closed wheel: %v, Len %d; want timewheel.ErrClosed too, and nothing stored", err, f.m.Len())
				}
				return err
			},
			Is:  ErrClosed,
			Msg: "expiry: map closed: timewheel: wheel closed",
		},
		// SetTTL and Touch used to report success, and the entry then
		// stayed for good with no callback.
		{
			Name: "SetTTL on a closed wheel",
			Call: func(t *testing.T) error {
				var err error
				closedWithEntry(t, "SetTTL", func(m *Map[string, int]) {
					var ok bool
					ok, err = m.SetTTL("k", time.Second)
					if ok || !errors.Is(err, timewheel.ErrClosed) {
						t.Errorf("SetTTL on a closed wheel: %v, %v; want false and timewheel.ErrClosed too", ok, err)
					}
				})
				return err
			},
			Is:  ErrClosed,
			Msg: "expiry: map closed: timewheel: wheel closed",
		},
		{
			Name: "Touch on a closed wheel",
			Call: func(t *testing.T) error {
				closedWithEntry(t, "Touch", func(m *Map[string, int]) {
					if m.Touch("k") {
						t.Error("Touch on a closed wheel returned true")
					}
				})
				return nil
			},
		},
		{
			Name: "Restore on a closed wheel",
			Call: func(t *testing.T) error {
				f := newFixture(t)
				f.w.Close()
				err := f.m.Restore(bytes.NewReader(snap.Bytes()))
				if !errors.Is(err, timewheel.ErrClosed) {
					t.Errorf("Restore on a closed wheel: %v; want timewheel.ErrClosed too", err)
				}
				return err
			},
			Is:  ErrClosed,
			Msg: "expiry: map closed: timewheel: wheel closed",
		},
	})
}

// TestMisuseNilMap: the methods off the hot paths panic on a nil *Map,
// naming themselves. They used to die with a nil dereference.
func TestMisuseNilMap(t *testing.T) {
	var m *Map[string, int]
	misusetest.Run(t, []misusetest.Case{
		{Name: "Len", Call: func(t *testing.T) error { m.Len(); return nil }, Panic: "expiry: Len called on a nil *Map"},
		{Name: "All", Call: func(t *testing.T) error { m.All(); return nil }, Panic: "expiry: All called on a nil *Map"},
		{Name: "Flush", Call: func(t *testing.T) error { m.Flush(); return nil }, Panic: "expiry: Flush called on a nil *Map"},
		{Name: "Close", Call: func(t *testing.T) error { return m.Close() }, Panic: "expiry: Close called on a nil *Map"},
		{Name: "Stats", Call: func(t *testing.T) error { m.Stats(); return nil }, Panic: "expiry: Stats called on a nil *Map"},
		{Name: "Snapshot", Call: func(t *testing.T) error { return m.Snapshot(new(bytes.Buffer)) }, Panic: "expiry: Snapshot called on a nil *Map"},
		{Name: "Restore", Call: func(t *testing.T) error { return m.Restore(new(bytes.Buffer)) }, Panic: "expiry: Restore called on a nil *Map"},
	})
}

// fromCallback runs f from the eviction callback of the first of two
// entries that expire together, on a wheel with the real clock in a
// synctest bubble, inline or on the delivery goroutine, and returns f's
// error. A panic of f reaches the panic handler and is raised again here,
// after the bubble, so that the table sees it. It fails t if f does not
// return, or if the callback of the second entry, queued before f ran,
// is lost.
func fromCallback(t *testing.T, inline bool, f func(m *Map[string, int]) error) error {
	t.Helper()
	var (
		err      error
		returned bool
		panicked []any
		got      []string
	)
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New()
		defer w.Close()
		var m *Map[string, int]
		opts := []Option{
			WithWheel(w),
			WithPanicHandler(func(v any) { panicked = append(panicked, v) }),
			WithOnEvict(func(k string, v int, why Reason) {
				got = append(got, k+" "+why.String())
				if k == "a" {
					err = f(m)
					returned = true
				}
			}),
		}
		if inline {
			opts = append(opts, WithInlineCallbacks())
		}
		m = New[string, int](opts...)
		defer m.Close()
		b := keyBeside(m, "a", "b") // in a's bucket, so queued with it
		m.Set("a", 1, time.Second)
		m.Set(b, 2, time.Second)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if !returned && len(panicked) == 0 {
			t.Fatal("the call from the eviction callback never returned")
		}
		if want := []string{"a expired", b + " expired"}; len(got) < 2 || !slices.Equal(got[:2], want) {
			t.Errorf("callbacks %v, want %v first", got, want)
		}
	})
	if len(panicked) > 0 {
		panic(panicked[0])
	}
	return err
}

// keyBeside returns the first of prefix, prefix1, prefix2, … that falls
// in the shard of k, and so in the bucket of k for the same deadline.
func keyBeside(m *Map[string, int], k, prefix string) string {
	m.init()
	for i := 0; ; i++ {
		c := prefix
		if i > 0 {
			c = fmt.Sprint(prefix, i)
		}
		if m.shardFor(c) == m.shardFor(k) {
			return c
		}
	}
}

// TestMisuseReentrant: calls from inside an eviction callback, of the
// same map or of another.
func TestMisuseReentrant(t *testing.T) {
	var cases []misusetest.Case
	for _, inline := range []bool{false, true} {
		mode := fmt.Sprint("inline=", inline)
		cases = append(cases,
			misusetest.Case{
				Name: "Close from its callback, " + mode,
				Call: func(t *testing.T) error {
					return fromCallback(t, inline, func(m *Map[string, int]) error {
						err := m.Close()
						if err2 := m.Set("c", 1, time.Hour); !errors.Is(err2, ErrClosed) {
							t.Errorf("Set after a Close from a callback: %v", err2)
						}
						return err
					})
				},
			},
			misusetest.Case{
				Name: "Close twice from its callback, " + mode,
				Call: func(t *testing.T) error {
					return fromCallback(t, inline, func(m *Map[string, int]) error {
						m.Close()
						return m.Close()
					})
				},
				Is:  ErrClosed,
				Msg: "expiry: map closed",
			},
			misusetest.Case{
				Name: "Flush from its callback, " + mode,
				Call: func(t *testing.T) error {
					return fromCallback(t, inline, func(m *Map[string, int]) error { m.Flush(); return nil })
				},
				Panic: "expiry: Flush called from an eviction callback, where it could wait for itself; call it outside the callbacks",
			},
			misusetest.Case{
				Name: "Close of another map from a callback, " + mode,
				Call: func(t *testing.T) error {
					other := New[string, int]()
					other.Set("x", 1, time.Hour)
					err := fromCallback(t, inline, func(*Map[string, int]) error { return other.Close() })
					if other.Len() != 0 {
						t.Error("the other map was not closed")
					}
					return err
				},
			},
			misusetest.Case{
				Name: "Flush of another map from a callback, " + mode,
				Call: func(t *testing.T) error {
					other := New[string, int]()
					defer other.Close()
					return fromCallback(t, inline, func(*Map[string, int]) error { other.Flush(); return nil })
				},
				Panic: "expiry: Flush called from an eviction callback, where it could wait for itself; call it outside the callbacks",
			},
			misusetest.Case{
				Name: "Set, Delete, Snapshot and Restore from its callback, " + mode,
				Call: func(t *testing.T) error {
					return fromCallback(t, inline, func(m *Map[string, int]) error {
						var buf bytes.Buffer
						return errors.Join(m.Set("c", 1, time.Hour), m.Snapshot(&buf), m.Restore(&buf),
							wantFalse("Delete", m.Delete("nope")))
					})
				},
			},
			misusetest.Case{
				Name: "GetOrLoad and SetTTL from its callback, " + mode,
				Call: func(t *testing.T) error {
					return fromCallback(t, inline, func(m *Map[string, int]) error {
						v, err := m.GetOrLoad(context.Background(), "c", constLoader(5, time.Hour, nil))
						ok, err2 := m.SetTTL("c", time.Minute)
						return errors.Join(err, err2, wantInt("GetOrLoad", v, 5), wantInt("SetTTL ok", map[bool]int{true: 1}[ok], 1))
					})
				},
			},
		)
	}
	cases = append(cases, misusetest.Case{
		Name: "Flush from the panic handler, inline=true",
		Call: func(t *testing.T) error {
			var p any
			synctest.Test(t, func(t *testing.T) {
				w := timewheel.New()
				defer w.Close()
				var m *Map[string, int]
				m = New[string, int](WithWheel(w), WithInlineCallbacks(),
					WithOnEvict(func(_ string, v int, _ Reason) {
						if v < 0 {
							panic("callback")
						}
					}),
					WithPanicHandler(func(any) { m.Flush() }))
				defer m.Close()
				m.Set("a", -1, time.Hour)
				func() {
					defer func() { p = recover() }()
					m.Delete("a")
				}()
				lockFree(t, m)
				m.Set("b", 1, time.Hour)
				if !m.Delete("b") || m.Stats().Deleted != 2 {
					t.Error("the map does not work after the panic")
				}
			})
			if p != nil {
				panic(p)
			}
			return nil
		},
		Panic: "expiry: Flush called from an eviction callback, where it could wait for itself; call it outside the callbacks",
	})
	cases = append(cases, misusetest.Case{
		Name: "Close from the panic handler",
		Call: func(t *testing.T) error {
			var m *Map[string, int]
			var err error
			synctest.Test(t, func(t *testing.T) {
				w := timewheel.New()
				defer w.Close()
				m = New[string, int](WithWheel(w),
					WithOnEvict(func(string, int, Reason) { panic("callback") }),
					WithPanicHandler(func(any) { err = m.Close() }))
				defer m.Close()
				m.Set("a", 1, time.Second)
				time.Sleep(2 * time.Second)
				synctest.Wait()
				if m.Set("b", 1, time.Second) != ErrClosed {
					t.Error("the map is open after a Close from the panic handler")
				}
			})
			return err
		},
	})
	misusetest.Run(t, cases)
}

// Types a snapshot cannot hold, and some it can.
type (
	onlyUnexported struct{ x int }
	someUnexported struct {
		A int
		b int
	}
	withFunc struct {
		Name string
		F    func()
	}
	withChan struct{ C chan int }
	node     struct {
		N    int
		Next *node
	}
	unregistered struct{ A int }
	fine         struct {
		A  int
		_  int       // blank: holds nothing by convention
		T  time.Time // encodes itself
		P  *int
		S  []string
		M  map[string]float64
		I  any
		in struct{} // no data
	}
)

// snapshotOf returns the error of a Snapshot of a map holding vs, in this
// order, under keys "0", "1"..., and of a Restore of it into a map of the
// same types.
func snapshotOf[K comparable, V any](t *testing.T, keys []K, vs ...V) error {
	t.Helper()
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk))
	defer w.Close()
	m := New[K, V](WithWheel(w))
	defer m.Close()
	for i, v := range vs {
		if err := m.Set(keys[i], v, time.Duration(i+1)*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := m.Snapshot(&buf); err != nil {
		return err
	}
	dst := New[K, V](WithWheel(w))
	defer dst.Close()
	if err := dst.Restore(&buf); err != nil {
		return err
	}
	if dst.Len() != len(vs) {
		t.Errorf("%d entries restored of %d", dst.Len(), len(vs))
	}
	return nil
}

func strKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint(i)
	}
	return keys
}

// TestMisuseSnapshot: values and keys a snapshot cannot hold are an error
// naming the entry and the type, never a snapshot that restores zero
// values; one with a cycle is such an error, not a stack overflow.
func TestMisuseSnapshot(t *testing.T) {
	cyclic := &node{N: 1}
	cyclic.Next = &node{N: 2, Next: cyclic}
	one := 1
	misusetest.Run(t, []misusetest.Case{
		{
			Name: "func value",
			Call: func(t *testing.T) error { return snapshotOf(t, strKeys(1), func() {}) },
			Is:   ErrUnencodable,
			Msg:  "expiry: snapshot cannot hold entry 0 of 1: value of type func(): gob cannot encode a func",
		},
		{
			Name: "func values, none set",
			Call: func(t *testing.T) error { return snapshotOf[string, func()](t, nil) },
			Is:   ErrUnencodable,
			Msg:  "expiry: snapshot cannot hold value of type func(): gob cannot encode a func",
		},
		{
			Name: "chan value",
			Call: func(t *testing.T) error { return snapshotOf(t, strKeys(2), make(chan int), nil) },
			Is:   ErrUnencodable,
			Msg:  "expiry: snapshot cannot hold entry 0 of 2: value of type chan int: gob cannot encode a chan",
		},
		{
			Name: "chan key",
			Call: func(t *testing.T) error {
				return snapshotOf(t, []chan int{make(chan int), make(chan int)}, 1, 2)
			},
			Is:  ErrUnencodable,
			Msg: "expiry: snapshot cannot hold entry 0 of 2: key of type chan int: gob cannot encode a chan",
		},
		{
			Name: "pointer key",
			Call: func(t *testing.T) error { return snapshotOf(t, []*int{new(int)}, 1) },
			Is:   ErrUnencodable,
			Msg:  "expiry: snapshot cannot hold entry 0 of 1: key of type *int: a key's pointer is compared by address, which a snapshot cannot keep",
		},
		{
			Name: "pointer in an interface key",
			Call: func(t *testing.T) error { return snapshotOf[any, int](t, []any{"a", new(int)}, 1, 2) },
			Is:   ErrUnencodable,
			Msg:  "expiry: snapshot cannot hold entry 1 of 2: key of type interface {} holding *int: a key's pointer is compared by address, which a snapshot cannot keep",
		},
		{
			Name: "struct of unexported fields only",
			Call: func(t *testing.T) error { return snapshotOf(t, strKeys(1), onlyUnexported{1}) },
			Is:   ErrUnencodable,
			Msg:  "expiry: snapshot cannot hold entry 0 of 1: value of type expiry.onlyUnexported: field x is unexported, and gob drops it",
		},
		{
			Name: "struct with an unexported field",
			Call: func(t *testing.T) error { return snapshotOf(t, strKeys(1), someUnexported{1, 2}) },
			Is:   ErrUnencodable,
			Msg:  "expiry: snapshot cannot hold entry 0 of 1: value of type expiry.someUnexported: field b is unexported, and gob drops it",
		},
		{
			Name: "struct with a func field",
			Call: func(t *testing.T) error { return snapshotOf(t, strKeys(1), withFunc{"n", nil}) },
			Is:   ErrUnencodable,
			Msg:  "expiry: snapshot cannot hold entry 0 of 1: value of type expiry.withFunc: field F of type func(): gob cannot encode a func",
		},
		{
			Name: "slice of structs with a chan field",
			Call: func(t *testing.T) error { return snapshotOf(t, strKeys(1), []withChan{{}}) },
			Is:   ErrUnencodable,
			Msg:  "expiry: snapshot cannot hold entry 0 of 1: value of type []expiry.withChan: element of type expiry.withChan: field C of type chan int: gob cannot encode a chan",
		},
		{
			Name: "func in an interface, second of three",
			Call: func(t *testing.T) error { return snapshotOf[string, any](t, strKeys(3), 1, func() {}, 2) },
			Is:   ErrUnencodable,
			Msg:  "expiry: snapshot cannot hold entry 1 of 3: value of type interface {} holding func(): gob cannot encode a func",
		},
		{
			Name: "unregistered type in an interface",
			Call: func(t *testing.T) error {
				return snapshotOf[string, any](t, strKeys(3), 1, 2, unregistered{3})
			},
			Is:  ErrUnencodable,
			Msg: "expiry: snapshot cannot hold entry 2 of 3: gob: type not registered for interface: expiry.unregistered",
		},
		{
			Name: "cycle",
			Call: func(t *testing.T) error { return snapshotOf(t, strKeys(2), &node{N: 0}, cyclic) },
			Is:   ErrUnencodable,
			Msg:  "expiry: snapshot cannot hold entry 1 of 2: value of type *expiry.node: field Next of type *expiry.node: field Next of type *expiry.node: a cycle, which gob would follow for ever",
		},
		{
			Name: "types a snapshot holds",
			Call: func(t *testing.T) error {
				return snapshotOf(t, strKeys(2), fine{A: 1, T: start, P: &one, S: []string{"s"}, M: map[string]float64{"f": 1}, I: 2},
					fine{I: []int{1}})
			},
		},
		{
			Name: "shared pointers are no cycle",
			Call: func(t *testing.T) error {
				shared := &node{N: 1}
				return snapshotOf(t, strKeys(1), []*node{shared, shared})
			},
		},
		{
			Name: "Restore into a map of funcs",
			Call: func(t *testing.T) error {
				var buf bytes.Buffer
				if err := newFixture(t).m.Snapshot(&buf); err != nil {
					return err
				}
				return New[string, func()](WithWheel(newFixture(t).w)).Restore(&buf)
			},
			Is:  ErrUnencodable,
			Msg: "expiry: snapshot cannot hold value of type func(): gob cannot encode a func",
		},
	})
}

// TestMisuseKeys: keys a Go map cannot handle. A Map whose K is an
// interface type takes keys Go's maps cannot hash (slices, maps, funcs):
// each method refuses one with a panic naming the type, and leaves the
// map unlocked and working, as sync.Map does. A NaN key, which a Go map
// stores but never finds, is refused by Set and found by no lookup.
// Restore of a snapshot holding either is corrupt.
func TestMisuseKeys(t *testing.T) {
	var once sync.Once
	calls := map[string]func(m *Map[any, int]) error{
		"Set":    func(m *Map[any, int]) error { return m.Set([]int{1}, 1, time.Hour) },
		"Get":    func(m *Map[any, int]) error { m.Get(map[int]int{}); return nil },
		"TTL":    func(m *Map[any, int]) error { m.TTL([]int{1}); return nil },
		"Touch":  func(m *Map[any, int]) error { m.Touch(func() {}); return nil },
		"Delete": func(m *Map[any, int]) error { m.Delete([]int{1}); return nil },
	}
	types := map[string]string{"Set": "[]int", "Get": "map[int]int", "TTL": "[]int", "Touch": "func()", "Delete": "[]int"}
	var cases []misusetest.Case
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		cases = append(cases, misusetest.Case{
			Name: name,
			Call: func(t *testing.T) error {
				w := timewheel.New(timewheel.WithClock(clock.NewVirtual(start)))
				defer w.Close()
				m := New[any, int](WithWheel(w))
				defer m.Close()
				m.Set("ok", 1, time.Hour)
				defer func() {
					lockFree(t, m)
					if v, ok := m.Get("ok"); !ok || v != 1 {
						t.Errorf("Get after the panic = %v, %v", v, ok)
					}
				}()
				return calls[name](m)
			},
			Panic: fmt.Sprintf("expiry: %s called with a key of unhashable type %s", name, types[name]),
		})
	}
	type point struct{ X, Y float64 }
	cases = append(cases,
		misusetest.Case{
			Name:  "Set float64 NaN",
			Call:  func(t *testing.T) error { return setNaN(t, math.NaN()) },
			Panic: "expiry: Set called with a key holding NaN (NaN), which no lookup finds",
		},
		misusetest.Case{
			Name:  "Set struct holding NaN",
			Call:  func(t *testing.T) error { return setNaN(t, point{1, math.NaN()}) },
			Panic: "expiry: Set called with a key holding NaN ({1 NaN}), which no lookup finds",
		},
		misusetest.Case{
			Name:  "Set any holding NaN",
			Call:  func(t *testing.T) error { return setNaN[any](t, math.NaN()) },
			Panic: "expiry: Set called with a key holding NaN (NaN), which no lookup finds",
		},
	)
	cases = append(cases, misusetest.Case{
		Name: "Get float64 NaN finds nothing, as a Go map",
		Call: func(t *testing.T) error {
			w := timewheel.New(timewheel.WithClock(clock.NewVirtual(start)))
			defer w.Close()
			m := New[float64, int](WithWheel(w))
			defer m.Close()
			if _, ok := m.Get(math.NaN()); ok || m.Delete(math.NaN()) || m.Touch(math.NaN()) {
				return errors.New("a NaN key found an entry")
			}
			return nil
		},
	})
	cases = append(cases,
		misusetest.Case{
			Name: "Restore a NaN key",
			Call: func(t *testing.T) error { return restoreKeys(t, math.NaN()) },
			Is:   ErrCorrupt,
			Msg:  "expiry: corrupt snapshot: entry 0 of 1: key holding NaN (NaN), which no lookup finds",
		},
		misusetest.Case{
			Name: "Restore an unhashable key",
			Call: func(t *testing.T) error {
				once.Do(func() { gob.Register([]int(nil)) })
				return restoreKeys[any](t, "ok", []int{1})
			},
			Is:  ErrCorrupt,
			Msg: "expiry: corrupt snapshot: entry 1 of 2: key of unhashable type []int",
		},
	)
	misusetest.Run(t, cases)
}

// setNaN sets k, a key that is or holds a NaN, in a new map, and fails t
// if the map stored it (an entry no lookup, Delete or expiry could
// remove) or was left locked.
func setNaN[K comparable](t *testing.T, k K) error {
	w := timewheel.New(timewheel.WithClock(clock.NewVirtual(start)))
	defer w.Close()
	m := New[K, int](WithWheel(w))
	defer m.Close()
	defer func() {
		lockFree(t, m)
		if m.Len() != 0 {
			t.Errorf("Len %d: a NaN key was stored, and could never leave", m.Len())
		}
	}()
	return m.Set(k, 1, time.Hour)
}

// restoreKeys restores a snapshot made by hand, since no Map would write
// it, of entries under keys, and fails t if the Restore changed the map
// or left it locked.
func restoreKeys[K comparable](t *testing.T, keys ...K) error {
	recs := make([]snapEntry[K, int], len(keys))
	for i, k := range keys {
		recs[i] = snapEntry[K, int]{Key: k, Value: i, Deadline: start.Add(time.Hour).UnixNano(), TTL: int64(time.Hour)}
	}
	var buf bytes.Buffer
	err := format.Write(&buf, func(enc *gob.Encoder) error {
		if err := enc.Encode(snapHeader{Saved: start.UnixNano(), Count: len(recs)}); err != nil {
			return err
		}
		return enc.Encode(recs)
	})
	if err != nil {
		t.Fatal(err)
	}
	w := timewheel.New(timewheel.WithClock(clock.NewVirtual(start)))
	defer w.Close()
	m := New[K, int](WithWheel(w))
	defer m.Close()
	err = m.Restore(&buf)
	lockFree(t, m)
	if m.Len() != 0 {
		t.Errorf("a failed Restore set %d entries", m.Len())
	}
	return err
}

// closedWithEntry stores "k" for an hour, closes the map's wheel, calls
// renew (a SetTTL or Touch that must fail), and checks that the entry is
// as it was: live a minute later, with 59 minutes left.
func closedWithEntry(t *testing.T, op string, renew func(*Map[string, int])) {
	t.Helper()
	f := newFixture(t)
	f.set("k", 1, time.Hour)
	f.w.Close()
	renew(f.m)
	f.clk.Advance(time.Minute)
	f.wantGet("k", 1, true)
	if ttl, _ := f.m.TTL("k"); ttl != 59*time.Minute || f.m.Len() != 1 {
		t.Errorf("after %s on a closed wheel: TTL %v, Len %d; want 59m0s, 1", op, ttl, f.m.Len())
	}
}
