package timewheel_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/timewheel/timewheel"
)

// The channel API as most Go code uses it, package time beside the
// package-level drop-ins (the default wheel), each pattern in one
// function so that one benchstat shows the ratio:
//
//	go test -run '^$' -bench 'Chan(Patterns|Floor)' -count 6 . > chan.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl chan.txt
//
// Each pattern has a floor (impl=floor, see floorTimer): the least any
// library must do for it, so that a reader sees how far each figure is
// from what is possible. Every floor allocates a channel as NewTimer
// does; where a value must wait for a goroutine, it pays the same
// hand-off.

// chanImpl is one contender of BenchmarkChanPatterns. Its timers and
// tickers are pointers in interfaces: no allocation of the benchmark's
// own.
type chanImpl struct {
	name     string
	newTimer func(time.Duration) (stopper, <-chan time.Time)
	// newLasting is newTimer for a timer that outlives a collection while
	// pending (churn), where it differs: the floor pays a special for it.
	// Nil for the others (see lasting).
	newLasting func(time.Duration) (stopper, <-chan time.Time)
	after      func(time.Duration) <-chan time.Time
	newTicker  func(time.Duration) interface{ Stop() }
}

var chanImpls = []chanImpl{
	{
		name: "time",
		newTimer: func(d time.Duration) (stopper, <-chan time.Time) {
			t := time.NewTimer(d)
			return t, t.C
		},
		after:     time.After,
		newTicker: func(d time.Duration) interface{ Stop() } { return time.NewTicker(d) },
	},
	{
		name: "timewheel",
		newTimer: func(d time.Duration) (stopper, <-chan time.Time) {
			t := timewheel.NewTimer(d)
			return t, t.C
		},
		after:     timewheel.After,
		newTicker: func(d time.Duration) interface{ Stop() } { return timewheel.NewTicker(d) },
	},
	floorChan,
}

// floorChan is the floor of every pattern (see floorTimer).
var floorChan = chanImpl{
	name: "floor",
	newTimer: func(d time.Duration) (stopper, <-chan time.Time) {
		t := floorStart(d, false, true)
		return t, t.C
	},
	newLasting: func(d time.Duration) (stopper, <-chan time.Time) {
		t := &floorHeld{t: floorStart(d, true, true)}
		return t, t.t.C
	},
	after:     func(d time.Duration) <-chan time.Time { return floorStart(d, true, false).C },
	newTicker: func(d time.Duration) interface{ Stop() } { return (*floorTicker)(floorStart(d, false, true)) },
}

// lasting starts a channel timer of impl that outlives a collection
// while pending: newLasting's, or newTimer's where the two are one.
func (impl chanImpl) lasting(d time.Duration) (stopper, <-chan time.Time) {
	if impl.newLasting != nil {
		return impl.newLasting(d)
	}
	return impl.newTimer(d)
}

// floorTimer is what impl=floor makes: the least a library must do for a
// timer in each pattern, and no more. It is not a timer: it never fires.
//   - Every timer reads the clock for its deadline and allocates its
//     channel and one object, which a wheel links (48 bytes, as an
//     AfterFunc Timer). NewTimer's object could be the caller's one
//     while the timer is young; After's caller holds the channel alone.
//   - The first timer of an empty wheel sets the wheel's one runtime
//     timer under a lock, and the Stop that empties it stops it, so that
//     an idle wheel never wakes (timer-stop, timer-blocked-stop,
//     ticker-stop).
//   - A lasting one, still pending after a collection (every After
//     dropped pending, the churn's), needs one runtime special on its
//     channel, the fewest that lets the collector tell the wheel it is
//     gone, made in a batch in the cheapest order (floorSpecial); the
//     wheel's object is then its own, apart from the caller's (churn).
//   - An After dropped pending is never stopped: its wheel is never
//     empty, so it does not count itself.
//
// Its insert and remove, O(1), count as an atomic add or a
// compare-and-swap.
type floorTimer struct {
	_       [2]unsafe.Pointer // a wheel's links
	when    atomic.Int64      // the deadline, in nanoseconds since floorEpoch; 0 once stopped
	C       <-chan time.Time
	counted bool // counted in floorPending: its Stop counts it out
}

// floorDriver is the floors' wheel's runtime timer, set while
// floorPending is above zero.
var floorDriver = struct {
	sync.Mutex
	t *time.Timer
}{t: time.AfterFunc(time.Hour, func() {})}

var (
	floorEpoch   = time.Now()
	floorPending atomic.Int64
)

func init() { floorDriver.t.Stop() }

// floorStart starts a floorTimer due in d: a lasting one with its
// special or not, counted in floorPending or not (see floorTimer).
func floorStart(d time.Duration, lasting, counted bool) *floorTimer {
	c := make(chan time.Time, 1)
	t := &floorTimer{C: c, counted: counted}
	t.when.Store(int64(time.Since(floorEpoch) + d))
	if lasting {
		floorSpecial(c)
	}
	if counted && floorPending.Add(1) == 1 {
		floorDriver.Lock()
		floorDriver.t.Reset(d)
		floorDriver.Unlock()
	}
	return t
}

// floorBatches holds the lasting floors' channels until a batch of 64 is
// full, per processor. Their specials are then made from the last down,
// the cheapest order: the runtime keeps a span's specials in a list by
// address, and a new one walks it from the lowest (see promoteLocked).
var floorBatches = sync.Pool{New: func() any { return new(floorBatch) }}

type floorBatch struct {
	n int
	c [64]chan time.Time
}

// floorSpecial makes the one special of a lasting floor's channel c, in
// a batch.
func floorSpecial(c chan time.Time) {
	b := floorBatches.Get().(*floorBatch)
	b.c[b.n] = c
	if b.n++; b.n == len(b.c) {
		for i := len(b.c) - 1; i >= 0; i-- {
			sinkWeak = weak.Make((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&b.c[i]))))
			b.c[i] = nil
		}
		b.n = 0
	}
	floorBatches.Put(b)
}

// floorHeld is the caller's object of a lasting floorTimer, which is the
// wheel's: 48 bytes, as a Timer.
type floorHeld struct {
	t *floorTimer
	_ [5]uintptr
}

func (h *floorHeld) Stop() bool                 { return h.t.Stop() }
func (h *floorHeld) Reset(d time.Duration) bool { return h.t.Reset(d) }

func (t *floorTimer) Stop() bool {
	if t.when.Swap(0) == 0 {
		return false
	}
	if t.counted && floorPending.Add(-1) == 0 {
		floorDriver.Lock()
		floorDriver.t.Stop()
		floorDriver.Unlock()
	}
	return true
}

// Reset postpones t as a lock-free Reset to a later deadline does: a
// clock read and a compare-and-swap.
func (t *floorTimer) Reset(d time.Duration) bool {
	old := t.when.Load()
	return t.when.CompareAndSwap(old, int64(time.Since(floorEpoch)+d)) && old != 0
}

// floorTicker is a floorTimer as a Ticker, whose Stop returns nothing.
type floorTicker floorTimer

func (t *floorTicker) Stop() { (*floorTimer)(t).Stop() }

// server answers each request on its channel, as a goroutine holding a
// connection or a lock does; it ends when reqs is closed.
func server(reqs chan chan int) {
	for r := range reqs {
		r <- 1
	}
}

// BenchmarkChanPatterns: the patterns of the table in the README, from
// one goroutine (and from every processor for after-ready):
//   - after-ready: select { case <-data: case <-After(5s): } with data
//     always ready, so that the timer is dropped pending;
//   - after-blocked: the same where the caller blocks until another
//     goroutine answers (a request with a timeout);
//   - timer-blocked-stop: NewTimer(5s), the same wait, then Stop, as code
//     that cleans up after itself does;
//   - timer-stop: NewTimer(d) and Stop at once, at 5 s and at an hour,
//     and at an hour with 1e3 timers pending due 10 to 60 s out, as in a
//     server, where the start and stop set no runtime timer;
//   - ticker-stop: NewTicker(1s) and Stop;
//   - reset: one Timer, Reset(5s) again and again;
//   - churn: 1e5 pending channel timers due 10 to 60 s out; stop a random
//     one and make another.
func BenchmarkChanPatterns(b *testing.B) {
	// Each pattern runs on package time and then on timewheel, so that
	// the two measurements of a row are taken side by side.
	// Each also reports the process's CPU time per operation (cpu-ns/op,
	// every thread, the collector's included), which counts work done on
	// other processors (promotion's, the collector's) that ns/op, wall
	// time, may not.
	for _, p := range chanPatterns {
		for _, impl := range chanImpls {
			b.Run("pattern="+p.name+"/impl="+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				var start time.Duration
				mark := func() { start = cpuTime() }
				mark()
				p.run(b, impl, mark)
				b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// ready is a channel always ready to receive from.
var ready = func() chan int {
	c := make(chan int)
	close(c)
	return c
}()

var chanPatterns = []struct {
	name string
	run  func(b *testing.B, impl chanImpl, mark func()) // mark: the set-up is done
}{
	{"after-ready", func(b *testing.B, impl chanImpl, mark func()) {
		for b.Loop() {
			select {
			case <-ready:
			case <-impl.after(5 * time.Second):
			}
		}
	}},
	{"after-ready-parallel", func(b *testing.B, impl chanImpl, mark func()) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				select {
				case <-ready:
				case <-impl.after(5 * time.Second):
				}
			}
		})
	}},
	{"after-blocked", func(b *testing.B, impl chanImpl, mark func()) {
		reqs := make(chan chan int)
		defer close(reqs)
		go server(reqs)
		answer := make(chan int)
		for b.Loop() {
			reqs <- answer
			select {
			case <-answer:
			case <-impl.after(5 * time.Second):
				b.Fatal("timed out")
			}
		}
	}},
	{"timer-blocked-stop", func(b *testing.B, impl chanImpl, mark func()) {
		reqs := make(chan chan int)
		defer close(reqs)
		go server(reqs)
		answer := make(chan int)
		for b.Loop() {
			t, c := impl.newTimer(5 * time.Second)
			reqs <- answer
			select {
			case <-answer:
			case <-c:
				b.Fatal("timed out")
			}
			t.Stop()
		}
	}},
	{"timer-stop/d=5s", func(b *testing.B, impl chanImpl, mark func()) {
		for b.Loop() {
			t, _ := impl.newTimer(5 * time.Second)
			t.Stop()
		}
	}},
	{"timer-stop/d=1h", func(b *testing.B, impl chanImpl, mark func()) {
		for b.Loop() {
			t, _ := impl.newTimer(time.Hour)
			t.Stop()
		}
	}},
	{"timer-stop/d=1h/pending=1e3", func(b *testing.B, impl chanImpl, mark func()) {
		timers, _ := pendingChan(impl, 1_000)
		defer stopAll(timers)
		mark()
		for b.Loop() {
			t, _ := impl.newTimer(time.Hour)
			t.Stop()
		}
	}},
	{"ticker-stop", func(b *testing.B, impl chanImpl, mark func()) {
		for b.Loop() {
			impl.newTicker(time.Second).Stop()
		}
	}},
	{"reset", func(b *testing.B, impl chanImpl, mark func()) {
		t, _ := impl.newTimer(5 * time.Second)
		defer t.Stop()
		for b.Loop() {
			t.Reset(5 * time.Second)
		}
	}},
	{"churn/n=1e5", func(b *testing.B, impl chanImpl, mark func()) {
		const n = 100_000
		timers, r := pendingChan(impl, n)
		defer stopAll(timers)
		mark()
		for b.Loop() {
			i := r.next() % n
			timers[i].Stop()
			timers[i], _ = impl.lasting(r.between(10*time.Second, 60*time.Second))
		}
	}},
}

// pendingChan starts n lasting channel timers of impl, due 10 to 60 s
// out, and returns them with the generator that drew their durations.
func pendingChan(impl chanImpl, n int) ([]stopper, *rng) {
	r := rng(n)
	timers := make([]stopper, n)
	for i := range timers {
		timers[i], _ = impl.lasting(r.between(10*time.Second, 60*time.Second))
	}
	return timers, &r
}

// BenchmarkChanMemory reports the heap bytes per pending NewTimer(1h)
// with 1e5 pending, what the user holds included (the *Timer), and the
// same for the floor's lasting timer (see floorTimer): its channel, the
// wheel's object and the caller's, and its one special.
func BenchmarkChanMemory(b *testing.B) {
	const n = 100_000
	for _, impl := range []struct {
		name string
		make func(time.Duration) stopper
	}{
		{"time", func(d time.Duration) stopper { return time.NewTimer(d) }},
		{"timewheel", func(d time.Duration) stopper { return timewheel.NewTimer(d) }},
		{"floor", func(d time.Duration) stopper { s, _ := floorChan.lasting(d); return s }},
	} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			var perTimer float64
			for b.Loop() {
				timers := make([]stopper, n)
				before := settledHeap()
				for i := range timers {
					timers[i] = impl.make(time.Hour + time.Duration(i))
				}
				perTimer = float64(heapInUse()-before) / n
				stopAll(timers)
			}
			b.ReportMetric(perTimer, "B/timer")
		})
	}
}

// settledHeap returns the heap in use once a collection frees nothing
// more: the last round's promoted nodes go a collection after their
// channels, once the channels' cleanups have unlinked them. Without it,
// a run of more than one round measured them freed as its own timers
// were made (184 B a timer where one round measured 321).
func settledHeap() int64 {
	last := heapInUse()
	for range 10 {
		runtime.Gosched()
		h := heapInUse()
		if h >= last {
			return h
		}
		last = h
	}
	return last
}

// sinkChan keeps the floors' channels from being optimised away.
var sinkChan chan time.Time

// BenchmarkChanFloor: what a library must do at least for each pattern,
// measured the same way:
//   - op=chan: allocate the channel of a timer and a 48-byte object for
//     the caller to hold (NewTimer + Stop, and Reset on a stopped one,
//     can do no less);
//   - op=chan+specials: the same, and the two runtime specials, a weak
//     pointer and a cleanup, that a timer dropped pending needs so that
//     the collector can tell the wheel it is gone (after-ready,
//     after-blocked, churn; see node): package time's runtime needs none,
//     since its heap holds a channel timer only while a goroutine is
//     blocked on it;
//   - op=chan+weak: with one special only, which is not enough (see node);
//   - op=chan+finalizer: with a finalizer only, the one special that
//     would do, tried and left out: the runtime runs finalizers too late
//     for a forgotten timer to go within three collections (see node);
//   - op=handoff: a request to another goroutine and its answer, with
//     the channel allocated (after-blocked, timer-blocked-stop);
//   - op=driver: what a wheel with one driver pays when its only timer is
//     started and stopped, a runtime timer set and stopped under a lock,
//     so that an idle wheel never wakes (timer-stop, ticker-stop on an
//     empty wheel; package time has no such timer).
func BenchmarkChanFloor(b *testing.B) {
	b.Run("op=chan", func(b *testing.B) {
		b.ReportAllocs()
		var keep *[6]int64
		for b.Loop() {
			sinkChan = make(chan time.Time, 1)
			keep = new([6]int64)
		}
		_ = keep
	})
	b.Run("op=chan+specials", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := make(chan time.Time, 1)
			p := (*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&c)))
			sinkWeak = weak.Make(p)
			runtime.AddCleanup(p, func(int) {}, 0)
			sinkChan = c
		}
	})
	b.Run("op=chan+weak", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := make(chan time.Time, 1)
			sinkWeak = weak.Make((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&c))))
			sinkChan = c
		}
	})
	b.Run("op=chan+finalizer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := make(chan time.Time, 1)
			n := new([6]int64)
			runtime.SetFinalizer((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&c))), func(*byte) { n[0]++ })
			sinkChan = c
		}
	})
	b.Run("op=handoff", func(b *testing.B) {
		reqs := make(chan chan int)
		defer close(reqs)
		go server(reqs)
		answer := make(chan int)
		b.ReportAllocs()
		for b.Loop() {
			sinkChan = make(chan time.Time, 1)
			reqs <- answer
			<-answer
		}
	})
	b.Run("op=driver", func(b *testing.B) {
		var mu sync.Mutex
		t := time.AfterFunc(time.Hour, func() {})
		defer t.Stop()
		t.Stop()
		b.ReportAllocs()
		for b.Loop() {
			mu.Lock()
			t.Reset(5 * time.Second)
			mu.Unlock()
			mu.Lock()
			t.Stop()
			mu.Unlock()
		}
	})
}

// sinkWeak keeps the floors' weak pointers from being optimised away.
var sinkWeak weak.Pointer[byte]
