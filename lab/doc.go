// Package lab holds every classic timer structure from the reference
// documents behind the one [queue.Queue] interface, so that they can be
// tested by one suite and measured side by side (see cmd/timerlab):
//
//	name       structure                                   from
//	unordered  unordered doubly linked list                Node.js unrefList after joyent/node#8160
//	sorted     sorted doubly linked list                   Node.js unrefList before it
//	heap       binary min-heap on (deadline, start id)     libuv
//	heap4      4-ary min-heap                              the Go runtime
//	rbtree     red-black tree                              the textbook alternative (nginx, Linux hrtimers)
//	skiplist   skip list                                   the textbook alternative (Redis's zset layout)
//	libco      60,000 one-millisecond slots                libco's stTimeout_t, faithfully
//	rounds     one wheel, a rounds counter per timer       Netty's HashedWheelTimer
//	node       one list per duration, a heap of lists      Node.js lib/timers
//	wheel      hierarchical wheel                          the engine, [queue.Wheel]
//	linux      non-cascading levels, rounded deadlines     Linux's timer wheel since 4.8 (2016)
//
// Each structure is in its own file, and its type's documentation says
// where it comes from and what each operation costs. [Structures] lists
// them, one generic register call each, which binds the structure to its
// handle type for the conformance suite and for the measurements
// ([Contenders]) alike. Of what each declares to the conformance suite:
// only the linux wheel is late by design (by at most 8/63 of a timer's
// delay), and only libco fires out of order.
//
// A tick is one millisecond wherever a structure's geometry depends on it
// (libco's 60,000 slots are one minute, the linux wheel's levels are
// 1 ms, 8 ms, 64 ms, ...), as in the scheduler's default.
//
// Each structure counts its steps once it is made to. Its steps are the
// timers (or slots, or lists) it reads and compares, links, unlinks or
// moves. The counting pass of cmd/timerlab makes it count, through
// [Structure].NewCounted and its Contender. In the timed rounds its
// counter is nil and counts nothing. The engine has no counter of its own: the lab counts its steps
// from outside, from where its documentation says it files each timer.
// Each Structure carries the costs the reference documents claim for it,
// which the lab holds the counted steps to.
//
// Like the queues of package queue, none of these structures reads a clock,
// starts a goroutine or is safe for concurrent use.
package lab
