package queue

import (
	"container/heap"
	"fmt"
)

// Reference is the plain timer queue the tests hold every other queue
// against. It is a binary min-heap from container/heap ordered by
// (deadline, schedule order), as libuv orders by its start id. It is small
// enough to be obviously right. Schedule, Cancel and Reschedule cost
// O(log n); Expire costs O(log n) per timer fired.
//
// A Reference is not safe for concurrent use. Its zero value is an empty
// queue whose current tick is 0, as NewReference's.
type Reference struct {
	now  int64
	seq  uint64
	heap refHeap
}

// RefTimer is a timer in a [Reference]. Its zero value is a timer that
// is not pending.
type RefTimer struct {
	when  int64
	seq   uint64
	index int // position in the heap plus one; 0 when not pending
}

// NewReference returns an empty reference queue whose current tick is 0.
func NewReference() *Reference { return &Reference{} }

// Schedule adds a timer due at tick when. The complexity is O(log n).
func (r *Reference) Schedule(when int64) *RefTimer {
	t := new(RefTimer)
	r.push(t, when)
	return t
}

func (r *Reference) push(t *RefTimer, when int64) {
	t.when = max(when, r.now)
	r.seq++
	t.seq = r.seq
	heap.Push(&r.heap, t)
}

// Cancel removes t if pending and reports whether it was. The complexity is
// O(log n). It panics if t is nil or pending in another Reference.
func (r *Reference) Cancel(t *RefTimer) bool { return r.cancel(t, "Cancel") }

// cancel is Cancel; op names the method for the panics.
func (r *Reference) cancel(t *RefTimer, op string) bool {
	if t == nil {
		panic("timewheel/queue: Reference." + op + " of a nil *RefTimer")
	}
	if t.index == 0 {
		return false
	}
	if t.index > len(r.heap) || r.heap[t.index-1] != t {
		panic(fmt.Sprintf("timewheel/queue: Reference.%s of a timer pending in another Reference (at tick %d)", op, t.when))
	}
	heap.Remove(&r.heap, t.index-1)
	return true
}

// Reschedule moves t to tick when and reports whether it was pending. It
// panics as Cancel does. The complexity is O(log n).
func (r *Reference) Reschedule(t *RefTimer, when int64) bool {
	pending := r.cancel(t, "Reschedule")
	r.push(t, when)
	return pending
}

// Expire fires, in order, every timer due by now and moves the current
// tick to now. The complexity is O(log n) per timer fired.
func (r *Reference) Expire(now int64, fire func(*RefTimer)) int {
	if fire == nil {
		panic("timewheel/queue: Reference.Expire with a nil fire func")
	}
	fired := 0
	for len(r.heap) > 0 && r.heap[0].when <= now {
		t := heap.Pop(&r.heap).(*RefTimer)
		r.now = max(r.now, t.when)
		fired++
		fire(t)
	}
	r.now = max(r.now, now)
	return fired
}

// Next returns the earliest deadline and false if nothing is pending. The
// complexity is O(1).
func (r *Reference) Next() (int64, bool) {
	if len(r.heap) == 0 {
		return 0, false
	}
	return r.heap[0].when, true
}

// Len returns the number of pending timers. The complexity is O(1).
func (r *Reference) Len() int { return len(r.heap) }

// refHeap is container/heap's adaptor for the Reference. The virtual
// clock has one of the same shape. They are not shared: the oracle should
// be readable in one file and share no code with what drives the queues
// it judges.
type refHeap []*RefTimer

func (h refHeap) Len() int { return len(h) }
func (h refHeap) Less(i, j int) bool {
	if h[i].when != h[j].when {
		return h[i].when < h[j].when
	}
	return h[i].seq < h[j].seq
}
func (h refHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i + 1
	h[j].index = j + 1
}
func (h *refHeap) Push(x any) {
	t := x.(*RefTimer)
	*h = append(*h, t)
	t.index = len(*h)
}
func (h *refHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = 0
	return t
}

var (
	_ Queue[*Entry]    = (*Wheel)(nil)
	_ Queue[*RefTimer] = (*Reference)(nil)
)

// When returns the tick the timer is due at.
func (t *RefTimer) When() int64 { return t.when }
