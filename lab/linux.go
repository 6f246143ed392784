package lab

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/timewheel/timewheel/lab/workload"
)

// Linux is a non-cascading wheel in the style of the timer wheel Linux has
// had since 4.8 (Thomas Gleixner, 2016, kernel/time/timer.c): levels of 64
// slots, each level's slots 8 times coarser than the last. A timer goes to
// the level whose range holds its delay, its deadline rounded up to that
// level's granularity, and it never moves again: no cascading, ever. The
// price is precision: a timer fires up to one granule late, and the
// granule grows with the delay. Timers this far out are mostly timeouts
// that are cancelled long before they fire, so the kernel traded their
// precision for O(1) everything.
//
// With one tick a millisecond:
//
//	level  granularity   delays
//	  0        1 ms        0 ms  –  63 ms
//	  1        8 ms       63 ms  – 504 ms
//	  2       64 ms      504 ms  –   4 s
//	  3      512 ms        4 s   –  32 s
//	  4      4.1 s        32 s   – 4.3 min
//	  5       33 s       4.3 min –  34 min
//	  6      4.4 min      34 min – 4.6 h
//	  7       35 min     4.6 h   –  37 h
//	  8      4.7 h        37 h   – 12 days
//	  9..20  ×8 each     up to the end of the int64 range
//
// Linux stops at level 8 (with HZ=1000) and clamps longer timers to the
// last level's reach, about 12 days. Here twelve more levels take every
// deadline an int64 can hold, so nothing is clamped. A timer whose
// rounded deadline would pass the end of the range waits in a list of its
// own for tick MaxInt64.
//
// A delay of d ≥ 63 ticks lands in the level whose granularity g is at
// most 8d/63. So the guarantee is: never early, late by at most 8/63 of
// the delay (12.7%), and by nothing below 63 ticks. That is the slack
// this structure declares (see [LinuxSlack]). Linux rounds up by a whole
// granule, since a jiffy may be half gone; ticks here are exact, so a
// deadline on a granule's boundary is kept.
//
// Schedule, Cancel and Reschedule are O(1); Expire is O(1) per timer
// fired plus O(levels) per distinct expiry reached; Next is O(levels). Next
// reports the tick at which the earliest timer will fire, its rounded
// deadline, which may be after the deadline it was given.
//
// A Linux is not safe for concurrent use.
type Linux struct {
	levels    [linuxLevels]linuxLevel
	levelMask uint32     // bit k set iff level k holds a timer
	due       LinuxTimer // sentinel: timers due at or before now
	end       LinuxTimer // sentinel: rounded past the int64 range; due at MaxInt64
	firing    LinuxTimer // sentinel: timers Expire has taken and is firing
	now       int64
	n         int
	steps     *workload.Steps // nil unless counting (see Structure)
}

const (
	linuxLevelBits = 6 // 64 slots per level
	linuxClkShift  = 3 // each level 8 times coarser
	linuxLevels    = 21
	linuxDue       = -1 // level of a timer in the due, end or firing list
)

type linuxLevel struct {
	occupied uint64 // bit i set iff slots[i] is not empty
	slots    [1 << linuxLevelBits]LinuxTimer
}

// LinuxTimer is a timer in a [Linux] wheel.
type LinuxTimer struct {
	prev, next *LinuxTimer // nil when not pending
	when       int64       // the deadline asked for
	expires    int64       // the deadline rounded up to the level's granularity
	level      int8
}

// LinuxSlack is the lateness a [Linux] wheel declares for a timer
// scheduled at tick at and due at tick when. It is none below a delay of
// 63 ticks, where level 0's granules are one tick. From 63 ticks on it is
// 8/63 of the delay, rounded down.
func LinuxSlack(at, when int64) int64 {
	d := when - at
	if d < 63 {
		return 0 // level 0: one-tick granules, exact
	}
	return d/63*8 + d%63*8/63
}

// NewLinux returns an empty wheel whose current tick is 0.
func NewLinux() *Linux {
	w := &Linux{}
	for k := range w.levels {
		for i := range w.levels[k].slots {
			w.levels[k].slots[i].initList()
		}
	}
	w.due.initList()
	w.end.initList()
	w.firing.initList()
	return w
}

func (s *LinuxTimer) initList() { s.prev, s.next = s, s }

func (s *LinuxTimer) empty() bool { return s.next == s }

func (s *LinuxTimer) pushBack(t *LinuxTimer) {
	t.prev, t.next = s.prev, s
	s.prev.next = t
	s.prev = t
}

// spliceFrom moves every timer of the list from to the tail of s.
func (s *LinuxTimer) spliceFrom(from *LinuxTimer) {
	if from.empty() {
		return
	}
	first, last := from.next, from.prev
	first.prev = s.prev
	s.prev.next = first
	last.next = s
	s.prev = last
	from.initList()
}

// linuxLevelOf returns the level for a delay d > 0: level k ≥ 1 holds
// delays from 63·8^(k-1) on.
func linuxLevelOf(d int64) int {
	if d < 63 {
		return 0
	}
	return min(1+(bits.Len64(uint64(d/63))-1)/linuxClkShift, linuxLevels-1)
}

// Schedule adds a timer due at tick when and returns it. The complexity is
// O(1).
func (w *Linux) Schedule(when int64) *LinuxTimer {
	t := &LinuxTimer{}
	w.insert(t, when)
	return t
}

func (w *Linux) insert(t *LinuxTimer, when int64) {
	w.n++
	w.steps.Add(1)
	if when <= w.now {
		t.when, t.expires, t.level = w.now, w.now, linuxDue
		w.due.pushBack(t)
		return
	}
	k := linuxLevelOf(when - w.now)
	shift := uint(k * linuxClkShift)
	q := when >> shift
	if when&(1<<shift-1) != 0 {
		q++ // round up: never early
	}
	t.when = when
	if q > math.MaxInt64>>shift {
		t.expires, t.level = math.MaxInt64, linuxDue
		w.end.pushBack(t)
		return
	}
	t.expires, t.level = q<<shift, int8(k)
	i := q & (1<<linuxLevelBits - 1)
	l := &w.levels[k]
	l.slots[i].pushBack(t)
	l.occupied |= 1 << i
	w.levelMask |= 1 << k
}

// Cancel removes t if it is pending and reports whether it was. The
// complexity is O(1).
func (w *Linux) Cancel(t *LinuxTimer) bool {
	if t.prev == nil {
		return false
	}
	w.unlink(t)
	return true
}

func (w *Linux) unlink(t *LinuxTimer) {
	w.steps.Add(1)
	t.prev.next = t.next
	t.next.prev = t.prev
	t.prev, t.next = nil, nil
	w.n--
	if t.level == linuxDue {
		return
	}
	k := int(t.level)
	i := t.expires >> (k * linuxClkShift) & (1<<linuxLevelBits - 1)
	l := &w.levels[k]
	if l.slots[i].empty() {
		l.occupied &^= 1 << i
		if l.occupied == 0 {
			w.levelMask &^= 1 << k
		}
	}
}

// Reschedule moves t to tick when, scheduling it anew if it was not
// pending, and reports whether it was pending. The complexity is O(1).
func (w *Linux) Reschedule(t *LinuxTimer, when int64) bool {
	pending := w.Cancel(t)
	w.insert(t, when)
	return pending
}

// nextExpiry returns the earliest rounded deadline in the levels. Level k
// holds expiries e with e/g in (now/g, now/g + 64], g its granularity: 64
// values, one per slot, so the first occupied slot after now's gives it.
func (w *Linux) nextExpiry() (int64, bool) {
	best, ok := int64(math.MaxInt64), false
	for m := w.levelMask; m != 0; m &= m - 1 {
		k := bits.TrailingZeros32(m)
		shift := uint(k * linuxClkShift)
		b := w.now >> shift
		from := (b + 1) & (1<<linuxLevelBits - 1)
		o := bits.TrailingZeros64(bits.RotateLeft64(w.levels[k].occupied, -int(from)))
		best, ok = min(best, (b+1+int64(o))<<shift), true
	}
	return best, ok
}

// Expire moves the current tick to now and fires every timer whose rounded
// deadline has come, expiry by expiry. It returns the number fired. A
// timer that fire makes due waits for the next call. The complexity is
// O(1) per timer fired plus O(levels) per distinct expiry reached.
func (w *Linux) Expire(now int64, fire func(*LinuxTimer)) int {
	if now < w.now {
		return 0
	}
	w.firing.spliceFrom(&w.due)
	fired := w.fireAll(fire)
	w.steps.Add(1) // the call
	for {
		e, ok := w.nextExpiry()
		if !ok || e > now {
			break
		}
		w.now = e
		for m := w.levelMask; m != 0; m &= m - 1 {
			k := bits.TrailingZeros32(m)
			shift := uint(k * linuxClkShift)
			if e&(1<<shift-1) != 0 {
				continue // e is not on this level's granule
			}
			i := e >> shift & (1<<linuxLevelBits - 1)
			l := &w.levels[k]
			if l.occupied&(1<<i) != 0 {
				w.steps.Add(1) // the slot, taken
				w.firing.spliceFrom(&l.slots[i])
				l.occupied &^= 1 << i
				if l.occupied == 0 {
					w.levelMask &^= 1 << k
				}
			}
		}
		fired += w.fireAll(fire)
	}
	w.now = now
	if now == math.MaxInt64 {
		w.firing.spliceFrom(&w.end)
		fired += w.fireAll(fire)
	}
	return fired
}

// fireAll fires the firing list in order; fire may cancel or reschedule
// timers still in it.
func (w *Linux) fireAll(fire func(*LinuxTimer)) int {
	fired := 0
	for !w.firing.empty() {
		t := w.firing.next
		t.level = linuxDue // its slot is gone: unlink must not touch the bitmap
		// (a timer fire cancels further down the list still has its level;
		// unlink then finds its old slot empty, or refilled, and is right
		// either way)
		w.unlink(t)
		fired++
		fire(t)
	}
	return fired
}

// Next returns the tick at which the earliest pending timer will fire,
// its rounded deadline, and false if nothing is pending. The complexity is
// O(levels).
func (w *Linux) Next() (int64, bool) {
	if w.n == 0 {
		return 0, false
	}
	if !w.due.empty() || !w.firing.empty() {
		return w.now, true
	}
	if e, ok := w.nextExpiry(); ok {
		return e, true
	}
	return math.MaxInt64, true
}

// Len returns the number of pending timers. The complexity is O(1).
func (w *Linux) Len() int { return w.n }

// countSteps makes w count its steps into s: a timer linked or unlinked
// (to cancel it or to fire it) is a step, and so is every slot Expire
// takes and each call.
func (w *Linux) countSteps(s *workload.Steps) { w.steps = s }

// Verify checks the invariants and returns an error naming the first
// broken one. Every timer must sit in the slot of its rounded deadline at
// its level, and no deadline may be rounded down. The bitmaps and the
// count must agree with the timers. It is
// meant for tests.
func (w *Linux) Verify() error {
	count := 0
	for _, s := range []*LinuxTimer{&w.due, &w.firing, &w.end} {
		for t := s.next; t != s; t = t.next {
			count++
		}
	}
	for k := range w.levels {
		l := &w.levels[k]
		g := int64(1) << (k * linuxClkShift)
		if (l.occupied != 0) != (w.levelMask&(1<<k) != 0) {
			return fmt.Errorf("linux: level %d mask bit disagrees with its slots", k)
		}
		for i := range l.slots {
			s := &l.slots[i]
			if (l.occupied&(1<<i) != 0) == s.empty() {
				return fmt.Errorf("linux: level %d slot %d: occupied bit disagrees", k, i)
			}
			for t := s.next; t != s; t = t.next {
				switch {
				case t.next.prev != t || int(t.level) != k:
					return fmt.Errorf("linux: level %d slot %d broken at tick %d", k, i, t.when)
				case t.expires < t.when || t.expires-t.when >= g || t.expires%g != 0:
					return fmt.Errorf("linux: tick %d rounded to %d at granularity %d", t.when, t.expires, g)
				case t.expires>>(k*linuxClkShift)&63 != int64(i):
					return fmt.Errorf("linux: expiry %d in level %d slot %d", t.expires, k, i)
				case t.expires <= w.now || (t.expires-w.now-1)>>(k*linuxClkShift) >= 64:
					return fmt.Errorf("linux: expiry %d out of level %d's reach at tick %d", t.expires, k, w.now)
				}
				count++
			}
		}
	}
	if count != w.n {
		return fmt.Errorf("linux: Len is %d, but %d timers are linked", w.n, count)
	}
	return nil
}
