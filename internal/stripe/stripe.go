// Package stripe is a counter that many goroutines add to at once without
// sharing a written cache line. The root package counts lazy Resets with
// it, and expiry counts Get hits and misses. It also holds the runtime's
// processor pinning, which the counter and the root's shard choice use.
package stripe

import (
	"sync/atomic"
	"unsafe"
)

// Counter counts in stripes of two cache lines each (processors fetch
// lines in pairs). An add is an atomic add on one stripe. A single
// counter would be written by every processor that counts, and its cache
// line bouncing between processors cost 55% of the scheduler's parallel
// Reset (BenchmarkAdd: impl=shared). A Counter takes 4 KB and 128 bytes.
// The zero Counter is zero; a Counter must not be copied.
type Counter struct {
	_       [128]byte // keeps what lies before the Counter off its first stripe
	stripes [stripes]padded
}

const stripes = 32

type padded struct {
	n atomic.Uint64
	_ [120]byte
}

// Add adds one to the stripe of the calling goroutine's stack (its
// address, hashed). A goroutine keeps to its stripe, so concurrent
// goroutines mostly use different ones, for the price of the add alone.
// But two goroutines whose stacks hash alike share a stripe for as long
// as they live. (BenchmarkAdd shows it happen to the two goroutines of
// b.RunParallel in one run of several.) AddPinned does not.
func (c *Counter) Add() {
	var local byte // on the caller's stack: its address says which goroutine runs
	h := uint64(uintptr(unsafe.Pointer(&local))>>11) * 0x9e3779b97f4a7c15
	c.stripes[h>>(64-5)].n.Add(1)
}

// AddPinned adds one to the stripe of the calling goroutine's processor:
// goroutines running at once on different processors never share a
// stripe (up to 32 processors), for two more calls than Add. The stripes
// of processors with adjacent ids are 7 apart. The first stripe is kept
// off what lies before the Counter: without the leading lines, the two
// processors of BenchmarkAdd (impl=proc, -cpu 2) took 15 ns an add, not
// 3.4.
func (c *Counter) AddPinned() {
	p := ProcPin()
	c.stripes[(p*7)&(stripes-1)].n.Add(1)
	ProcUnpin()
}

// Load returns the count: the sum of the stripes, each read in turn.
func (c *Counter) Load() uint64 {
	var n uint64
	for i := range c.stripes {
		n += c.stripes[i].n.Load()
	}
	return n
}
