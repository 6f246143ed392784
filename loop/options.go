package loop

import (
	"fmt"
	"time"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/internal/nilarg"
)

// An Option configures a Loop made by New. The nil Option configures
// nothing.
type Option func(*config)

type config struct {
	clock clock.Clock
	tick  time.Duration
}

// defaults returns the configuration of New() and of the zero Loop.
func defaults() config {
	return config{clock: clock.Real(), tick: time.Millisecond}
}

// WithClock sets the clock the loop reads and sleeps on (default
// [clock.Real]). Tests pass a [clock.Virtual], or run the loop inside a
// testing/synctest bubble on the real clock. WithClock panics if c is nil
// or holds a nil pointer, such as a nil *clock.Virtual.
func WithClock(c clock.Clock) Option {
	if nilarg.Is(c) {
		panic("loop: WithClock: nil clock" + nilarg.Type(c))
	}
	return func(cfg *config) { cfg.clock = c }
}

// WithTick sets the loop's tick, the granularity of its timers (default
// one millisecond, as libuv's). Deadlines round up to the tick, so timers
// never fire early; a tick longer than a timeout makes the timer wait for
// the tick. WithTick panics if d is not positive.
func WithTick(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("loop: WithTick: non-positive tick %v", d))
	}
	return func(cfg *config) { cfg.tick = d }
}
