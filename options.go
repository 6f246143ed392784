package timewheel

import (
	"fmt"
	"github.com/timewheel/timewheel/internal/nilarg"
	"time"

	"github.com/timewheel/timewheel/clock"
)

// An Option configures a Wheel made by New.
type Option func(*config)

type config struct {
	tick         time.Duration
	clock        clock.Clock
	exec         Executor
	workers      int
	shards       int
	panicHandler func(any)
}

// WithTick sets the wheel's tick, the granularity of its deadlines
// (default one millisecond). Deadlines round up to the tick: a coarser tick
// means fewer wakeups and later fires. WithTick panics if d is not
// positive.
func WithTick(d time.Duration) Option {
	if d <= 0 {
		panic(badDuration("WithTick", "tick", d))
	}
	return func(c *config) { c.tick = d }
}

// WithClock sets the clock the wheel reads and sleeps on (default
// [clock.Real]). Tests pass a [clock.Virtual]. A wheel on any clock but
// the real one (or a [clock.RealTime] in step with it) has one shard
// unless [WithShards] says otherwise.
// WithClock panics if c is nil or holds a nil pointer.
func WithClock(c clock.Clock) Option {
	if nilarg.Is(c) {
		panic("timewheel: WithClock: nil clock")
	}
	return func(cfg *config) { cfg.clock = c }
}

// WithExecutor sets what runs AfterFunc callbacks (default: the wheel's
// own [Pool] of at most [DefaultWorkers] goroutines). [Inline] runs them
// on the driver; any other Executor gets them in deadline order. Close
// waits only for the wheel's own pool. WithExecutor panics if e is nil or
// holds a nil pointer.
func WithExecutor(e Executor) Option {
	if nilarg.Is(e) {
		panic("timewheel: WithExecutor: nil executor")
	}
	return func(c *config) { c.exec = e }
}

// WithWorkers sets the size of the wheel's own pool: at most n callbacks
// run at once (default [DefaultWorkers]). It has no effect with
// WithExecutor. WithWorkers panics if n is less than 1.
func WithWorkers(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("timewheel: WithWorkers: fewer than one worker: %d", n))
	}
	return func(c *config) { c.workers = n }
}

// WithPanicHandler makes the wheel recover a panicking AfterFunc callback
// and call h with the value, instead of crashing the program as
// time.AfterFunc would. The wheel and every other timer carry on. h runs on
// the goroutine the callback ran on. WithPanicHandler panics if h is nil.
func WithPanicHandler(h func(any)) Option {
	if h == nil {
		panic("timewheel: WithPanicHandler: nil handler")
	}
	return func(c *config) { c.panicHandler = h }
}

// WithShards splits the wheel into n engines, each with its own lock. The
// default, on the real clock or a [clock.RealTime], is one per processor:
// runtime.GOMAXPROCS(0) when the wheel is made. With any other clock it is
// one, so that a test on a [clock.Virtual] fires same-tick timers in one
// exact order from run to run. WithShards(1) makes one lock for the whole
// wheel.
//
// A new timer goes to the shard of the processor its goroutine runs on,
// and belongs to it for life: Stop and Reset go to the timer's shard. The
// wheel's one driver sleeps until the earliest deadline of all the
// shards, so more shards cost no more wakeups. Shards due at the same
// wake fire in parallel, on the clocks that default to one per processor.
// Each shard's engine takes about 32 KB.
//
// The downside of more than one shard is order. Timers on different
// shards that fall due at the same tick fire in no particular order.
// (Within a shard, schedule order holds: see the package doc.) That does
// not matter to goroutines that start timers concurrently: their calls
// have no order to keep. Use WithShards(1) when one goroutine's timers
// must fire in start order whatever processor it moves to. WithShards
// panics if n is less than 1 or more than 65,536.
func WithShards(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("timewheel: WithShards: fewer than one shard: %d", n))
	}
	if n > maxShards {
		panic(fmt.Sprintf("timewheel: WithShards: more than %d shards: %d", maxShards, n))
	}
	return func(c *config) { c.shards = n }
}

// maxShards bounds WithShards: each shard holds an engine of about
// 32 KB, and a wheel with more shards than any machine has processors
// only costs memory.
const maxShards = 1 << 16
