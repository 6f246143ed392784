package loop

import (
	"fmt"
	"time"

	"github.com/timewheel/timewheel/clock"
)

// An Option configures a Loop made by New.
type Option func(*config)

type config struct {
	clock clock.Clock
	tick  time.Duration
}

// WithClock sets the clock the loop reads and sleeps on (default
// [clock.Real]). Tests pass a [clock.Virtual], or run the loop inside a
// testing/synctest bubble on the real clock. WithClock panics if c is nil.
func WithClock(c clock.Clock) Option {
	if c == nil {
		panic("loop: WithClock: nil clock")
	}
	return func(cfg *config) { cfg.clock = c }
}

// WithTick sets the loop's tick, the granularity of its timers (default
// one millisecond, as libuv's). Deadlines round up to the tick, so timers
// never fire early. WithTick panics if d is not positive.
func WithTick(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("loop: WithTick: non-positive tick %v", d))
	}
	return func(cfg *config) { cfg.tick = d }
}
