package expiry

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/timewheel/timewheel"
)

// An Option configures a Map made by New. New panics on a nil Option.
// When two Options set the same thing, the later one wins.
type Option func(*config)

type config struct {
	wheel        *timewheel.Wheel
	granularity  time.Duration
	capacity     int
	onEvict      any // func(K, V, Reason); checked by New
	onInsert     any // func(K, V); checked by New
	onUpdate     any // func(K, V, V); checked by New
	inline       bool
	sliding      bool
	panicHandler func(any)
	logger       *slog.Logger
	refreshAfter time.Duration
	refreshLoad  any // Loader[K, V]; checked by New
	refreshErr   any // func(K, error); checked by New
	maxWeight    uint64
	weigher      any // func(K, V) uint64; checked by New
	ages         bool
}

// DefaultGranularity is the span of an expiry bucket unless
// [WithGranularity] says otherwise.
const DefaultGranularity = 100 * time.Millisecond

// WithWheel sets the wheel whose timers expire the entries and whose clock
// the map reads (default [timewheel.Default]). Tests pass a wheel on a
// [clock.Virtual]. WithWheel panics if w is nil or a zero Wheel, not made
// by timewheel.New. See [Map] for a wheel closed under the map.
func WithWheel(w *timewheel.Wheel) Option {
	if w == nil {
		panic("expiry: WithWheel: nil wheel")
	}
	w.Resolution() // panics, naming itself, on a zero Wheel
	return func(c *config) { c.wheel = w }
}

// WithGranularity sets the span of an expiry bucket (default
// [DefaultGranularity]; never less than the wheel's tick). Entries whose
// deadlines fall in one span share one wheel timer, and leave together at
// its end: a coarser granularity means fewer timers and later evictions.
// Readers are not affected: Get never returns an entry past its own
// deadline. WithGranularity panics if d is not positive.
func WithGranularity(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("expiry: WithGranularity: non-positive granularity %v", d))
	}
	return func(c *config) { c.granularity = d }
}

// WithCapacity bounds the map to n entries (default 0, no bound). Setting
// a new key in a full map evicts the entry closest to expiry first; see
// the package documentation. WithCapacity panics if n is negative.
func WithCapacity(n int) Option {
	if n < 0 {
		panic(fmt.Sprintf("expiry: WithCapacity: negative capacity %d (0 means no bound)", n))
	}
	return func(c *config) { c.capacity = n }
}

// WithOnEvict sets the callback told of every entry that leaves the map,
// with its key, its value and the [Reason]. Its K and V must be those of
// the Map, or New panics. Callbacks run outside the map's lock, one at a
// time, in order; see the package documentation. WithOnEvict panics if f
// is nil.
func WithOnEvict[K comparable, V any](f func(K, V, Reason)) Option {
	if f == nil {
		panic("expiry: WithOnEvict: nil callback")
	}
	return func(c *config) { c.onEvict = f }
}

// WithOnInsert sets the callback told of every key the map gains, with
// its value: a key without a live entry that Set, Compute, GetOrSet,
// SetIfAbsent, GetOrLoad or Restore gives one. Its K and V must be those
// of the Map, or New panics. It runs as eviction callbacks do, in one
// queue with them, in the order of the changes (see the package
// documentation). The Expired callback of a key's old entry comes
// before the insert of its new one. It is counted in Stats.Backlog. A map
// without it pays one predictable branch per new key. WithOnInsert panics
// if f is nil.
func WithOnInsert[K comparable, V any](f func(k K, v V)) Option {
	if f == nil {
		panic("expiry: WithOnInsert: nil callback")
	}
	return func(c *config) { c.onInsert = f }
}

// WithOnUpdate sets the callback told of every value that replaces a
// live one, with the old value and the new: by Set, Update, Compute,
// CompareAndSwap, a loader or Restore. The eviction callback, if any, is
// told of the old value too, with Reason Replaced, just before. Its K
// and V must be those of the Map, or New panics. It runs as WithOnInsert's
// callback does. WithOnUpdate panics if f is nil.
func WithOnUpdate[K comparable, V any](f func(k K, old, new V)) Option {
	if f == nil {
		panic("expiry: WithOnUpdate: nil callback")
	}
	return func(c *config) { c.onUpdate = f }
}

// WithInlineCallbacks makes eviction callbacks run on the goroutine that
// made the entries leave, after the map's lock is released. That is the
// caller of Set, Delete or Restore, or the wheel's executor for expiry,
// instead of the map's own delivery goroutine. With a [timewheel.Inline]
// executor on a [clock.Virtual], every callback due has run when Advance
// returns, which is what tests want. A callback that blocks then blocks
// that goroutine, and with an Inline executor every timer of the wheel.
func WithInlineCallbacks() Option {
	return func(c *config) { c.inline = true }
}

// WithPanicHandler sets what is called with the value of a panicking
// eviction callback, after it is recovered (default: the map's logger,
// [WithLogger], records it with a stack trace). Delivery goes on with the
// next callback. A handler that panics itself (say, to fail a test at the
// caller) ends that delivery with its panic, and the map goes on working.
// The callbacks not yet delivered come first in the next delivery. That
// starts at once, on a new goroutine; with WithInlineCallbacks, when the
// next entry leaves. WithPanicHandler panics if h is nil.
func WithPanicHandler(h func(any)) Option {
	if h == nil {
		panic("expiry: WithPanicHandler: nil handler")
	}
	return func(c *config) { c.panicHandler = h }
}

// WithLogger sets where the map logs what it cannot return to a caller:
// today only a panicking eviction callback, when no [WithPanicHandler] is
// set, logged at level Error with its value and stack. Without it the map
// logs to [slog.Default], read at the time of logging, so that a program's
// slog.SetDefault applies. WithLogger panics if l is nil.
func WithLogger(l *slog.Logger) Option {
	if l == nil {
		panic("expiry: WithLogger: nil logger")
	}
	return func(c *config) { c.logger = l }
}

// WithSliding makes the expiry sliding: a Get (or GetOrLoad) that finds an
// entry renews it as Touch does. An entry then leaves a ttl after its
// last read or write, not its last write. A read renews lazily, with no
// lock. It writes nothing when the renewal would move the deadline by no
// more than min(ttl/16, granularity), so the reads of a hot key cost no
// write. An entry read continually lives at least its ttl less that
// tolerance after each read. TTL and All do not renew.
func WithSliding() Option {
	return func(c *config) { c.sliding = true }
}

// WithRefresh makes the map reload values ahead of their expiry. A Get
// (or GetOrLoad, or GetOrSet) that finds a value written (set, loaded,
// updated) at least after ago returns it at once. It also starts a reload
// of the key by load on a goroutine of the map's. The reload's value and
// ttl are stored as a Set would store them, unless the key was written or
// left meanwhile. Until then, Gets return the old value and start no
// other reload of the key: one reload per key at a time, and at most
// [MaxRefreshes] per map. A reload that fails (an error, a ttl that is
// not positive, a panic) keeps the old value until it expires. It is
// counted in Stats.RefreshFailures and handed to the handler of
// [WithRefreshErrorHandler]; the next Get of the key tries again. The
// refresh age counts from the write, whatever Touch, SetTTL or a
// sliding Get does to the deadline, and applies to [NoTTL] entries too.
// The loader's context is cancelled by Close, which waits for the
// reloads running. Its K and V must be those of the Map, or New panics.
//
// A map with WithRefresh keeps, beside each entry, its refresh time (a
// small allocation per write) and looks it up on every hit; a map
// without pays one predictable branch per Get and per write.
// WithRefresh panics if after is not positive or load is nil.
func WithRefresh[K comparable, V any](after time.Duration, load Loader[K, V]) Option {
	if after <= 0 {
		panic(fmt.Sprintf("expiry: WithRefresh: non-positive refresh age %v", after))
	}
	if load == nil {
		panic("expiry: WithRefresh: nil loader")
	}
	return func(c *config) { c.refreshAfter, c.refreshLoad = after, load }
}

// WithRefreshErrorHandler sets what is told, on the reload's goroutine,
// of every reload of [WithRefresh] that failed, with the key and the
// error; a handler that panics is recovered for the panic handler. Its
// K must be the Map's, or New panics. WithRefreshErrorHandler panics if
// f is nil.
func WithRefreshErrorHandler[K comparable](f func(k K, err error)) Option {
	if f == nil {
		panic("expiry: WithRefreshErrorHandler: nil handler")
	}
	return func(c *config) { c.refreshErr = f }
}
