package lab

import (
	"fmt"
	"math/bits"

	"github.com/timewheel/timewheel/lab/workload"
)

// Heap is a binary min-heap ordered by (deadline, start id), as libuv
// orders its timers. The start id is a counter taken at every start. So
// timers with equal deadlines fire in the order they were started
// (timer_less_than in libuv's src/timer.c). libuv links its heap nodes
// with pointers; this one keeps them in a slice, which changes the
// constant, not the order or the cost.
//
// Schedule, Cancel and Reschedule are O(log n); Expire is O(log n) per
// timer fired; Next is O(1).
//
// A Heap is not safe for concurrent use.
type Heap struct {
	heap  []*HeapTimer
	now   int64
	seq   uint64          // libuv's loop->timer_counter
	steps *workload.Steps // nil unless counting (see Structure)
}

// HeapTimer is a timer in a [Heap].
type HeapTimer struct {
	when  int64
	seq   uint64 // start id
	index int    // position in the heap; -1 when not pending
}

// NewHeap returns an empty heap whose current tick is 0.
func NewHeap() *Heap { return &Heap{} }

func (t *HeapTimer) less(u *HeapTimer) bool {
	return t.when < u.when || t.when == u.when && t.seq < u.seq
}

// Schedule adds a timer due at tick when and returns it. The complexity is
// O(log n).
func (h *Heap) Schedule(when int64) *HeapTimer {
	t := &HeapTimer{index: -1}
	h.push(t, when)
	return t
}

func (h *Heap) push(t *HeapTimer, when int64) {
	h.seq++
	t.when, t.seq = max(when, h.now), h.seq
	t.index = len(h.heap)
	h.heap = append(h.heap, t)
	h.steps.Add(1)
	h.up(t.index)
}

// Cancel removes t if it is pending and reports whether it was. The
// complexity is O(log n).
func (h *Heap) Cancel(t *HeapTimer) bool {
	h.steps.Add(1)
	if t.index < 0 {
		return false
	}
	i, last := t.index, len(h.heap)-1
	if i != last {
		h.heap[i] = h.heap[last]
		h.heap[i].index = i
	}
	h.heap[last] = nil
	h.heap = h.heap[:last]
	if i != last && !h.up(i) {
		h.down(i)
	}
	t.index = -1
	return true
}

// Reschedule moves t to tick when, scheduling it anew if it was not
// pending, and reports whether it was pending. The complexity is
// O(log n).
func (h *Heap) Reschedule(t *HeapTimer, when int64) bool {
	pending := h.Cancel(t)
	h.push(t, when)
	return pending
}

// Expire moves the current tick to now and fires, in order, every timer
// due by then. It returns the number fired. A timer that fire schedules
// waits for the next call. The complexity is O(log n) per timer fired.
func (h *Heap) Expire(now int64, fire func(*HeapTimer)) int {
	if now < h.now {
		return 0
	}
	h.now = now
	limit, fired := h.seq, 0
	for len(h.heap) > 0 {
		t := h.heap[0]
		h.steps.Add(1) // the least, read and compared
		if t.when > now || t.seq > limit {
			break
		}
		h.Cancel(t)
		fired++
		fire(t)
	}
	return fired
}

// Next returns the earliest pending deadline and false if nothing is
// pending. The complexity is O(1).
func (h *Heap) Next() (int64, bool) {
	if len(h.heap) == 0 {
		return 0, false
	}
	return h.heap[0].when, true
}

// Len returns the number of pending timers. The complexity is O(1).
func (h *Heap) Len() int { return len(h.heap) }

// countSteps makes h count its steps into s: a timer appended, taken out
// or placed is a step, and so is each level a sift reads and compares. A
// sift counts its levels from where it started and ended, after the
// fact, so that the timed rounds, whose counter is nil, pay nothing in
// the loop.
func (h *Heap) countSteps(s *workload.Steps) { h.steps = s }

// up moves the timer at i towards the root while it is less than its
// parent, and reports whether it moved.
func (h *Heap) up(i int) bool {
	t, start := h.heap[i], i
	for i > 0 {
		p := (i - 1) / 2
		if !t.less(h.heap[p]) {
			break
		}
		h.heap[i] = h.heap[p]
		h.heap[i].index = i
		i = p
	}
	h.heap[i], t.index = t, i
	if h.steps != nil { // a parent read and compared for each level climbed, and the one that stopped it; t placed
		h.steps.Add(depth2(start) - depth2(i) + b2i(i > 0) + 1)
	}
	return i != start
}

// down moves the timer at i towards the leaves while a child is less.
func (h *Heap) down(i int) {
	t, n, start := h.heap[i], len(h.heap), i
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h.heap[r].less(h.heap[c]) {
			c = r
		}
		if !h.heap[c].less(t) {
			break
		}
		h.heap[i] = h.heap[c]
		h.heap[i].index = i
		i = c
	}
	h.heap[i], t.index = t, i
	if h.steps != nil { // the children read and compared at each level descended, and at the one that stopped it; t placed
		h.steps.Add(depth2(i) - depth2(start) + b2i(2*i+1 < n) + 1)
	}
}

// depth2 returns the depth of index i in a binary heap: 0 for the root.
func depth2(i int) int { return bits.Len(uint(i+1)) - 1 }

// b2i returns 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Verify checks the heap order and every timer's index and returns an
// error naming the first broken invariant. It is meant for tests.
func (h *Heap) Verify() error {
	for i, t := range h.heap {
		if t.index != i {
			return fmt.Errorf("heap: timer at %d records index %d", i, t.index)
		}
		if i > 0 && t.less(h.heap[(i-1)/2]) {
			return fmt.Errorf("heap: timer at %d (tick %d) is less than its parent", i, t.when)
		}
	}
	return nil
}
