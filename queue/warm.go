package queue

// Warming: loading the entries of a burst before they fire, so that their
// cache misses overlap.
//
// When Expire cascades or moves timers into a level-0 slot or a chunk's
// list, it keeps a hint every hintEvery (32) entries. As it fires the
// slot, it walks warmChains (16) of those chains side by side. Then it
// fires the 512 entries they led through while they are in the caches,
// and so on. A due list without hints it walks from both ends first. The
// walks only read.

// warmHints hands the hints of level-0 slot i, about to be spliced into
// the due list, to fireDue, and forgets them.
func (w *Wheel) warmHints(i int) {
	w.dueHints = append(w.dueHints, w.hints[i]...)
	w.dropHints(i)
}

// warmChains loads the entries of the chains that start at chains (at
// most warmChains of them), up to hintEvery of each, walking them side by
// side. A burst of cold timers due at one tick is a long chain of
// dependent cache misses; walked as many chains, the misses overlap.
func (w *Wheel) warmChains(chains []*Entry) {
	// The walk's positions are on the stack: stored in chains, each
	// step would go through the write barrier while the collector marks.
	var at [warmChains]*Entry
	n := copy(at[:], chains)
	var sum int64
	for range hintEvery {
		for j, e := range at[:n] {
			if e != nil {
				sum += e.load()
				at[j] = e.next // nil once cancelled: the chain stops
			}
		}
	}
	w.warmSum += sum
}

// dropHints forgets the hints of level-0 slot i.
func (w *Wheel) dropHints(i int) {
	clear(w.hints[i])
	w.hints[i], w.hintN[i] = w.hints[i][:0], 0
}

// warmChains is how many of the due list's hint chains fireDue warms at a
// time: enough misses to overlap, few enough entries to stay cached.
const warmChains = 16

// warm walks the list whose sentinel is s from both ends at once, loading
// every entry before fireDue unlinks them one by one. A list is a chain of
// dependent loads: one cache miss per entry when a burst of cold timers
// falls due. Two chains walked side by side keep two misses in flight, so
// the burst costs about half the memory latency. The walk changes nothing.
func (w *Wheel) warm(s *Entry) {
	var sum int64
	f, b := s.next, s.prev
	for f != b && f.prev != b {
		sum += f.load() ^ b.load()
		f, b = f.next, b.prev
	}
	w.warmSum += sum // keeps the loads
}
