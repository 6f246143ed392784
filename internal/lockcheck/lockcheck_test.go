package lockcheck_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/timewheel/timewheel/internal/lockcheck"
)

// panics returns the value f panics with, or nil.
func panics(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// TestChecks: a lock held passes, read-held passes Held but not
// WriteHeld, and a lock nobody holds panics naming the function; without
// the race detector nothing is checked.
func TestChecks(t *testing.T) {
	var mu sync.Mutex
	var rw sync.RWMutex
	free := panics(func() { lockcheck.Held(&mu, "fooLocked") })
	freeRW := panics(func() { lockcheck.WriteHeld(&rw, "barLocked") })
	if !lockcheck.Enabled {
		if free != nil || freeRW != nil {
			t.Fatalf("checks ran without the race detector: %v, %v", free, freeRW)
		}
		t.Skip("the checks run under the race detector")
	}
	if s, _ := free.(string); !strings.Contains(s, "fooLocked called without its lock held") {
		t.Fatalf("Held of a free Mutex: panic %v", free)
	}
	if s, _ := freeRW.(string); !strings.Contains(s, "barLocked called without its lock write-held") {
		t.Fatalf("WriteHeld of a free RWMutex: panic %v", freeRW)
	}
	mu.Lock()
	rw.RLock()
	if v := panics(func() { lockcheck.Held(&mu, "f"); lockcheck.Held(&rw, "g") }); v != nil {
		t.Fatalf("Held of held locks: panic %v", v)
	}
	if v := panics(func() { lockcheck.WriteHeld(&rw, "h") }); v == nil {
		t.Fatal("WriteHeld of a read-held RWMutex did not panic")
	}
	rw.RUnlock()
	rw.Lock()
	if v := panics(func() { lockcheck.WriteHeld(&rw, "h") }); v != nil {
		t.Fatalf("WriteHeld of a write-held RWMutex: panic %v", v)
	}
	rw.Unlock()
	mu.Unlock()
}
