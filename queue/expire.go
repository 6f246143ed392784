package queue

// Expire: reaching slots, cascading their timers down, and firing the due
// list, whose entries are taken off lazily.

// Expire moves the current tick forward to now, firing in order every timer
// due by then, and returns how many fired. Each timer is removed before fire
// is called with it, so fire may schedule, cancel or reschedule any timer
// (including the one it was given) but must not call Expire. A timer made
// due now by fire is fired by this call only if the current tick still has
// a slot to reach; otherwise it waits for the next Expire. Then, if Ahead
// is due by now, it moves up to 4,096 timers of big slots down ahead of
// time (see the type's documentation). A reached slot at level k > 0
// moves its timers down a level, unless they were moved ahead. The
// complexity is O(1) per timer fired, per slot reached and per timer
// moved ahead.
func (w *Wheel) Expire(now int64, fire func(*Entry)) int {
	if fire == nil {
		panic("timewheel/queue: Expire with a nil fire func")
	}
	w.ready()
	fired := w.fireDue(fire)
	for {
		k, i, ok := w.first()
		if !ok {
			break
		}
		start := w.slotStart(k, i)
		if start > now {
			break
		}
		w.now = start // never early: only now is start <= the caller's now
		l := w.levels[k]
		l.occupied &^= 1 << i
		if k == 0 {
			w.warmHints(i)
			w.due.spliceBack(&l.slots[i])
		} else {
			l.minN[i], l.adds[i] = 0, 0
			l.big &^= 1 << i
			if l.chunked&(1<<i) != 0 {
				w.settle(k, i)
			}
			w.cascade(&l.slots[i])
		}
		fired += w.fireDue(fire)
	}
	w.now = max(w.now, now)
	if w.ahead <= w.now {
		w.moveAhead()
	}
	return fired
}

// cascade empties the slot whose sentinel is s and places each of its
// entries again: in a lower level, or in the due list if due at the
// current tick. The slot's order is kept.
func (w *Wheel) cascade(s *Entry) {
	if s.empty() {
		return // its timers were all moved ahead
	}
	e, last := s.next, s.prev
	s.prev, s.next = s, s
	for {
		next := e.next
		when := e.load()
		if w.place(e, when) && when > w.now {
			if k, i := w.slotOf(when); k == 0 {
				if w.hintN[i]%hintEvery == 0 {
					w.hints[i] = append(w.hints[i], e)
				}
				w.hintN[i]++
			}
		}
		if e == last {
			return
		}
		e = next
	}
}

// fireDue fires the entries in the due list. Entries fire may add to the
// due list wait for the next call.
//
// It takes entries off the firing list lazily. While the collector marks
// during a burst, each pointer it writes goes through the write barrier.
// So claim only marks an entry not pending, and its links, and the
// list's to it, stay as they were. Every tidyEvery entries, tidy clears
// them and links the rest of the list to the sentinel. That is two
// pointer writes per entry and two per tidy, where unlinking each entry
// takes four.
//
// In between, the list is whole, so Stray and Cancel see every entry as
// before. An entry taken is not pending: Cancel returns false for it, and
// Insert may file it again. In this wheel, Insert tidies first, as every
// method that changes or walks a list does (see ready). In another wheel,
// see untangle. fireDue goes on from where tidy left the list when fire
// or claim changed it.
func (w *Wheel) fireDue(fire func(*Entry)) int {
	if w.due.empty() {
		return 0
	}
	w.firing.spliceBack(&w.due)
	chains := w.dueHints
	if len(chains) < 2 {
		// At most one chain: a short list, which the two-ended walk
		// covers; one chain would be walked hintEvery steps round it.
		clear(chains)
		chains = chains[:0]
		w.warm(&w.firing)
	}
	fired := 0
	s := &w.firing
	for j := 0; !s.empty(); j += warmChains {
		// A batch of chains warmed, then fired while in the caches.
		if j < len(chains) {
			w.warmChains(chains[j:min(j+warmChains, len(chains))])
		}
		e := s.next
		for n := 0; n < warmChains*hintEvery && e != s; n++ {
			next := e.next
			w.lazy = true
			if w.claim(e) { // taken off the list, lazily
				w.n--
				fired++
				fire(e)
			}
			if n%tidyEvery == tidyEvery-1 {
				w.tidy()
			}
			if !w.lazy {
				next = s.next // fire or claim tidied, and may have changed the list
			}
			e = next
		}
		w.tidy()
	}
	clear(chains)
	w.dueHints = chains[:0]
	return fired
}

// tidy finishes taking off the firing list the entries fireDue took off
// lazily (see fireDue).
func (w *Wheel) tidy() {
	tidyList(&w.firing)
	w.lazy = false
}

// tidyList clears the links of the entries taken lazily off the firing
// list whose sentinel is s (the first ones on it). Then it links the
// first entry still pending, or s, to s.
func tidyList(s *Entry) {
	e := s.next
	for e != s && e.when.Load() == idleWord {
		next := e.next
		e.prev, e.next = nil, nil
		e = next
	}
	s.next, e.prev = e, s
}

// untangle tidies the firing list of another Wheel that e was taken off
// lazily, so that e may be filed anew; e is not pending but has links. It
// walks back from e to that list's sentinel, past at most tidyEvery
// entries taken.
func untangle(e *Entry) {
	s := e.prev
	for s.when.Load() == idleWord {
		s = s.prev
	}
	tidyList(s)
}

// tidyEvery is how many entries fireDue takes off lazily between tidies:
// few enough that tidy finds them in the first-level cache. (Tidying at
// the end of each 512-entry batch made the bare engine's fires 20 %
// slower, outside a collection, than unlinking each; every 16, 3 %
// faster: BenchmarkBurst, window-ns/fire.)
const tidyEvery = 16

// claim takes e, the first pending entry on the firing list, for firing.
// It marks e not pending, which takes it off the list lazily (see
// fireDue), and returns true. If Postpone has moved e's deadline past the
// current tick, it files e again there and returns false. The compare-and-swap settles a race with Postpone either way.
func (w *Wheel) claim(e *Entry) bool {
	for {
		raw := e.when.Load()
		if isDead(raw) || pendingAt(raw) > w.now {
			w.tidy() // e is the first on the list
			e.unlink()
			w.place(e, e.load()) // which drops a dead entry
			return false
		}
		if e.when.CompareAndSwap(raw, idleWord) {
			return true
		}
	}
}
