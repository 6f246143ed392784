// Package queuetest is the conformance suite every timer queue runs: table
// tests of the [queue.Queue] contract, and an oracle that replays any
// sequence of operations on a queue and on [queue.Reference] side by side
// and reports the first difference. Property tests (rapid) and fuzz targets
// feed it random sequences.
package queuetest

import (
	"fmt"
	"math"
	"testing"

	"github.com/timewheel/timewheel/queue"
)

// Options describes what a queue under test declares about itself.
type Options struct {
	// Slack, if not nil, is the lateness the queue declares: a timer
	// scheduled at tick at and due at tick when may wait until tick
	// when+Slack(at, when) to fire. Exact queues leave it nil. A queue with
	// slack is held to never early, exactly once, and its declared bound;
	// its order and Next are not compared with the reference.
	Slack func(at, when int64) int64
	// Unordered, if true, declares a queue that fires every timer at its
	// tick (within Slack, if any) but not always in deadline and schedule
	// order, as libco's wheel does with long timers. Its order and Next are
	// not compared with the reference.
	Unordered bool
}

// loose reports whether only the timing, not the order or Next, is held
// against the reference.
func (o Options) loose() bool { return o.Slack != nil || o.Unordered }

func (o Options) slack(at, when int64) int64 {
	if o.Slack == nil {
		return 0
	}
	return o.Slack(at, when)
}

// TB is the part of testing.TB the oracle needs; *testing.T,
// *testing.F's fuzz T and *rapid.T all provide it.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// verifier is implemented by queues that can check their own invariants.
type verifier interface{ Verify() error }

// Run runs the conformance suite on queues made by newQueue.
func Run[H comparable](t *testing.T, newQueue func() queue.Queue[H], opts Options) {
	t.Helper()
	for _, tc := range tableCases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, newQueue(), opts)
			tc.run(h)
			h.finish()
		})
	}
	t.Run("oracle", func(t *testing.T) {
		for seed := range int64(40) {
			Check(t, newQueue, opts, RandomOps(seed, 400))
		}
	})
}

// A case is one table test of the contract, written against handles by
// name so that it runs on any queue.
type tableCase struct {
	name string
	run  func(h stepper)
}

// stepper is the table tests' view of a harness, free of the handle type.
type stepper interface {
	schedule(name string, when int64)
	cancel(name string, want bool)
	reschedule(name string, when int64, want bool)
	expire(now int64, want ...string)
	next(want int64, ok bool)
	length(want int)
}

var tableCases = []tableCase{
	{"empty", func(h stepper) {
		h.length(0)
		h.next(0, false)
		h.expire(1000)
	}},
	{"one timer fires at its tick, not before", func(h stepper) {
		h.schedule("a", 10)
		h.next(10, true)
		h.length(1)
		h.expire(9)
		h.expire(10, "a")
		h.length(0)
		h.expire(11)
	}},
	{"equal deadlines fire in schedule order", func(h stepper) {
		for i := range 100 {
			h.schedule(fmt.Sprint(i), 500)
		}
		want := make([]string, 100)
		for i := range want {
			want[i] = fmt.Sprint(i)
		}
		h.expire(499)
		h.expire(500, want...)
	}},
	{"deadline order across levels", func(h stepper) {
		h.schedule("d", 1<<20)
		h.schedule("a", 3)
		h.schedule("c", 4096)
		h.schedule("b", 64)
		h.schedule("e", 1<<40)
		h.expire(1<<41, "a", "b", "c", "d", "e")
	}},
	{"cancel", func(h stepper) {
		h.schedule("a", 100)
		h.schedule("b", 100)
		h.cancel("a", true)
		h.cancel("a", false)
		h.length(1)
		h.expire(100, "b")
		h.cancel("b", false)
	}},
	{"reschedule counts as a new schedule", func(h stepper) {
		h.schedule("a", 50)
		h.schedule("b", 50)
		h.reschedule("a", 50, true)
		h.expire(50, "b", "a")
		h.reschedule("a", 70, false)
		h.next(70, true)
		h.expire(100, "a")
	}},
	{"due now and in the past", func(h stepper) {
		h.expire(1000)
		h.schedule("past", -5)
		h.schedule("now", 1000)
		h.schedule("later", 1001)
		h.next(1000, true)
		h.expire(1000, "past", "now")
		h.expire(1001, "later")
	}},
	{"far deadlines are never clamped", func(h stepper) {
		h.schedule("max", math.MaxInt64)
		h.schedule("far", 1<<62)
		h.schedule("day", 86_400_000)
		h.expire(86_399_999)
		h.expire(86_400_000, "day")
		h.next(1<<62, true)
		h.expire(1<<62 - 1)
		h.expire(math.MaxInt64-1, "far")
		h.expire(math.MaxInt64, "max")
	}},
	{"a jump fires everything on the way, in order", func(h stepper) {
		whens := []int64{7, 1 << 30, 64 * 64, 5, 1<<30 - 1, 63, 64, 65, 4095, 4097, 1 << 18}
		for i, w := range whens {
			h.schedule(fmt.Sprint(i), w)
		}
		h.expire(1<<30, "3", "0", "5", "6", "7", "8", "2", "9", "10", "4", "1")
	}},
	{"expire backwards changes nothing", func(h stepper) {
		h.expire(100)
		h.schedule("a", 150)
		h.expire(50)
		h.length(1)
		h.expire(150, "a")
	}},
}

// Check replays ops on a queue from newQueue and on a [queue.Reference],
// failing t at the first difference: a timer fired early, late (beyond the
// declared slack), twice, or in another order; a different Next or Len; a
// different result from Cancel or Reschedule.
func Check[H comparable](t TB, newQueue func() queue.Queue[H], opts Options, ops []Op) {
	t.Helper()
	q := newQueue()
	ref := queue.NewReference()
	o := &oracle[H]{t: t, q: q, ref: ref, opts: opts}
	for i, op := range ops {
		o.step = i
		o.apply(op)
		o.verify()
	}
	o.apply(Op{Kind: OpExpire, Arg: math.MaxInt64})
}
