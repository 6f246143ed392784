// Package stripe is a counter that many goroutines add to at once without
// sharing a written cache line: the root package counts lazy Resets with
// it, and expiry counts Get hits and misses.
package stripe

import (
	"sync/atomic"
	"unsafe"
)

// Counter counts in stripes of a cache line each: an add is an atomic add
// on the stripe of the calling goroutine's stack (its address, hashed).
// A goroutine keeps to its stripe, so concurrent goroutines rarely share
// one, where a single counter would be written by every processor that
// counts: a cache line bouncing between processors cost 55% of the
// scheduler's parallel Reset. A counter per processor (procPin) would not
// bounce either, but pinning costs two calls, twice the atomic add of a
// stripe. The zero Counter is zero; a Counter must not be copied.
type Counter struct {
	stripes [stripes]padded
}

const stripes = 32

type padded struct {
	n atomic.Uint64
	_ [56]byte // a cache line each
}

// Add adds one.
func (c *Counter) Add() {
	var local byte // on the caller's stack: its address says which goroutine runs
	h := uint64(uintptr(unsafe.Pointer(&local))>>11) * 0x9e3779b97f4a7c15
	c.stripes[h>>(64-5)].n.Add(1)
}

// Load returns the count: the sum of the stripes, each read in turn.
func (c *Counter) Load() uint64 {
	var n uint64
	for i := range c.stripes {
		n += c.stripes[i].n.Load()
	}
	return n
}
