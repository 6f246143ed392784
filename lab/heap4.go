package lab

import (
	"fmt"
	"math/bits"

	"github.com/timewheel/timewheel/lab/workload"
)

// Heap4 is a 4-ary min-heap, the shape of the Go runtime's timer heap
// (runtime/time.go). Four children per node make the tree half as deep as
// a binary heap's. So sifting up is cheaper, and sifting down looks at
// more children per level. As in the runtime, each slot holds the
// deadline beside the pointer (the runtime's timerWhen). So a sift reads
// the slice and not the timers. The runtime orders by deadline alone; this heap
// breaks ties by schedule order, as the suite demands.
//
// Schedule, Cancel and Reschedule are O(log n); Expire is O(log n) per
// timer fired; Next is O(1).
//
// A Heap4 is not safe for concurrent use.
type Heap4 struct {
	heap  []heap4Slot
	now   int64
	seq   uint64
	steps *workload.Steps // nil unless counting (see Structure)
}

// heap4Slot is one node of the heap: the timer and its key, copied.
type heap4Slot struct {
	when int64
	seq  uint64
	t    *Heap4Timer
}

func (s *heap4Slot) less(u *heap4Slot) bool {
	return s.when < u.when || s.when == u.when && s.seq < u.seq
}

// Heap4Timer is a timer in a [Heap4].
type Heap4Timer struct {
	when  int64
	index int // position in the heap; -1 when not pending
}

// NewHeap4 returns an empty 4-ary heap whose current tick is 0.
func NewHeap4() *Heap4 { return &Heap4{} }

// Schedule adds a timer due at tick when and returns it. The complexity is
// O(log n).
func (h *Heap4) Schedule(when int64) *Heap4Timer {
	t := &Heap4Timer{index: -1}
	h.push(t, when)
	return t
}

func (h *Heap4) push(t *Heap4Timer, when int64) {
	h.seq++
	t.when = max(when, h.now)
	t.index = len(h.heap)
	h.heap = append(h.heap, heap4Slot{t.when, h.seq, t})
	h.steps.Add(1)
	h.up(t.index)
}

// Cancel removes t if it is pending and reports whether it was. The
// complexity is O(log n).
func (h *Heap4) Cancel(t *Heap4Timer) bool {
	h.steps.Add(1)
	if t.index < 0 {
		return false
	}
	i, last := t.index, len(h.heap)-1
	if i != last {
		h.heap[i] = h.heap[last]
		h.heap[i].t.index = i
	}
	h.heap[last] = heap4Slot{}
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
func (h *Heap4) Reschedule(t *Heap4Timer, when int64) bool {
	pending := h.Cancel(t)
	h.push(t, when)
	return pending
}

// Expire moves the current tick to now and fires, in order, every timer
// due by then. It returns the number fired. A timer that fire schedules
// waits for the next call. The complexity is O(log n) per timer fired.
func (h *Heap4) Expire(now int64, fire func(*Heap4Timer)) int {
	if now < h.now {
		return 0
	}
	h.now = now
	limit, fired := h.seq, 0
	for len(h.heap) > 0 {
		s := h.heap[0]
		h.steps.Add(1) // the least, read and compared
		if s.when > now || s.seq > limit {
			break
		}
		h.Cancel(s.t)
		fired++
		fire(s.t)
	}
	return fired
}

// Next returns the earliest pending deadline and false if nothing is
// pending. The complexity is O(1).
func (h *Heap4) Next() (int64, bool) {
	if len(h.heap) == 0 {
		return 0, false
	}
	return h.heap[0].when, true
}

// Len returns the number of pending timers. The complexity is O(1).
func (h *Heap4) Len() int { return len(h.heap) }

// countSteps makes h count its steps into s. A timer appended, taken out
// or placed is a step. So is each parent and each child a sift reads and
// compares (four at each level going down). Those are counted after the
// fact from where the sift started and ended (see Heap's).
func (h *Heap4) countSteps(s *workload.Steps) { h.steps = s }

// up moves the slot at i towards the root while it is less than its
// parent, and reports whether it moved.
func (h *Heap4) up(i int) bool {
	s, start := h.heap[i], i
	for i > 0 {
		p := (i - 1) / 4
		if !s.less(&h.heap[p]) {
			break
		}
		h.heap[i] = h.heap[p]
		h.heap[i].t.index = i
		i = p
	}
	h.heap[i], s.t.index = s, i
	if h.steps != nil { // a parent read and compared for each level climbed, and the one that stopped it; s placed
		h.steps.Add(depth4(start) - depth4(i) + b2i(i > 0) + 1)
	}
	return i != start
}

// down moves the slot at i towards the leaves while a child is less.
func (h *Heap4) down(i int) {
	s, n, start := h.heap[i], len(h.heap), i
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c // the least of up to four children
		for j := c + 1; j < c+4 && j < n; j++ {
			if h.heap[j].less(&h.heap[m]) {
				m = j
			}
		}
		if !h.heap[m].less(&s) {
			break
		}
		h.heap[i] = h.heap[m]
		h.heap[i].t.index = i
		i = m
	}
	h.heap[i], s.t.index = s, i
	if h.steps != nil { // four children read and compared at each level descended, and at the one that stopped it; s placed
		h.steps.Add(4*(depth4(i)-depth4(start)+b2i(4*i+1 < n)) + 1)
	}
}

// depth4 returns the depth of index i in a 4-ary heap: 0 for the root;
// depth d starts at index (4^d − 1)/3.
func depth4(i int) int { return (bits.Len(uint(3*i+1)) - 1) / 2 }

// Verify checks the heap order and every timer's index and returns an
// error naming the first broken invariant. It is meant for tests.
func (h *Heap4) Verify() error {
	for i := range h.heap {
		s := &h.heap[i]
		if s.t.index != i || s.t.when != s.when {
			return fmt.Errorf("heap4: slot %d (tick %d) records index %d, tick %d", i, s.when, s.t.index, s.t.when)
		}
		if i > 0 && s.less(&h.heap[(i-1)/4]) {
			return fmt.Errorf("heap4: slot %d (tick %d) is less than its parent", i, s.when)
		}
	}
	return nil
}
