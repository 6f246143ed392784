// Package lockcheck checks, in the tests, that a function named …Locked
// is called with its lock held, as the runtime's assertLockHeld does.
// The house rule is that a helper that needs a lock held ends in Locked;
// a name alone is a hope, and this makes it a check.
//
// The checks run under the race detector (go test -race), where the
// tests of this repository run, and compile to nothing otherwise. A check
// tries the lock: if it could take it, nobody held it, and it panics,
// naming the function. It cannot tell whether the caller or another
// goroutine holds the lock, so it catches a caller that forgot the lock
// whenever no other goroutine happens to hold it, which in a test is
// nearly always.
package lockcheck

import (
	"fmt"
	"sync"
)

// Held panics, under the race detector, if nobody holds mu: fn, a
// function that needs mu held (read-held is enough for an RWMutex), was
// called without it. The complexity is O(1).
func Held(mu interface {
	TryLock() bool
	Unlock()
}, fn string) {
	if Enabled && mu.TryLock() {
		mu.Unlock()
		panic(fmt.Sprintf("lockcheck: %s called without its lock held", fn))
	}
}

// WriteHeld panics, under the race detector, if nobody holds mu for
// writing: fn, a function that needs mu write-held, was called without
// it, or with the read lock alone. The complexity is O(1).
func WriteHeld(mu *sync.RWMutex, fn string) {
	if Enabled && mu.TryRLock() {
		mu.RUnlock()
		panic(fmt.Sprintf("lockcheck: %s called without its lock write-held", fn))
	}
}
