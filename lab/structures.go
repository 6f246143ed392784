package lab

import (
	"github.com/timewheel/timewheel/lab/workload"
	"github.com/timewheel/timewheel/queue"
)

// Structure describes one timer queue of the lab: where it comes from,
// what it claims to cost, and what it declares to the conformance suite.
// [Structures] makes them, one [register] call each.
type Structure struct {
	// Name is the short name used in tests ("engine=heap"), benchmarks and
	// cmd/timerlab's tables.
	Name string
	// Origin says where the structure comes from.
	Origin string
	// Schedule, Cancel and Expire are the costs claimed for it, in the
	// reference documents' terms; Expire is per call, with k timers due.
	Schedule, Cancel, Expire string
	// Slack is the lateness it declares: a timer scheduled at tick at and
	// due at tick when may fire as late as when+Slack(at, when). Nil for
	// exact structures.
	Slack func(at, when int64) int64
	// Unordered is true if it fires every timer at its tick but not in
	// deadline and schedule order (libco).
	Unordered bool

	// New returns an empty queue of the structure with its handles as
	// any, for code that runs every structure through one path and need
	// not be fast, such as the conformance suite: each call costs an
	// interface conversion more than the structure's own.
	New func() queue.Queue[any]
	// Contender is the structure as a row of the lab's measurements,
	// bound to its own handle type.
	Contender workload.Contender
}

// register completes s with the constructor of its queue, whose handle
// type H the compiler infers and checks: one call adds a structure to the
// lab, its tests, its benchmarks and cmd/timerlab.
func register[H comparable, Q queue.Queue[H]](s Structure, newQueue func() Q) Structure {
	typed := func() queue.Queue[H] { return newQueue() }
	s.New = func() queue.Queue[any] { return erased[H]{typed()} }
	s.Contender = workload.Queue(s.Name, s.Origin, workload.Claims{Schedule: s.Schedule, Cancel: s.Cancel, Expire: s.Expire}, typed)
	return s
}

// Structures returns every structure of the lab, the engine included, in
// the order of the reference documents: lists, heaps, trees, wheels.
func Structures() []Structure {
	return []Structure{
		register(Structure{Name: "unordered", Origin: "unordered list (Node.js unrefList after node#8160)",
			Schedule: "O(1)", Cancel: "O(1)", Expire: "O(n)"}, NewUnordered),
		register(Structure{Name: "sorted", Origin: "sorted list (Node.js unrefList before node#8160)",
			Schedule: "O(n)", Cancel: "O(1)", Expire: "O(k)"}, NewSorted),
		register(Structure{Name: "heap", Origin: "binary min-heap on (deadline, start id) (libuv)",
			Schedule: "O(log n)", Cancel: "O(log n)", Expire: "O(k log n)"}, NewHeap),
		register(Structure{Name: "heap4", Origin: "4-ary min-heap (Go runtime)",
			Schedule: "O(log n)", Cancel: "O(log n)", Expire: "O(k log n)"}, NewHeap4),
		register(Structure{Name: "rbtree", Origin: "red-black tree with cached leftmost",
			Schedule: "O(log n)", Cancel: "O(log n)", Expire: "O(k log n)"}, NewRBTree),
		register(Structure{Name: "skiplist", Origin: "skip list, p=1/4 (Redis layout)",
			Schedule: "O(log n)", Cancel: "O(log n)", Expire: "O(k)"}, NewSkipList),
		register(Structure{Name: "libco", Origin: "libco: 60,000 slots of 1 ms, long timers clamped and re-added",
			Schedule: "O(1)", Cancel: "O(1)", Expire: "O(k·d/60s)", Unordered: true}, NewLibco),
		register(Structure{Name: "rounds", Origin: "one wheel of 512 slots, rounds per timer (Netty)",
			Schedule: "O(1)", Cancel: "O(1)", Expire: "O(n/512) per tick"}, func() *Rounds { return NewRounds(512) }),
		register(Structure{Name: "node", Origin: "a list per duration, a heap of lists (Node.js)",
			Schedule: "O(1)*", Cancel: "O(1)*", Expire: "O(k log L)"}, NewNode),
		register(Structure{Name: "wheel", Origin: "hierarchical wheel, 11 levels of 64 (the engine)",
			Schedule: "O(1)", Cancel: "O(1)", Expire: "O(k)"}, queue.NewWheel),
		register(Structure{Name: "linux", Origin: "non-cascading levels, late by ≤ 8/63 of the delay (Linux 4.8)",
			Schedule: "O(1)", Cancel: "O(1)", Expire: "O(k)", Slack: LinuxSlack}, NewLinux),
	}
}

// Contenders returns every row of the lab: its structures in the order of
// Structures, then package time and the scheduler.
func Contenders() []workload.Contender {
	var cs []workload.Contender
	for _, s := range Structures() {
		cs = append(cs, s.Contender)
	}
	return append(cs, workload.Time(), workload.Scheduler())
}
