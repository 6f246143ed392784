package lab

import (
	"fmt"

	"github.com/timewheel/timewheel/lab/workload"
)

// SkipList is a skip list (Pugh, "Skip Lists: A Probabilistic Alternative
// to Balanced Trees", 1990) keyed by (deadline, schedule order). It is
// laid out as Redis lays out its sorted sets: forward pointers on up to
// 32 levels, a node reaching level k+1 with probability 1/4. The reference documents
// give it "O(log n) to add, delete and find, O(1) for the least node, but
// more space, O(1.5n)": with p = 1/4 a node holds 4/3 forward pointers on
// average.
//
// Schedule, Cancel and Reschedule are O(log n) expected (Cancel searches
// for the node's predecessors); Expire is O(1) expected per timer fired;
// Next is O(1).
//
// A SkipList is not safe for concurrent use.
type SkipList struct {
	head   [skipMaxLevel]*SkipTimer // forward pointers of the header
	level  int                      // levels in use
	n      int
	now    int64
	seq    uint64
	rnd    uint64 // xorshift state for node levels
	update [skipMaxLevel]*SkipTimer
	steps  *workload.Steps // nil unless counting (see Structure)
}

const skipMaxLevel = 32

// SkipTimer is a timer in a [SkipList].
type SkipTimer struct {
	next    []*SkipTimer // forward pointer per level; len is the node's level, drawn once
	when    int64
	seq     uint64
	pending bool
}

// NewSkipList returns an empty skip list whose current tick is 0.
func NewSkipList() *SkipList { return &SkipList{level: 1, rnd: 0x9E3779B97F4A7C15} }

func (t *SkipTimer) less(u *SkipTimer) bool {
	return t.when < u.when || t.when == u.when && t.seq < u.seq
}

// randomLevel returns a level from 1 to skipMaxLevel, k+1 with
// probability 1/4 of k.
func (s *SkipList) randomLevel() int {
	s.rnd ^= s.rnd << 13
	s.rnd ^= s.rnd >> 7
	s.rnd ^= s.rnd << 17
	level := 1
	for r := s.rnd; r&3 == 0 && level < skipMaxLevel; r >>= 2 {
		level++
	}
	return level
}

// forward returns the level-i successor of x, or of the header if x is nil.
func (s *SkipList) forward(x *SkipTimer, i int) *SkipTimer {
	if x == nil {
		return s.head[i]
	}
	return x.next[i]
}

func (s *SkipList) setForward(x *SkipTimer, i int, y *SkipTimer) {
	if x == nil {
		s.head[i] = y
	} else {
		x.next[i] = y
	}
}

// search fills s.update with the last node before t on every level in use
// (nil standing for the header).
func (s *SkipList) search(t *SkipTimer) {
	var x *SkipTimer
	seen := 0
	for i := s.level - 1; i >= 0; i-- {
		for y := s.forward(x, i); y != nil && y.less(t); y = s.forward(x, i) {
			x = y
			seen++
		}
		s.update[i] = x
	}
	s.steps.Add(seen + s.level) // each node passed, and the one each level stops at
}

// Schedule adds a timer due at tick when and returns it. The complexity is
// O(log n) expected.
func (s *SkipList) Schedule(when int64) *SkipTimer {
	t := newSkipTimer(s.randomLevel())
	s.insert(t, when)
	return t
}

// newSkipTimer allocates a timer and its forward pointers in one piece, as
// Redis allocates a node with its level array: a search that reaches a
// node finds its pointers in the same cache lines.
func newSkipTimer(level int) *SkipTimer {
	switch {
	case level <= 1:
		n := &struct {
			SkipTimer
			links [1]*SkipTimer
		}{}
		n.next = n.links[:level]
		return &n.SkipTimer
	case level <= 2:
		n := &struct {
			SkipTimer
			links [2]*SkipTimer
		}{}
		n.next = n.links[:level]
		return &n.SkipTimer
	case level <= 4:
		n := &struct {
			SkipTimer
			links [4]*SkipTimer
		}{}
		n.next = n.links[:level]
		return &n.SkipTimer
	}
	n := &struct {
		SkipTimer
		links [8]*SkipTimer
	}{}
	n.next = n.links[:min(level, 8)]
	if level > 8 {
		n.next = make([]*SkipTimer, level)
	}
	return &n.SkipTimer
}

func (s *SkipList) insert(t *SkipTimer, when int64) {
	s.seq++
	t.when, t.seq, t.pending = max(when, s.now), s.seq, true
	level := len(t.next) // a timer keeps the level it was drawn at
	s.search(t)
	for i := s.level; i < level; i++ {
		s.update[i] = nil
	}
	s.level = max(s.level, level)
	for i := range level {
		t.next[i] = s.forward(s.update[i], i)
		s.setForward(s.update[i], i, t)
	}
	s.n++
	s.steps.Add(level) // a link per level
}

// Cancel removes t if it is pending and reports whether it was. The
// complexity is O(log n) expected.
func (s *SkipList) Cancel(t *SkipTimer) bool {
	s.steps.Add(len(t.next)) // an unlink per level
	if !t.pending {
		return false
	}
	if s.head[0] == t { // the least: no search needed
		for i := range t.next {
			s.head[i] = t.next[i]
		}
	} else {
		s.search(t)
		for i := range t.next {
			s.setForward(s.update[i], i, t.next[i])
		}
	}
	for s.level > 1 && s.head[s.level-1] == nil {
		s.level--
	}
	clear(t.next)
	t.pending = false
	s.n--
	return true
}

// Reschedule moves t to tick when, scheduling it anew if it was not
// pending, and reports whether it was pending. The complexity is
// O(log n) expected.
func (s *SkipList) Reschedule(t *SkipTimer, when int64) bool {
	pending := s.Cancel(t)
	s.insert(t, when)
	return pending
}

// Expire moves the current tick to now and fires, in order, every timer
// due by then. It returns the number fired. A timer that fire schedules
// waits for the next call. The complexity is O(1) expected per timer
// fired.
func (s *SkipList) Expire(now int64, fire func(*SkipTimer)) int {
	if now < s.now {
		return 0
	}
	s.now = now
	limit, fired := s.seq, 0
	for t := s.head[0]; t != nil && t.when <= now && t.seq <= limit; t = s.head[0] {
		s.steps.Add(1) // the least, read and compared
		s.Cancel(t)
		fired++
		fire(t)
	}
	s.steps.Add(1)
	return fired
}

// Next returns the earliest pending deadline and false if nothing is
// pending. The complexity is O(1).
func (s *SkipList) Next() (int64, bool) {
	if s.head[0] == nil {
		return 0, false
	}
	return s.head[0].when, true
}

// Len returns the number of pending timers. The complexity is O(1).
func (s *SkipList) Len() int { return s.n }

// countSteps makes s count its steps into c: a node passed or stopped at
// by a search is a step, and so is a link or an unlink at each level.
func (s *SkipList) countSteps(c *workload.Steps) { s.steps = c }

// Verify checks that every level is ordered and a sublist of the one
// below, and the count, and returns an error naming the first broken
// invariant. It is meant for tests.
func (s *SkipList) Verify() error {
	count := 0
	for t := s.head[0]; t != nil; t = t.next[0] {
		if !t.pending {
			return fmt.Errorf("skiplist: linked timer at tick %d is not pending", t.when)
		}
		if n := t.next[0]; n != nil && !t.less(n) {
			return fmt.Errorf("skiplist: tick %d before tick %d", t.when, n.when)
		}
		count++
	}
	if count != s.n {
		return fmt.Errorf("skiplist: Len is %d, but %d timers are linked", s.n, count)
	}
	for i := 1; i < skipMaxLevel; i++ {
		below := s.head[0]
		for t := s.head[i]; t != nil; t = t.next[i] {
			if i >= s.level {
				return fmt.Errorf("skiplist: level %d used, but level count is %d", i, s.level)
			}
			for below != nil && below != t {
				below = below.next[0]
			}
			if below == nil {
				return fmt.Errorf("skiplist: tick %d on level %d is missing below", t.when, i)
			}
		}
	}
	return nil
}
