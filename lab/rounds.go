package lab

import (
	"fmt"

	"github.com/timewheel/timewheel/lab/workload"
)

// Rounds is a single wheel with a rounds counter per timer. It is the
// first fix the reference documents give for libco's one-minute horizon,
// and the structure of Netty's HashedWheelTimer. A timer due at tick t
// goes to slot t mod slots with remainingRounds: the number of times the
// wheel will pass that slot before t. Each tick the worker walks the
// slot's whole list. It fires the timers whose rounds are spent and
// decrements the others' (HashedWheelBucket.expireTimeouts).
//
// Netty's wheel has 512 slots of 100 ms by default. This one has one slot
// per tick (1 ms), so that it is exact like the others. [NewRounds] takes
// the slot count (the lab uses Netty's 512).
//
// Schedule, Cancel and Reschedule are O(1). For every tick it passes,
// Expire walks the list of that tick's slot, due or not. A timer d ticks
// away is visited d/slots times before it fires. The cost of passing one
// tick is n/slots on average. The downside of this choice is that
// expiry is no longer O(1) (as the documents say): it grows with the
// number of timers pending and with how far away they are. Next walks the
// slots of one turn and, if nothing falls due in it, every timer: O(slots
// + n).
//
// Netty's worker visits every tick. An Expire that jumps more than
// [RoundsCatchUp] ticks ahead skips whole turns in which nothing falls
// due. It visits every timer once instead of once per turn, so that the
// suite's jumps to the end of time end. The lab's workloads never jump
// that far.
//
// A Rounds is not safe for concurrent use.
type Rounds struct {
	slots  []RoundsTimer // list sentinels; slot i holds deadlines ≡ i mod len(slots)
	mask   int64
	now    int64           // the last tick passed
	due    RoundsTimer     // sentinel: timers due at or before now, in order
	firing RoundsTimer     // sentinel: timers Expire has taken and is firing
	n      int             // pending timers, due list included
	steps  *workload.Steps // nil unless counting (see Structure)
}

// RoundsCatchUp is how far, in ticks, an Expire of a [Rounds] wheel may
// jump before it skips turns in which nothing falls due.
const RoundsCatchUp = 1 << 20

// RoundsTimer is a timer in a [Rounds] wheel: Netty's HashedWheelTimeout.
type RoundsTimer struct {
	prev, next *RoundsTimer // nil when not pending
	when       int64
	rounds     int64 // remainingRounds: passes of its slot left before it fires
}

// NewRounds returns an empty wheel of the given number of slots, a power
// of two, whose current tick is 0. It panics if slots is not a positive
// power of two.
func NewRounds(slots int) *Rounds {
	if slots <= 0 || slots&(slots-1) != 0 {
		panic(fmt.Sprintf("lab: NewRounds called with %d slots, not a power of two", slots))
	}
	r := &Rounds{slots: make([]RoundsTimer, slots), mask: int64(slots - 1)}
	for i := range r.slots {
		r.slots[i].initList()
	}
	r.due.initList()
	r.firing.initList()
	return r
}

func (s *RoundsTimer) initList() { s.prev, s.next = s, s }

func (s *RoundsTimer) pushBack(t *RoundsTimer) {
	t.prev, t.next = s.prev, s
	s.prev.next = t
	s.prev = t
}

func (t *RoundsTimer) unlink() {
	t.prev.next = t.next
	t.next.prev = t.prev
	t.prev, t.next = nil, nil
}

// Schedule adds a timer due at tick when and returns it. The complexity is
// O(1).
func (r *Rounds) Schedule(when int64) *RoundsTimer {
	t := &RoundsTimer{}
	r.insert(t, when)
	return t
}

// insert places t as Netty's transferTimeoutsToBuckets does: the next tick
// the wheel passes is now+1, so the timer's slot comes round
// (when-now-1)/slots times before its deadline.
func (r *Rounds) insert(t *RoundsTimer, when int64) {
	r.n++
	r.steps.Add(1)
	if when <= r.now {
		t.when, t.rounds = r.now, 0
		r.due.pushBack(t)
		return
	}
	t.when = when
	t.rounds = (when - r.now - 1) / int64(len(r.slots))
	r.slots[when&r.mask].pushBack(t)
}

// Cancel removes t if it is pending and reports whether it was. The
// complexity is O(1).
func (r *Rounds) Cancel(t *RoundsTimer) bool {
	r.steps.Add(1)
	if t.prev == nil {
		return false
	}
	t.unlink()
	r.n--
	return true
}

// Reschedule moves t to tick when, scheduling it anew if it was not
// pending, and reports whether it was pending. The complexity is O(1).
func (r *Rounds) Reschedule(t *RoundsTimer, when int64) bool {
	pending := r.Cancel(t)
	r.insert(t, when)
	return pending
}

// Expire passes every tick up to now, walking each tick's slot, and fires
// in order every timer due by then. It returns the number fired. A timer
// that fire makes due waits for the next call. The complexity is O(1 +
// length of the slot) per tick passed, and O(n + slots) per turn skipped
// in a jump beyond RoundsCatchUp.
func (r *Rounds) Expire(now int64, fire func(*RoundsTimer)) int {
	if now < r.now {
		return 0
	}
	fired := r.fireList(&r.due, fire)
	retry := r.now // when to try skipping turns again
	seen := 1      // the call
	for r.now < now {
		if r.n == 0 {
			break
		}
		if now-r.now > RoundsCatchUp && r.now >= retry && !r.skipTurns(now) {
			retry = r.now + int64(len(r.slots)) // a timer falls due within this turn
		}
		r.now++
		s := &r.slots[r.now&r.mask]
		seen++ // the slot, read
		for t := s.next; t != s; {
			seen++ // each timer in it, read, and moved or its rounds counted down
			next := t.next
			if t.rounds <= 0 { // t.when == r.now
				t.unlink()
				r.firing.pushBack(t)
			} else {
				t.rounds--
			}
			t = next
		}
		fired += r.fireList(&r.firing, fire)
	}
	r.now = now
	r.steps.Add(seen)
	return fired
}

// fireList fires and unlinks the timers of the list s, in order; fire may
// cancel or reschedule those still in it.
func (r *Rounds) fireList(s *RoundsTimer, fire func(*RoundsTimer)) int {
	if s == &r.due && s.next != s { // timers fire makes due wait for the next call
		r.firing.spliceFrom(s)
		s = &r.firing
	}
	fired := 0
	for s.next != s {
		t := s.next
		t.unlink()
		r.n--
		fired++
		fire(t)
	}
	r.steps.Add(fired)
	return fired
}

// spliceFrom moves every timer of the list from to the tail of s.
func (s *RoundsTimer) spliceFrom(from *RoundsTimer) {
	first, last := from.next, from.prev
	first.prev = s.prev
	s.prev.next = first
	last.next = s
	s.prev = last
	from.initList()
}

// skipTurns passes, at once, as many whole turns before now as the wheel
// can without any timer falling due, subtracting them from every timer's
// rounds. It reports whether it skipped any.
func (r *Rounds) skipTurns(now int64) bool {
	turns := (now - r.now) / int64(len(r.slots))
	for i := range r.slots {
		s := &r.slots[i]
		for t := s.next; t != s; t = t.next {
			turns = min(turns, t.rounds)
		}
	}
	r.steps.Add(len(r.slots) + r.n) // every slot and every timer, read
	if turns <= 0 {
		return false
	}
	r.steps.Add(len(r.slots) + r.n) // and again, each timer's rounds counted down
	for i := range r.slots {
		s := &r.slots[i]
		for t := s.next; t != s; t = t.next {
			t.rounds -= turns
		}
	}
	r.now += turns * int64(len(r.slots))
	return true
}

// Next returns the earliest pending deadline and false if nothing is
// pending. The complexity is O(slots) if a timer falls due within a turn,
// O(slots + n) otherwise.
func (r *Rounds) Next() (int64, bool) {
	if r.n == 0 {
		return 0, false
	}
	if r.due.next != &r.due || r.firing.next != &r.firing {
		return r.now, true
	}
	for d := int64(1); d <= int64(len(r.slots)); d++ {
		s := &r.slots[(r.now+d)&r.mask]
		for t := s.next; t != s; t = t.next {
			if t.rounds <= 0 {
				return r.now + d, true
			}
		}
	}
	best := int64(1<<63 - 1)
	for i := range r.slots {
		s := &r.slots[i]
		for t := s.next; t != s; t = t.next {
			best = min(best, t.when)
		}
	}
	return best, true
}

// Len returns the number of pending timers. The complexity is O(1).
func (r *Rounds) Len() int { return r.n }

// countSteps makes r count its steps into s: a timer linked, unlinked or
// fired is a step, and so is every slot Expire passes and every timer it
// reads there.
func (r *Rounds) countSteps(s *workload.Steps) { r.steps = s }

// Verify checks every list, every timer's slot and rounds, and the count,
// and returns an error naming the first broken invariant. It is meant for
// tests.
func (r *Rounds) Verify() error {
	count := 0
	for _, s := range []*RoundsTimer{&r.due, &r.firing} {
		for t := s.next; t != s; t = t.next {
			if t.when > r.now {
				return fmt.Errorf("rounds: due timer at tick %d after current tick %d", t.when, r.now)
			}
			count++
		}
	}
	slots := int64(len(r.slots))
	for i := range r.slots {
		s := &r.slots[i]
		for t := s.next; t != s; t = t.next {
			if t.next.prev != t {
				return fmt.Errorf("rounds: slot %d broken at tick %d", i, t.when)
			}
			if t.when&r.mask != int64(i) || t.when <= r.now {
				return fmt.Errorf("rounds: timer due %d in slot %d at tick %d", t.when, i, r.now)
			}
			if want := (t.when - r.now - 1) / slots; t.rounds != want {
				return fmt.Errorf("rounds: timer due %d has %d rounds left, want %d", t.when, t.rounds, want)
			}
			count++
		}
	}
	if count != r.n {
		return fmt.Errorf("rounds: Len is %d, but %d timers are linked", r.n, count)
	}
	return nil
}
