package lab

import (
	"fmt"

	"github.com/timewheel/timewheel/lab/workload"
)

// Node is Node.js's timers (lib/internal/timers.js). It has two parts:
//   - one linked list per distinct duration (TimersList, keyed by
//     milliseconds in timerListMap). Each list is in deadline order by
//     construction: every timer appended to it was started later with
//     the same duration.
//   - one small binary heap of lists (timerListQueue), ordered by each
//     list's first deadline. So the earliest timer of all is the head of
//     the list on top.
//
// L is the number of distinct durations pending. Schedule is O(1) into
// an existing list and O(log L) when it starts a new one. Cancel is O(1),
// O(log L) when it removes a list's head. Expire is O(log L) per timer
// fired; Next is O(1). With few durations (idle timeouts, keep-alive)
// every operation is O(1); with as many durations as timers it is a heap
// of one-timer lists.
//
// Node.js runs a list's every due timer before it looks at the heap
// again. It leaves a list's place in the heap stale when its head is
// cancelled. This one keys the heap by (deadline, schedule order) of each
// list's head and consults it for every timer. So one Expire fires in
// deadline order across lists, as the suite demands.
//
// A Node is not safe for concurrent use.
type Node struct {
	lists map[int64]*nodeList // by duration
	heap  []*nodeList         // by head's (deadline, schedule order)
	n     int
	now   int64
	seq   uint64
	steps *workload.Steps // nil unless counting (see Structure)
}

// nodeList is a TimersList: timers of one duration, in deadline order.
type nodeList struct {
	timers   NodeTimer // sentinel
	duration int64
	index    int // position in the heap
}

func (l *nodeList) head() *NodeTimer { return l.timers.next }

// NodeTimer is a timer in a [Node] queue.
type NodeTimer struct {
	prev, next *NodeTimer
	list       *nodeList // nil when not pending
	when       int64
	seq        uint64
}

func (t *NodeTimer) less(u *NodeTimer) bool {
	return t.when < u.when || t.when == u.when && t.seq < u.seq
}

// NewNode returns an empty queue whose current tick is 0.
func NewNode() *Node { return &Node{lists: map[int64]*nodeList{}} }

// Schedule adds a timer due at tick when and returns it. Its duration,
// when less the current tick, picks its list. The complexity is O(1), or
// O(log L) if no timer of that duration is pending.
func (q *Node) Schedule(when int64) *NodeTimer {
	t := &NodeTimer{}
	q.insert(t, when)
	return t
}

func (q *Node) insert(t *NodeTimer, when int64) {
	q.seq++
	t.when, t.seq = max(when, q.now), q.seq
	d := t.when - q.now
	l := q.lists[d]
	fresh := l == nil
	if fresh {
		l = &nodeList{duration: d}
		l.timers.prev, l.timers.next = &l.timers, &l.timers
		q.lists[d] = l
	}
	s := &l.timers
	t.prev, t.next, t.list = s.prev, s, l
	s.prev.next = t
	s.prev = t
	q.n++
	q.steps.Add(2) // the list looked up, the timer linked
	if fresh {
		l.index = len(q.heap)
		q.heap = append(q.heap, l)
		q.up(l.index)
	}
}

// Cancel removes t if it is pending and reports whether it was. The
// complexity is O(1), or O(log L) if t heads its list.
func (q *Node) Cancel(t *NodeTimer) bool {
	q.steps.Add(1)
	l := t.list
	if l == nil {
		return false
	}
	wasHead := l.head() == t
	t.prev.next = t.next
	t.next.prev = t.prev
	t.prev, t.next, t.list = nil, nil, nil
	q.n--
	switch {
	case l.head() == &l.timers: // the list is empty: drop it
		q.steps.Add(1)
		delete(q.lists, l.duration)
		q.remove(l.index)
	case wasHead: // the list's key moved later
		q.down(l.index)
	}
	return true
}

// Reschedule moves t to tick when, scheduling it anew if it was not
// pending, and reports whether it was pending. The complexity is that of
// Cancel and Schedule.
func (q *Node) Reschedule(t *NodeTimer, when int64) bool {
	pending := q.Cancel(t)
	q.insert(t, when)
	return pending
}

// Expire moves the current tick to now and fires, in order, every timer
// due by then. It returns the number fired. A timer that fire schedules
// waits for the next call. The complexity is O(log L) per timer fired.
func (q *Node) Expire(now int64, fire func(*NodeTimer)) int {
	if now < q.now {
		return 0
	}
	q.now = now
	limit, fired := q.seq, 0
	for len(q.heap) > 0 {
		t := q.heap[0].head()
		q.steps.Add(1) // the least list's head, read and compared
		if t.when > now || t.seq > limit {
			break
		}
		q.Cancel(t)
		fired++
		fire(t)
	}
	return fired
}

// Next returns the earliest pending deadline and false if nothing is
// pending. The complexity is O(1).
func (q *Node) Next() (int64, bool) {
	if len(q.heap) == 0 {
		return 0, false
	}
	return q.heap[0].head().when, true
}

// Len returns the number of pending timers. The complexity is O(1).
func (q *Node) Len() int { return q.n }

// countSteps makes q count its steps into s. These are steps: a list
// looked up or dropped, a timer linked or unlinked, and a list's head
// read and compared by a sift of the heap of lists.
func (q *Node) countSteps(s *workload.Steps) { q.steps = s }

func (q *Node) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.heap[i].index, q.heap[j].index = i, j
}

func (q *Node) up(i int) bool {
	start, seen := i, 0
	for i > 0 {
		p := (i - 1) / 2
		seen++ // the parent list's head, read and compared, and swapped if later
		if !q.heap[i].head().less(q.heap[p].head()) {
			break
		}
		q.swap(i, p)
		i = p
	}
	q.steps.Add(seen)
	return i != start
}

func (q *Node) down(i int) {
	n, seen := len(q.heap), 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		seen++ // the child lists' heads, read and compared, and the earlier swapped if earlier
		if r := c + 1; r < n && q.heap[r].head().less(q.heap[c].head()) {
			c = r
		}
		if !q.heap[c].head().less(q.heap[i].head()) {
			break
		}
		q.swap(i, c)
		i = c
	}
	q.steps.Add(seen)
}

// remove takes the list at heap position i out of the heap.
func (q *Node) remove(i int) {
	last := len(q.heap) - 1
	if i != last {
		q.swap(i, last)
	}
	q.heap[last] = nil
	q.heap = q.heap[:last]
	if i != last && !q.up(i) {
		q.down(i)
	}
}

// Verify checks every list's order and links, the heap, the map and the
// count, and returns an error naming the first broken invariant. It is
// meant for tests.
func (q *Node) Verify() error {
	if len(q.heap) != len(q.lists) {
		return fmt.Errorf("node: %d lists in the heap, %d in the map", len(q.heap), len(q.lists))
	}
	count := 0
	for i, l := range q.heap {
		if l.index != i || q.lists[l.duration] != l {
			return fmt.Errorf("node: list of duration %d misplaced", l.duration)
		}
		if l.head() == &l.timers {
			return fmt.Errorf("node: empty list of duration %d", l.duration)
		}
		if i > 0 && l.head().less(q.heap[(i-1)/2].head()) {
			return fmt.Errorf("node: heap out of order at %d", i)
		}
		for t := l.head(); t != &l.timers; t = t.next {
			if t.list != l || t.next.prev != t {
				return fmt.Errorf("node: list of duration %d broken at tick %d", l.duration, t.when)
			}
			if t.next != &l.timers && !t.less(t.next) {
				return fmt.Errorf("node: list of duration %d out of order at tick %d", l.duration, t.when)
			}
			count++
		}
	}
	if count != q.n {
		return fmt.Errorf("node: Len is %d, but %d timers are linked", q.n, count)
	}
	return nil
}
