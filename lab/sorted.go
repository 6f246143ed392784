package lab

import (
	"fmt"

	"github.com/timewheel/timewheel/lab/workload"
)

// Sorted is a doubly linked list kept in deadline order. It is the
// "sorted linked list" row of the reference documents' table. It is also
// Node.js's unrefList as _unrefActive first kept it. It walks from the
// tail to find where a new timer goes (a new timeout is usually the
// latest).
//
// Schedule and Reschedule cost O(n) in the worst case, O(1) when the new
// deadline is at or after every other; Cancel is O(1); Expire is O(1) per
// timer fired and Next is O(1). The downside of this choice is that the
// most frequent operation, scheduling, pays for the order that only the
// rare expiry needs (joyent/node#8160).
//
// A Sorted is not safe for concurrent use.
type Sorted struct {
	list  SortedTimer // sentinel; list.next is the earliest timer
	n     int
	now   int64
	seq   uint64
	steps *workload.Steps // nil unless counting (see Structure)
}

// SortedTimer is a timer in a [Sorted] list.
type SortedTimer struct {
	prev, next *SortedTimer // nil when not pending
	when       int64
	seq        uint64 // schedule order, for equal deadlines
}

// NewSorted returns an empty sorted list whose current tick is 0.
func NewSorted() *Sorted {
	s := &Sorted{}
	s.list.prev, s.list.next = &s.list, &s.list
	return s
}

// Schedule adds a timer due at tick when and returns it. The complexity is
// O(n), O(1) if no pending timer is due after when.
func (s *Sorted) Schedule(when int64) *SortedTimer {
	t := &SortedTimer{}
	s.insert(t, when)
	return t
}

// insert links t after the last timer due at or before its deadline,
// walking back from the tail.
func (s *Sorted) insert(t *SortedTimer, when int64) {
	s.seq++
	t.when, t.seq = max(when, s.now), s.seq
	at, walked := s.list.prev, 0
	for at != &s.list && at.when > t.when {
		at = at.prev
		walked++
	}
	t.prev, t.next = at, at.next
	at.next.prev = t
	at.next = t
	s.n++
	s.steps.Add(walked + 2) // each timer passed, the one it stops at, the link
}

// Cancel removes t if it is pending and reports whether it was. The
// complexity is O(1).
func (s *Sorted) Cancel(t *SortedTimer) bool {
	s.steps.Add(1)
	if t.prev == nil {
		return false
	}
	t.prev.next = t.next
	t.next.prev = t.prev
	t.prev, t.next = nil, nil
	s.n--
	return true
}

// Reschedule moves t to tick when, scheduling it anew if it was not
// pending, and reports whether it was pending. The complexity is that of
// Schedule.
func (s *Sorted) Reschedule(t *SortedTimer, when int64) bool {
	pending := s.Cancel(t)
	s.insert(t, when)
	return pending
}

// Expire moves the current tick to now and fires, in order, every timer
// due by then. It returns the number fired. A timer that fire schedules
// waits for the next call. The complexity is O(1) per timer fired.
func (s *Sorted) Expire(now int64, fire func(*SortedTimer)) int {
	if now < s.now {
		return 0
	}
	s.now = now
	limit, fired := s.seq, 0
	for {
		t := s.list.next
		s.steps.Add(1) // the head compared, and unlinked by Cancel if due
		if t == &s.list || t.when > now || t.seq > limit {
			return fired
		}
		s.Cancel(t)
		fired++
		fire(t)
	}
}

// Next returns the earliest pending deadline and false if nothing is
// pending. The complexity is O(1).
func (s *Sorted) Next() (int64, bool) {
	if s.n == 0 {
		return 0, false
	}
	return s.list.next.when, true
}

// Len returns the number of pending timers. The complexity is O(1).
func (s *Sorted) Len() int { return s.n }

// countSteps makes s count its steps into c: a timer compared, linked or
// unlinked is a step.
func (s *Sorted) countSteps(c *workload.Steps) { s.steps = c }

// Verify checks the list's links, order and count and returns an error
// naming the first broken invariant. It is meant for tests.
func (s *Sorted) Verify() error {
	count := 0
	for t := s.list.next; t != &s.list; t = t.next {
		if t.next.prev != t {
			return fmt.Errorf("sorted: list broken at tick %d", t.when)
		}
		if p := t.prev; p != &s.list && (p.when > t.when || p.when == t.when && p.seq > t.seq) {
			return fmt.Errorf("sorted: timer due %d after one due %d", p.when, t.when)
		}
		count++
	}
	if count != s.n {
		return fmt.Errorf("sorted: Len is %d, but %d timers are linked", s.n, count)
	}
	return nil
}
