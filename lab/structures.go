package lab

import "github.com/timewheel/timewheel/queue"

// Structure describes one timer queue of the lab: where it comes from,
// what it claims to cost, and what it declares to the conformance suite.
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
	// New returns an empty queue, a queue.Queue[H] for the structure's own
	// handle type H.
	New func() any
}

// Structures returns every structure of the lab, the engine included, in
// the order of the reference documents: lists, heaps, trees, wheels.
func Structures() []Structure {
	return []Structure{
		{Name: "unordered", Origin: "unordered list (Node.js unrefList after node#8160)",
			Schedule: "O(1)", Cancel: "O(1)", Expire: "O(n)",
			New: func() any { return queue.Queue[*UnorderedTimer](NewUnordered()) }},
		{Name: "sorted", Origin: "sorted list (Node.js unrefList before node#8160)",
			Schedule: "O(n)", Cancel: "O(1)", Expire: "O(k)",
			New: func() any { return queue.Queue[*SortedTimer](NewSorted()) }},
		{Name: "heap", Origin: "binary min-heap on (deadline, start id) (libuv)",
			Schedule: "O(log n)", Cancel: "O(log n)", Expire: "O(k log n)",
			New: func() any { return queue.Queue[*HeapTimer](NewHeap()) }},
		{Name: "heap4", Origin: "4-ary min-heap (Go runtime)",
			Schedule: "O(log n)", Cancel: "O(log n)", Expire: "O(k log n)",
			New: func() any { return queue.Queue[*Heap4Timer](NewHeap4()) }},
		{Name: "rbtree", Origin: "red-black tree with cached leftmost",
			Schedule: "O(log n)", Cancel: "O(log n)", Expire: "O(k log n)",
			New: func() any { return queue.Queue[*RBTimer](NewRBTree()) }},
		{Name: "skiplist", Origin: "skip list, p=1/4 (Redis layout)",
			Schedule: "O(log n)", Cancel: "O(log n)", Expire: "O(k)",
			New: func() any { return queue.Queue[*SkipTimer](NewSkipList()) }},
		{Name: "libco", Origin: "libco: 60,000 slots of 1 ms, long timers clamped and re-added",
			Schedule: "O(1)", Cancel: "O(1)", Expire: "O(k·d/60s)", Unordered: true,
			New: func() any { return queue.Queue[*LibcoTimer](NewLibco()) }},
		{Name: "rounds", Origin: "one wheel of 512 slots, rounds per timer (Netty)",
			Schedule: "O(1)", Cancel: "O(1)", Expire: "O(n/512) per tick",
			New: func() any { return queue.Queue[*RoundsTimer](NewRounds(512)) }},
		{Name: "node", Origin: "a list per duration, a heap of lists (Node.js)",
			Schedule: "O(1)*", Cancel: "O(1)*", Expire: "O(k log L)",
			New: func() any { return queue.Queue[*NodeTimer](NewNode()) }},
		{Name: "wheel", Origin: "hierarchical wheel, 11 levels of 64 (the engine)",
			Schedule: "O(1)", Cancel: "O(1)", Expire: "O(k)",
			New: func() any { return queue.Queue[*queue.Entry](queue.NewWheel()) }},
		{Name: "linux", Origin: "non-cascading levels, late by ≤ 8/63 of the delay (Linux 4.8)",
			Schedule: "O(1)", Cancel: "O(1)", Expire: "O(k)", Slack: LinuxSlack,
			New: func() any { return queue.Queue[*LinuxTimer](NewLinux()) }},
	}
}

// compile-time checks that every structure is a queue.
var (
	_ queue.Queue[*UnorderedTimer] = (*Unordered)(nil)
	_ queue.Queue[*SortedTimer]    = (*Sorted)(nil)
	_ queue.Queue[*HeapTimer]      = (*Heap)(nil)
	_ queue.Queue[*Heap4Timer]     = (*Heap4)(nil)
	_ queue.Queue[*RBTimer]        = (*RBTree)(nil)
	_ queue.Queue[*SkipTimer]      = (*SkipList)(nil)
	_ queue.Queue[*LibcoTimer]     = (*Libco)(nil)
	_ queue.Queue[*RoundsTimer]    = (*Rounds)(nil)
	_ queue.Queue[*NodeTimer]      = (*Node)(nil)
	_ queue.Queue[*LinuxTimer]     = (*Linux)(nil)
)
