package expiry

import (
	"bytes"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

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

// Without a panic handler, a panicking callback is logged at level Error
// to the logger of WithLogger, with its value and a stack.
func TestCallbackPanicLogged(t *testing.T) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	m := New[string, int](WithWheel(w), WithInlineCallbacks(), WithLogger(logger),
		WithOnEvict(func(k string, _ int, _ Reason) { panic("boom " + k) }))
	defer m.Close()
	m.Set("a", 1, time.Second)
	clk.Advance(2 * time.Second)
	out := buf.String()
	for _, want := range []string{"level=ERROR", `msg="expiry: eviction callback panicked"`, `panic="boom a"`, "stack="} {
		if !strings.Contains(out, want) {
			t.Fatalf("log %q lacks %q", out, want)
		}
	}
}
