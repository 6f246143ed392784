package lab

import (
	"github.com/timewheel/timewheel/lab/workload"
	"github.com/timewheel/timewheel/queue"
)

// Structure describes one timer queue of the lab: where it comes from,
// what the reference documents claim it costs, and what it declares to
// the conformance suite. [Structures] makes them, one [register] call
// each.
type Structure struct {
	// Name is the short name used in tests ("engine=heap"), benchmarks and
	// cmd/timerlab's tables.
	Name string
	// Origin says where the structure comes from.
	Origin string
	// Claims are the costs of schedule, cancel and expire the reference
	// documents give a structure of its kind, which the lab holds its
	// counted steps to.
	Claims workload.Claims
	// Slack is the lateness it declares: a timer scheduled at tick at and
	// due at tick when may fire as late as when+Slack(at, when). Nil for
	// exact structures.
	Slack func(at, when int64) int64
	// Unordered is true if it fires every timer at its tick but not in
	// deadline and schedule order (libco).
	Unordered bool
	// Caveat says, in a few words, what its Slack or Unordered cost a
	// user; the lab's conclusion prints it beside a recommendation.
	Caveat string

	// New returns an empty queue of the structure with its handles as
	// any. It is for code that runs every structure through one path and
	// need not be fast, such as the conformance suite. Each call costs an
	// interface conversion more than the structure's own.
	New func() queue.Queue[any]
	// NewCounted is New for a queue that counts its steps into the Steps
	// it is given, as the lab's counting pass does (see
	// workload.CountSteps).
	NewCounted func(*workload.Steps) queue.Queue[any]
	// Contender is the structure as a row of the lab's measurements,
	// bound to its own handle type.
	Contender workload.Contender
}

// counting is a queue of the lab that counts its steps into the
// workload.Steps it is given; until then, and in the timed rounds, its
// counter is nil and counts nothing.
type counting[H comparable] interface {
	queue.Queue[H]
	countSteps(*workload.Steps)
}

// register completes s with the constructor of its queue. The compiler
// infers and checks the handle type H, and the queue must count its
// steps. One call adds a structure to the lab, its tests, its benchmarks
// and cmd/timerlab.
func register[H comparable, Q counting[H]](s Structure, newQueue func() Q) Structure {
	return registerCounted(s, newQueue, func(steps *workload.Steps) queue.Queue[H] {
		q := newQueue()
		q.countSteps(steps)
		return q
	})
}

// registerCounted is register for a queue whose steps newCounted counts
// from outside, with handles of its own: the engine, which has no counter
// (see wheelSteps).
func registerCounted[H, C comparable, Q queue.Queue[H]](s Structure, newQueue func() Q, newCounted func(*workload.Steps) queue.Queue[C]) Structure {
	typed := func() queue.Queue[H] { return newQueue() }
	s.New = func() queue.Queue[any] { return erased[H]{typed()} }
	s.NewCounted = func(steps *workload.Steps) queue.Queue[any] { return erased[C]{newCounted(steps)} }
	s.Contender = workload.Queue(s.Name, s.Origin, s.Claims, typed, workload.CountedQueue(newCounted))
	s.Contender.Caveat = s.Caveat
	return s
}

// claims returns the claims of schedule, cancel and expire.
func claims(schedule, cancel, expire workload.Claim) workload.Claims {
	return workload.Claims{Schedule: schedule, Cancel: cancel, Expire: expire}
}

// claim returns a claim of a source, its class in the lab's workload, and
// why the steps may part from it.
func claim(cost, source string, class workload.Class, why string) workload.Claim {
	return workload.Claim{Cost: cost, Source: source, Class: class, Why: why}
}

// The classes claims predict, and what the lab knows of two claims that
// several structures share.
const (
	o1   = workload.O1
	oLog = workload.OLogN
	on   = workload.ON

	riseHeap = "a random deadline sifts up O(1) levels on average; O(lg n) is the worst case"
	popHeap  = "each timer fired is a pop: the last leaf sifts down from the root through every level; O(1) is reading the least"
)

// o1Wheel is 004's claim for a time wheel, each of schedule, cancel and
// expire: "Time Wheel: O(1), O(1), O(1)" (002 says the same).
var o1Wheel = claim("O(1)", "004", o1, "")

// Structures returns every structure of the lab, the engine included, in
// the order of the reference documents: lists, heaps, trees, wheels. The
// claims come from these documents:
//   - 004's table: Linked List, Sorted Linked List, Min Heap, Time Wheel;
//   - 002 for the red-black tree and the skip list;
//   - 001 for libco;
//   - 004's account of Node.js's lists per duration.
//
// A claim of O(k …) for expire is per timer fired, k timers being due.
func Structures() []Structure {
	return []Structure{
		register(Structure{Name: "unordered", Origin: "unordered list (Node.js unrefList after node#8160)",
			Claims: claims(claim("O(1)", "004", o1, ""),
				claim("O(n)", "004", on, "each timer is its own node of a doubly linked list: unlinking it needs no search (the O(n) is the search)"),
				claim("O(n)", "004", on, ""))}, NewUnordered),
		register(Structure{Name: "sorted", Origin: "sorted list (Node.js unrefList before node#8160)",
			Claims: claims(claim("O(n)", "004", on, ""), claim("O(1)", "004", o1, ""), claim("O(1)", "004", o1, ""))}, NewSorted),
		register(Structure{Name: "heap", Origin: "binary min-heap on (deadline, start id) (libuv)",
			Claims: claims(claim("O(lg n)", "004", oLog, riseHeap), claim("O(1)", "004", o1, ""), claim("O(1)", "004", o1, popHeap))}, NewHeap),
		register(Structure{Name: "heap4", Origin: "4-ary min-heap (Go runtime)",
			Claims: claims(claim("O(lg n)", "004", oLog, riseHeap), claim("O(1)", "004", o1, ""), claim("O(1)", "004", o1, popHeap))}, NewHeap4),
		register(Structure{Name: "rbtree", Origin: "red-black tree with cached leftmost",
			Claims: claims(claim("O(log n)", "002", oLog, ""),
				claim("O(log n)", "002", oLog, "the handle is the node, so nothing is searched, and a delete rebalances in amortised O(1) steps"),
				claim("O(log n)", "002", oLog, "the leftmost node is cached (Linux's rb_root_cached), and deleting it rebalances in amortised O(1) steps"))}, NewRBTree),
		register(Structure{Name: "skiplist", Origin: "skip list, p=1/4 (Redis layout)",
			Claims: claims(claim("O(log n)", "002", oLog, ""), claim("O(log n)", "002", oLog, ""), claim("O(1)", "002", o1, ""))}, NewSkipList),
		register(Structure{Name: "libco", Origin: "libco: 60,000 slots of 1 ms, long timers clamped and re-added",
			Claims:    claims(claim("O(1)", "001", o1, ""), claim("O(1)", "001", o1, ""), claim("O(1)", "001", o1, "")),
			Unordered: true, Caveat: "fires the timers due at one Expire out of order"}, NewLibco),
		register(Structure{Name: "rounds", Origin: "one wheel of 512 slots, rounds per timer (Netty)",
			Claims: claims(o1Wheel, o1Wheel,
				claim("O(1)", "004", o1, "Netty's rounds wheel walks every timer of a slot each tick it passes, due or not: n/512 a tick (001: with rounds, expiry is no longer O(1))"))},
			func() *Rounds { return NewRounds(512) }),
		register(Structure{Name: "node", Origin: "a list per duration, a heap of lists (Node.js)",
			Claims: claims(claim("O(1)", "004", o1, ""), claim("O(1)", "004", o1, ""),
				claim("O(1)", "004", o1, "random durations give nearly every timer a list of its own: each timer fired re-sorts a heap of L ≤ 50,000 lists, O(log L)"))}, NewNode),
		registerCounted(Structure{Name: "wheel", Origin: "hierarchical wheel, 11 levels of 64 (the engine)",
			Claims: claims(o1Wheel, o1Wheel, o1Wheel)}, queue.NewWheel, newWheelSteps),
		register(Structure{Name: "linux", Origin: "non-cascading levels, late by ≤ 8/63 of the delay (Linux 4.8)",
			Claims: claims(o1Wheel, o1Wheel, o1Wheel), Slack: LinuxSlack, Caveat: "fires late by design, by up to 8/63 of a timer's delay"}, NewLinux),
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
