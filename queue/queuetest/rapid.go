package queuetest

import (
	"pgregory.net/rapid"

	"github.com/timewheel/timewheel/queue"
)

// opGen draws one operation; schedules are drawn twice as often as the rest
// so that queues fill up.
var opGen = rapid.Custom(func(t *rapid.T) Op {
	kind := OpKind(rapid.IntRange(0, int(numOpKinds)).Draw(t, "kind"))
	if kind == numOpKinds {
		kind = OpSchedule
	}
	return Op{
		Kind: kind,
		Arg:  offset(rapid.Uint8().Draw(t, "scale"), rapid.Uint64().Draw(t, "value")),
		Pick: rapid.IntRange(0, 1<<20).Draw(t, "pick"),
	}
})

// Property returns a rapid property that replays random operation
// sequences on queues from newQueue against the reference. Use it as
// rapid.Check(t, queuetest.Property(newQueue, opts)).
func Property[H comparable](newQueue func() queue.Queue[H], opts Options) func(*rapid.T) {
	return func(t *rapid.T) {
		ops := rapid.SliceOfN(opGen, 0, 300).Draw(t, "ops")
		Check(t, newQueue, opts, ops)
	}
}
