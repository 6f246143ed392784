package expiry

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// A TTL that puts the deadline past 2262, the end of Unix nanoseconds,
// survives a snapshot round trip as a far deadline, at least as far as it
// was, with no callback: the package accepts any positive time.Duration,
// and "effectively forever" TTLs are common. A deadline before 2262 comes
// back to the nanosecond.
func TestSnapshotFarDeadline(t *testing.T) {
	for _, tc := range []struct {
		ttl   time.Duration
		exact bool // the deadline fits in Unix nanoseconds
	}{
		{200 * 365 * 24 * time.Hour, true},
		{250 * 365 * 24 * time.Hour, false},
		{math.MaxInt64, false},
	} {
		t.Run(tc.ttl.String(), func(t *testing.T) {
			var evicted []string
			src, _ := newSessions(t, start)
			if err := src.Set("forever", session{"u", 1}, tc.ttl); err != nil {
				t.Fatal(err)
			}
			before, _ := src.TTL("forever")
			var buf bytes.Buffer
			if err := src.Snapshot(&buf); err != nil {
				t.Fatal(err)
			}
			dst, _ := newSessions(t, start.Add(time.Minute), WithOnEvict(func(k string, _ session, why Reason) {
				evicted = append(evicted, k+" "+why.String())
			}))
			if err := dst.Restore(&buf); err != nil {
				t.Fatal(err)
			}
			after, ok := dst.TTL("forever")
			if !ok || len(evicted) > 0 {
				t.Fatalf("ttl %v: entry lost by the round trip (TTL before %v); callbacks %v", tc.ttl, before, evicted)
			}
			switch {
			case tc.exact && after != before-time.Minute:
				t.Fatalf("ttl %v: TTL %v before, %v a minute later after the round trip", tc.ttl, before, after)
			case after < before-time.Minute:
				t.Fatalf("ttl %v: TTL %v before, %v a minute later after the round trip", tc.ttl, before, after)
			}
			if v, ok := dst.Get("forever"); !ok || v != (session{"u", 1}) {
				t.Fatalf("ttl %v: Get after the round trip = %v, %v", tc.ttl, v, ok)
			}
			if !dst.Touch("forever") {
				t.Fatalf("ttl %v: Touch after the round trip = false", tc.ttl)
			}
			if after, _ := dst.TTL("forever"); after != tc.ttl {
				t.Fatalf("ttl %v: TTL after Touch %v: the ttl was not kept", tc.ttl, after)
			}
		})
	}
}

// All gives the entries of one bucket in the order they entered it: a
// Touch (or Set) whose new deadline stays in the entry's bucket leaves the
// entry in its place, one that moves it to another bucket puts it last
// there.
func TestAllOrderWithinBucket(t *testing.T) {
	f := newFixture(t, WithGranularity(time.Second))
	all := func() []string {
		var keys []string
		for k := range f.m.All() {
			keys = append(keys, k)
		}
		return keys
	}
	f.set("a", 1, 1500*time.Millisecond) // bucket (1s, 2s]
	f.set("b", 2, 1600*time.Millisecond) // same bucket
	f.set("c", 3, 2500*time.Millisecond) // bucket (2s, 3s]
	f.advanceTo(100 * time.Millisecond)
	if !f.m.Touch("a") { // a: 1.6s, still bucket (1s, 2s]
		t.Fatal("Touch(a) = false")
	}
	f.set("b", 4, 1800*time.Millisecond) // b: 1.9s, still bucket (1s, 2s]
	if got, want := all(), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("All gave %v after a Touch and a Set within their bucket, want %v", got, want)
	}
	f.advanceTo(time.Second)
	if !f.m.Touch("a") { // a: 2.5s, bucket (2s, 3s], after c
		t.Fatal("Touch(a) = false")
	}
	if got, want := all(), []string{"b", "c", "a"}; !slices.Equal(got, want) {
		t.Fatalf("All gave %v after a Touch into another bucket, want %v", got, want)
	}
	f.verify()
}

// Eviction callbacks that use the same map (Set, Get, Delete, Touch, All,
// Len, Snapshot) neither deadlock nor lose or duplicate evictions, inline
// or on the delivery goroutine.
func TestReentrantCallbacks(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprint("inline=", inline), func(t *testing.T) {
			clk := clock.NewVirtual(start)
			w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
			defer w.Close()
			var mu sync.Mutex
			count := map[string]int{}
			var m *Map[string, int]
			opts := []Option{WithWheel(w), WithCapacity(50), WithOnEvict(func(k string, v int, why Reason) {
				mu.Lock()
				count[k+" "+why.String()]++
				mu.Unlock()
				if why == Expired && v < 3 {
					// re-arm under another name, read and delete others
					m.Set(fmt.Sprintf("%s+", k), v+1, time.Second)
					m.Get(k)
					m.Touch("x")
					m.Delete("victim")
					for range m.All() {
					}
					_ = m.Len()
					var b bytes.Buffer
					m.Snapshot(&b)
				}
			})}
			if inline {
				opts = append(opts, WithInlineCallbacks())
			}
			m = New[string, int](opts...)
			defer m.Close()
			m.Set("victim", 0, time.Hour)
			m.Set("x", 0, time.Hour)
			for i := range 10 {
				m.Set(fmt.Sprint(i), 0, time.Duration(i+1)*100*time.Millisecond)
			}
			for range 100 {
				clk.Advance(100 * time.Millisecond)
				m.Flush() // on the delivery goroutine, let the callbacks re-arm first
			}
			m.Flush()
			if err := m.verify(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for k, n := range count {
				if n != 1 {
					t.Errorf("%s: %d callbacks", k, n)
				}
			}
			// 10 keys, each re-armed 3 times: 40 expiries, plus victim deleted once
			exp := 0
			for k, n := range count {
				if len(k) > 8 && k[len(k)-7:] == "expired" {
					exp += n
				}
			}
			if exp != 40 || count["victim deleted"] != 1 {
				t.Fatalf("%d expiries, victim %d: %v", exp, count["victim deleted"], count)
			}
		})
	}
}

// FuzzRestore feeds Restore damaged snapshots, with the checksum fixed up
// so that damage inside the gob body reaches the decoder and the map:
// Restore must not panic, must fail only with ErrCorrupt or ErrVersion,
// and must leave the map as it was when it fails. When it succeeds, a day
// later only the entries it read with a deadline beyond that day are left.
func FuzzRestore(f *testing.F) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	src := New[string, session](WithWheel(w), WithInlineCallbacks())
	for i := range 5 {
		src.Set(fmt.Sprint("k", i), session{"u", i}, time.Duration(i+1)*time.Minute)
	}
	src.Set("far", session{"u", 5}, math.MaxInt64)
	var buf bytes.Buffer
	if err := src.Snapshot(&buf); err != nil {
		f.Fatal(err)
	}
	src.Close()
	w.Close()
	f.Add(buf.Bytes(), true)
	f.Add([]byte("TWEXPIRY\x00\x00\x00\x01"), true)
	f.Fuzz(restoreBody)
}

func restoreBody(t *testing.T, in []byte, fix bool) {
	if fix && len(in) >= 16 {
		binary.BigEndian.PutUint32(in[len(in)-4:], crc32.Checksum(in[:len(in)-4], crc32.MakeTable(crc32.Castagnoli)))
	}
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	m := New[string, session](WithWheel(w), WithInlineCallbacks(), WithCapacity(3))
	defer m.Close()
	m.Set("keep", session{"x", 1}, time.Hour)
	err := m.Restore(bytes.NewReader(in))
	if err != nil {
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
			t.Fatalf("Restore: %v", err)
		}
		if v, ok := m.Get("keep"); !ok || v != (session{"x", 1}) || m.Len() != 1 {
			t.Fatalf("failed Restore changed the map")
		}
	}
	if err := m.verify(); err != nil {
		t.Fatal(err)
	}
	// the entries read whose deadline is more than a day away, by the last
	// record of each key
	later := map[string]bool{}
	if err == nil {
		recs, err := readSnapshot[string, session](bytes.NewReader(in))
		if err != nil {
			t.Fatalf("Restore read what readSnapshot does not: %v", err)
		}
		day := start.Add(24 * time.Hour).UnixNano()
		for _, rec := range recs {
			later[rec.Key] = rec.Deadline > day
		}
	}
	clk.Advance(24 * time.Hour)
	for k := range m.All() {
		if !later[k] {
			t.Fatalf("%q left after a day", k)
		}
	}
	if err := m.verify(); err != nil {
		t.Fatal(err)
	}
}

// With WithInlineCallbacks, a panic handler that panics (re-panicking so
// that the caller sees the failure, as an inline callback would without a
// handler) ends that delivery with its panic, but the map goes on: later
// evictions are delivered, the callbacks left in the batch come first in
// the next delivery, and Close does not wait for the abandoned delivery.
func TestInlinePanicHandlerPanic(t *testing.T) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	var got []string
	m := New[string, int](WithWheel(w), WithInlineCallbacks(),
		WithPanicHandler(func(v any) { panic(v) }),
		WithOnEvict(func(k string, v int, why Reason) {
			got = append(got, k+" "+why.String())
			if v < 0 {
				panic("bad " + k)
			}
		}))
	mustRepanic := func(what string, f func()) {
		t.Helper()
		defer func() {
			if r := recover(); r != "bad bad" {
				t.Errorf("%s: panic %v, want the handler's", what, r)
			}
		}()
		f()
	}
	m.Set("bad", -1, time.Hour)
	m.Set("good", 1, time.Hour)
	mustRepanic("Delete(bad)", func() { m.Delete("bad") })
	m.Delete("good")
	if want := []string{"bad deleted", "good deleted"}; !slices.Equal(got, want) {
		t.Errorf("callbacks %v, want %v: delivery is wedged after the handler's panic", got, want)
	}

	// Two callbacks in one batch, from Restore: the second waits for the
	// next delivery.
	got = nil
	m.Set("bad", -1, time.Hour)
	m.Set("good", 1, 2*time.Hour)
	m.Set("other", 1, time.Hour)
	src := New[string, int](WithWheel(w))
	src.Set("bad", 2, time.Hour)
	src.Set("good", 2, 2*time.Hour)
	var buf bytes.Buffer
	if err := src.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	src.Close()
	mustRepanic("Restore", func() { m.Restore(&buf) })
	if want := []string{"bad replaced"}; !slices.Equal(got, want) {
		t.Errorf("callbacks %v, want %v", got, want)
	}
	m.Delete("other")
	if want := []string{"bad replaced", "good replaced", "other deleted"}; !slices.Equal(got, want) {
		t.Errorf("callbacks %v, want %v: the rest of the batch is lost", got, want)
	}
	if err := m.verify(); err != nil {
		t.Fatal(err)
	}

	closed := make(chan struct{})
	go func() { m.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Second): // a deadlock watchdog, not a timer under test
		t.Fatal("Close blocked: m.delivering was left true by the panic")
	}
}

// On the delivery goroutine, a callback that ends its goroutine
// (runtime.Goexit, as t.FailNow does) hands delivery on: the callbacks
// behind it are delivered by a new delivery goroutine, and Flush returns.
func TestCallbackGoexit(t *testing.T) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	var mu sync.Mutex
	var got []string
	m := New[string, int](WithWheel(w), WithOnEvict(func(k string, v int, why Reason) {
		mu.Lock()
		got = append(got, k+" "+why.String())
		mu.Unlock()
		if v < 0 {
			runtime.Goexit()
		}
	}))
	m.Set("bad", -1, time.Second)
	m.Set("good", 1, time.Second) // same bucket: one batch
	clk.Advance(2 * time.Second)
	flushed := make(chan struct{})
	go func() { m.Flush(); close(flushed) }()
	select {
	case <-flushed:
	case <-time.After(5 * time.Second): // a deadlock watchdog, not a timer under test
		t.Fatal("Flush blocked: delivery was left marked as going")
	}
	mu.Lock()
	if want := []string{"bad expired", "good expired"}; !slices.Equal(got, want) {
		t.Errorf("callbacks %v, want %v", got, want)
	}
	mu.Unlock()
	m.Close()
}
