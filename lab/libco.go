package lab

import (
	"fmt"

	"github.com/timewheel/timewheel/lab/workload"
)

// Libco is libco's timer, faithfully (stTimeout_t in co_routine.cpp): a
// single wheel of 60,000 slots of one tick (one millisecond), each slot a
// list with head and tail pointers (stTimeoutItemLink_t), and nothing else.
//
// AddTimeout puts a timer in the slot diff = deadline - ullStart after the
// slot of ullStart (llStartIdx), appending to its list. A deadline a
// minute or more away does not fit: libco logs "CO_ERR: AddTimeout" and
// clamps diff to the last slot, 59,999. TakeAllTimeout joins the lists of
// every slot from ullStart to now (all 60,000 at most) and moves ullStart
// to now. co_eventloop then fires each timer taken whose deadline has
// come. It re-adds, by AddTimeout, each one taken before its time: the
// clamped ones. Nothing else is changed here: Schedule is AddTimeout, Cancel is
// RemoveFromLink, Expire is TakeAllTimeout followed by co_eventloop's
// loop over what it took.
//
// Schedule and Cancel are O(1). Expire costs O(1) per slot it passes, up
// to 60,000, and O(1) per timer it takes. A timer d ticks away is taken
// and re-added about d/60,000 times before it fires. So a timer a day out
// costs 1,440 re-adds. The 60,000 slots take 960 KB however few timers
// are pending. These are the drawbacks the reference documents name.
//
// Two things follow that the suite's contract does not allow, and they
// are what this structure declares (see [Structures]): it is never early
// and never late, but it does not keep order. A long timer re-added to a
// slot goes behind timers scheduled there while it waited. So equal
// deadlines no longer fire in schedule order. And one Expire that passes
// a whole minute takes the slots in slot order, where a re-added or
// clamped timer may sit ahead of an earlier one.
//
// libco has no Next: its event loop wakes every millisecond. Next here
// walks the slots from ullStart and the lists it meets until it is sure of
// the least deadline: O(60,000 + n) in the worst case.
//
// A Libco is not safe for concurrent use.
type Libco struct {
	items    []libcoLink // pItems: one list per slot
	start    int64       // ullStart: the tick of slot startIdx
	startIdx int64       // llStartIdx: grows without bound; taken modulo the slot count
	n        int
	taken    libcoLink       // the timeout list of co_eventloop: taken, not yet fired or re-added
	steps    *workload.Steps // nil unless counting (see Structure)
}

// LibcoSlots is the size of libco's wheel: 60 * 1000 slots of one
// millisecond, one minute.
const LibcoSlots = 60 * 1000

// libcoLink is stTimeoutItemLink_t: a list with head and tail.
type libcoLink struct {
	head, tail *LibcoTimer
}

// LibcoTimer is a timer in a [Libco] wheel: stTimeoutItem_t's links and
// expiry.
type LibcoTimer struct {
	prev, next *LibcoTimer
	link       *libcoLink // the list holding the timer; nil when not pending
	expire     int64      // ullExpireTime
}

// NewLibco returns an empty wheel whose current tick is 0: AllocTimeout,
// which allocates all 60,000 slots, 960 KB, at once.
func NewLibco() *Libco { return &Libco{items: make([]libcoLink, LibcoSlots)} }

// addTail is libco's AddTail.
func (l *libcoLink) addTail(t *LibcoTimer) {
	if l.tail != nil {
		l.tail.next = t
		t.next, t.prev = nil, l.tail
		l.tail = t
	} else {
		l.head, l.tail = t, t
		t.next, t.prev = nil, nil
	}
	t.link = l
}

// remove is libco's RemoveFromLink.
func (l *libcoLink) remove(t *LibcoTimer) {
	if t.prev == nil {
		l.head = t.next
		if l.head != nil {
			l.head.prev = nil
		}
	} else {
		t.prev.next = t.next
	}
	if t.next == nil {
		l.tail = t.prev
		if l.tail != nil {
			l.tail.next = nil
		}
	} else {
		t.next.prev = t.prev
	}
	t.prev, t.next, t.link = nil, nil, nil
}

// join is libco's Join: it moves every timer of other to the tail of l.
func (l *libcoLink) join(other *libcoLink) {
	if other.head == nil {
		return
	}
	for t := other.head; t != nil; t = t.next {
		t.link = l
	}
	if l.tail == nil {
		l.head, l.tail = other.head, other.tail
	} else {
		l.tail.next = other.head
		other.head.prev = l.tail
		l.tail = other.tail
	}
	other.head, other.tail = nil, nil
}

// add is AddTimeout: the slot diff ticks after ullStart, diff clamped to
// the last slot.
func (c *Libco) add(t *LibcoTimer) {
	c.steps.Add(1)
	diff := t.expire - c.start
	if diff >= LibcoSlots {
		diff = LibcoSlots - 1 // CO_ERR: AddTimeout; libco clamps and goes on
	}
	c.items[(c.startIdx+diff)%LibcoSlots].addTail(t)
}

// Schedule adds a timer due at tick when and returns it. A deadline before
// the current tick is due now (libco refuses it instead). The complexity
// is O(1).
func (c *Libco) Schedule(when int64) *LibcoTimer {
	t := &LibcoTimer{}
	c.schedule(t, when)
	return t
}

func (c *Libco) schedule(t *LibcoTimer, when int64) {
	t.expire = max(when, c.start)
	c.add(t)
	c.n++
}

// Cancel removes t if it is pending and reports whether it was. The
// complexity is O(1).
func (c *Libco) Cancel(t *LibcoTimer) bool {
	c.steps.Add(1)
	return c.cancel(t)
}

// cancel is Cancel, its step not counted: small enough to inline into
// Reschedule, which counts it.
func (c *Libco) cancel(t *LibcoTimer) bool {
	if t.link == nil {
		return false
	}
	t.link.remove(t)
	c.n--
	return true
}

// Reschedule moves t to tick when, scheduling it anew if it was not
// pending, and reports whether it was pending. The complexity is O(1).
func (c *Libco) Reschedule(t *LibcoTimer, when int64) bool {
	pending := c.cancel(t)
	c.steps.Add(1) // the unlink; the link is add's
	c.schedule(t, when)
	return pending
}

// takeAll is TakeAllTimeout: it joins the lists of the slots from ullStart
// to now, at most all of them, onto c.taken, and moves ullStart to now.
func (c *Libco) takeAll(now int64) {
	cnt := now - c.start + 1
	if cnt > LibcoSlots || cnt <= 0 { // cnt <= 0: the difference overflowed
		cnt = LibcoSlots
	}
	for i := range cnt {
		c.taken.join(&c.items[(c.startIdx+i)%LibcoSlots])
	}
	c.steps.Add(int(cnt)) // every slot passed, read
	c.start = now
	c.startIdx += cnt - 1
}

// Expire moves the current tick to now, fires every timer taken whose
// deadline has come and re-adds the others, as co_eventloop does. It
// returns the number fired. The order is the order of the slots, not of
// the deadlines (see the type's documentation). The complexity is O(1) per
// slot passed, at most 60,000, and O(1) per timer taken.
func (c *Libco) Expire(now int64, fire func(*LibcoTimer)) int {
	if now < c.start {
		return 0
	}
	c.takeAll(now)
	fired, taken := 0, 0
	for t := c.taken.head; t != nil; t = c.taken.head {
		taken++
		c.taken.remove(t)
		if now < t.expire { // taken before its time: add it back
			c.add(t)
			continue
		}
		c.n--
		fired++
		fire(t)
	}
	c.steps.Add(2*taken + fired + 1) // each timer taken, moved by Join and unlinked; each fired; the call
	return fired
}

// Next returns the earliest pending deadline and false if nothing is
// pending. It is not libco's (its loop polls every millisecond) and it
// walks slots and lists: the complexity is O(60,000 + n) in the worst case.
func (c *Libco) Next() (int64, bool) {
	if c.n == 0 {
		return 0, false
	}
	best := int64(1<<63 - 1)
	for t := c.taken.head; t != nil; t = t.next {
		best = min(best, t.expire)
	}
	// Every timer in the slot d ticks after ullStart is due at that tick
	// or, if it was clamped, later: no slot from the tick of best on can
	// hold anything earlier.
	for d := int64(0); d < LibcoSlots && c.start+d < best; d++ {
		for t := c.items[(c.startIdx+d)%LibcoSlots].head; t != nil; t = t.next {
			best = min(best, t.expire)
		}
	}
	return best, true
}

// Len returns the number of pending timers. The complexity is O(1).
func (c *Libco) Len() int { return c.n }

// countSteps makes c count its steps into s: a timer linked, unlinked,
// moved or fired is a step, and so is every slot Expire passes.
func (c *Libco) countSteps(s *workload.Steps) { c.steps = s }

// Verify checks every slot's list, that every timer sits in the slot of
// its deadline or, clamped, in an earlier one, and the count, and returns
// an error naming the first broken invariant. It walks all 60,000 slots:
// it is meant for tests.
func (c *Libco) Verify() error {
	count := 0
	check := func(l *libcoLink, d int64) error {
		var prev *LibcoTimer
		for t := l.head; t != nil; t = t.next {
			if t.link != l || t.prev != prev {
				return fmt.Errorf("libco: list of slot +%d broken at tick %d", d, t.expire)
			}
			if d >= 0 && t.expire != c.start+d && (t.expire < c.start+d || d == 0) {
				return fmt.Errorf("libco: timer due %d in the slot of tick %d", t.expire, c.start+d)
			}
			prev = t
			count++
		}
		if l.tail != prev {
			return fmt.Errorf("libco: tail of slot +%d is not its last timer", d)
		}
		return nil
	}
	if err := check(&c.taken, -1); err != nil {
		return err
	}
	base := c.startIdx % LibcoSlots
	for i := range c.items {
		l := &c.items[i]
		if l.head == nil && l.tail == nil {
			continue
		}
		d := (int64(i) - base + LibcoSlots) % LibcoSlots // ticks after ullStart
		if err := check(l, d); err != nil {
			return err
		}
	}
	if count != c.n {
		return fmt.Errorf("libco: Len is %d, but %d timers are linked", c.n, count)
	}
	return nil
}
