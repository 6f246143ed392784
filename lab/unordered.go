package lab

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/timewheel/timewheel/lab/workload"
)

// Unordered is the plainest timer queue: one doubly linked list in no
// order. It is the "linked list" row of the reference documents' table and
// Node.js's unrefList after joyent/node#8160 turned _unrefActive into an
// append, moving the search from insertion to expiry.
//
// Schedule, Cancel and Reschedule are O(1). Expire scans every pending
// timer, O(n) per call, and sorts the k it finds due, O(k log k); Next
// scans too, O(n). The downside of this choice is that the cost of expiry
// grows with every timer pending, due or not.
//
// An Unordered is not safe for concurrent use.
type Unordered struct {
	pending UnorderedTimer // sentinel of the list of pending timers
	firing  UnorderedTimer // sentinel: timers Expire has taken and is firing
	n       int
	now     int64
	seq     uint64
	scratch []*UnorderedTimer
	steps   *workload.Steps // nil unless counting (see Structure)
}

// UnorderedTimer is a timer in an [Unordered] list.
type UnorderedTimer struct {
	prev, next *UnorderedTimer // nil when not pending
	when       int64
	seq        uint64 // schedule order, for equal deadlines
}

// NewUnordered returns an empty unordered list whose current tick is 0.
func NewUnordered() *Unordered {
	u := &Unordered{}
	u.pending.prev, u.pending.next = &u.pending, &u.pending
	u.firing.prev, u.firing.next = &u.firing, &u.firing
	return u
}

// Schedule adds a timer due at tick when and returns it. The complexity is
// O(1).
func (u *Unordered) Schedule(when int64) *UnorderedTimer {
	t := &UnorderedTimer{}
	u.insert(t, when)
	return t
}

func (u *Unordered) insert(t *UnorderedTimer, when int64) {
	u.seq++
	t.when, t.seq = max(when, u.now), u.seq
	s := &u.pending
	t.prev, t.next = s.prev, s
	s.prev.next = t
	s.prev = t
	u.n++
	u.steps.Add(1)
}

func (u *Unordered) unlink(t *UnorderedTimer) {
	t.prev.next = t.next
	t.next.prev = t.prev
	t.prev, t.next = nil, nil
	u.n--
}

// Cancel removes t if it is pending and reports whether it was. The
// complexity is O(1).
func (u *Unordered) Cancel(t *UnorderedTimer) bool {
	u.steps.Add(1)
	if t.prev == nil {
		return false
	}
	u.unlink(t)
	return true
}

// Reschedule moves t to tick when, scheduling it anew if it was not
// pending, and reports whether it was pending. The complexity is O(1).
func (u *Unordered) Reschedule(t *UnorderedTimer, when int64) bool {
	pending := u.Cancel(t)
	u.insert(t, when)
	return pending
}

// Expire moves the current tick to now and fires, in order, every timer
// due by then. It returns the number fired. The complexity is O(n) to scan
// the list plus O(k log k) to sort the k timers due.
func (u *Unordered) Expire(now int64, fire func(*UnorderedTimer)) int {
	if now < u.now {
		return 0
	}
	u.now = now
	due := u.scratch[:0]
	for t := u.pending.next; t != &u.pending; t = t.next {
		if t.when <= now {
			due = append(due, t)
		}
	}
	u.steps.Add(1 + u.n + 2*len(due)) // the call, the scan, and each due timer moved and fired
	if len(due) == 0 {
		return 0
	}
	order := func(a, b *UnorderedTimer) int {
		return cmp.Or(cmp.Compare(a.when, b.when), cmp.Compare(a.seq, b.seq))
	}
	if u.steps != nil { // counting: each comparison of the sort is a step
		compare := order
		order = func(a, b *UnorderedTimer) int { u.steps.Add(1); return compare(a, b) }
	}
	slices.SortFunc(due, order)
	f := &u.firing
	for _, t := range due { // move to the firing list, in order
		t.prev.next, t.next.prev = t.next, t.prev
		t.prev, t.next = f.prev, f
		f.prev.next = t
		f.prev = t
	}
	clear(due)
	u.scratch = due[:0]
	fired := 0
	for f.next != f { // fire may cancel or reschedule timers still here
		t := f.next
		u.unlink(t)
		fired++
		fire(t)
	}
	return fired
}

// Next returns the earliest pending deadline and false if nothing is
// pending. The complexity is O(n).
func (u *Unordered) Next() (int64, bool) {
	if u.n == 0 {
		return 0, false
	}
	next := int64(1<<63 - 1)
	for _, s := range []*UnorderedTimer{&u.pending, &u.firing} {
		for t := s.next; t != s; t = t.next {
			next = min(next, t.when)
		}
	}
	return next, true
}

// Len returns the number of pending timers. The complexity is O(1).
func (u *Unordered) Len() int { return u.n }

// countSteps makes u count its steps into s: a timer linked, unlinked,
// scanned, moved or compared is a step, and so is each Expire call.
func (u *Unordered) countSteps(s *workload.Steps) { u.steps = s }

// Verify checks the list's links and count and returns an error naming the
// first broken invariant. It walks every timer: it is meant for tests.
func (u *Unordered) Verify() error {
	count := 0
	for _, s := range []*UnorderedTimer{&u.pending, &u.firing} {
		for t := s.next; t != s; t = t.next {
			if t.next.prev != t {
				return fmt.Errorf("unordered: list broken at tick %d", t.when)
			}
			count++
		}
	}
	if count != u.n {
		return fmt.Errorf("unordered: Len is %d, but %d timers are linked", u.n, count)
	}
	return nil
}
