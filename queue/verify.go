package queue

// Verify: every invariant of the wheel, for tests.

import "fmt"

// Verify checks every invariant of the wheel and returns an error naming
// the first one broken. It walks every entry: it is meant for tests, with
// no Postpone running.
func (w *Wheel) Verify() error {
	w.ready()
	count := 0
	for _, s := range []*Entry{&w.due, &w.firing} {
		for e := s.next; e != s; e = e.next {
			if e.next.prev != e {
				return fmt.Errorf("due list broken at tick %d", e.load())
			}
			if e.load() < 0 {
				return fmt.Errorf("due list holds an entry that is not pending")
			}
			count++
		}
	}
	for k, l := range w.levels {
		for i := range l.slots {
			s := &l.slots[i]
			if got, want := l.occupied&(1<<i) != 0, !s.empty() || l.chunked&(1<<i) != 0; got != want {
				return fmt.Errorf("level %d slot %d: occupied bit %v, list non-empty or chunked %v", k, i, got, want)
			}
			if s.empty() && (l.adds[i] != 0 || l.big&(1<<i) != 0) {
				return fmt.Errorf("level %d slot %d is empty but counts %d timers filed", k, i, l.adds[i])
			}
			if sk, si, ok := s.sentinelSlot(); !ok || sk != k || si != i {
				return fmt.Errorf("level %d slot %d: sentinel names level %d slot %d", k, i, sk, si)
			}
			for e := s.next; e != s; e = e.next {
				when := e.load()
				if e.next.prev != e {
					return fmt.Errorf("level %d slot %d: list broken at tick %d", k, i, when)
				}
				if when <= w.now {
					return fmt.Errorf("level %d slot %d: entry due at %d, not after current tick %d", k, i, when, w.now)
				}
				// Postponed entries stay where they were filed: the slot
				// of the deadline may be later than the entry's, never
				// earlier, or the wheel would reach the entry too late.
				if start := w.slotStart(k, i); when < start {
					return fmt.Errorf("entry due at %d in level %d slot %d, which starts later, at %d", when, k, i, start)
				}
				count++
			}
		}
	}
	chunked, err := w.verifyChunks()
	if err != nil {
		return err
	}
	if count += chunked; count != w.n {
		return fmt.Errorf("Len is %d, but %d entries are linked", w.n, count)
	}
	if want := w.nextAhead(); w.ahead > want {
		return fmt.Errorf("work ahead is due at %d, but is set for %d", want, w.ahead)
	}
	for i := range w.hints {
		if w.levels[0].slots[i].empty() && (len(w.hints[i]) > 0 || w.hintN[i] != 0) {
			return fmt.Errorf("level 0 slot %d is empty but keeps %d hints", i, len(w.hints[i]))
		}
	}
	return w.verifyNext()
}

// verifyNext checks each slot's remembered earliest deadline: a lower
// bound of the slot's deadlines.
func (w *Wheel) verifyNext() error {
	for k, l := range w.levels {
		for i := range l.slots {
			if l.minN[i] == 0 {
				continue
			}
			if k == 0 {
				return fmt.Errorf("level 0 slot %d remembers an earliest deadline", i)
			}
			s := &l.slots[i]
			for e := s.next; e != s; e = e.next {
				if when := e.load(); when < l.min[i] {
					return fmt.Errorf("level %d slot %d remembers %d, but an entry is due at %d", k, i, l.min[i], when)
				}
			}
		}
	}
	return nil
}
