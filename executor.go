package timewheel

import (
	"runtime"
	"sync"
)

// Executor runs AfterFunc callbacks. When the wheel's driver wakes, each
// due shard hands its due callbacks to Execute one at a time, in deadline
// order; Execute should not block, since the next callbacks of that shard
// wait behind it. Shards due at the same wake fire in parallel, each on a
// goroutine of its own (on the real clock; see [WithShards]), so they
// call Execute concurrently: an Executor must be safe for concurrent use,
// and callbacks of different shards come in no particular order.
type Executor interface {
	Execute(f func())
}

// Inline returns an Executor that runs each callback on the driver, before
// the next: callbacks run one at a time, in order, and a slow one delays
// every timer behind it. It suits short callbacks and tests on a
// [clock.Virtual], where the callbacks have all run when Advance returns.
// A callback it runs must not wait for another timer of the same wheel
// (Sleep, or a receive from After): the goroutine that would fire that
// timer is the one waiting, and it never returns. Go gives a goroutine no
// identity to detect this by; hand such work to a goroutine or a Pool.
func Inline() Executor { return inline{} }

type inline struct{}

func (inline) Execute(f func()) { f() }

// DefaultWorkers is the size of a wheel's own pool unless WithWorkers says
// otherwise: four per processor, so that callbacks that block briefly do
// not hold up the rest.
func DefaultWorkers() int { return 4 * runtime.GOMAXPROCS(0) }

// Pool is the wheel's default Executor: a FIFO queue of callbacks served
// by at most a fixed number of goroutines. A worker starts when callbacks
// are queued and fewer than the limit run, and exits when the queue is
// empty, so an idle pool holds no goroutine and a burst of a million
// callbacks starts at most the limit. The queue is unbounded: the driver
// never blocks on it.
//
// A Pool is safe for concurrent use. Its zero value is a pool of
// DefaultWorkers() workers (the number GOMAXPROCS gives when it first
// queues a callback).
type Pool struct {
	limit        int // guarded by mu; 0 until a zero Pool first queues
	panicHandler func(any)
	workers      sync.WaitGroup

	mu        sync.Mutex
	queue     []func() // guarded by mu; pending callbacks from head on
	head      int      // guarded by mu
	running   int      // guarded by mu; live workers
	submitted uint64   // guarded by mu; callbacks queued, for Stats
}

// NewPool returns a pool of at most workers goroutines; workers < 1 means
// DefaultWorkers().
func NewPool(workers int) *Pool {
	if workers < 1 {
		workers = DefaultWorkers()
	}
	return &Pool{limit: workers}
}

// Execute queues f to run on a worker. It panics if f is nil. The
// complexity is O(1) amortised.
func (p *Pool) Execute(f func()) {
	if p == nil {
		panic("timewheel: Execute called on a nil *Pool")
	}
	if f == nil {
		panic("timewheel: Pool.Execute: nil func")
	}
	p.executeAll([]func(){f})
}

// executeAll queues fs in order under one lock.
func (p *Pool) executeAll(fs []func()) {
	p.mu.Lock()
	if p.limit == 0 {
		p.limit = DefaultWorkers() // a zero Pool
	}
	p.queue = append(p.queue, fs...)
	p.submitted += uint64(len(fs))
	start := min(p.limit-p.running, len(p.queue)-p.head)
	p.running += start
	p.workers.Add(start)
	p.mu.Unlock()
	for range start {
		go p.work()
	}
}

// Wait blocks until the queue is empty and every worker has exited. Like
// sync.WaitGroup's, it must not race with Execute: call it once nothing
// more will be queued (a wheel's Close does). Called from a callback that
// a Pool or a wheel's driver runs, where it could wait for itself, it
// panics instead of hanging.
func (p *Pool) Wait() {
	if p == nil {
		panic("timewheel: Wait called on a nil *Pool")
	}
	if inCallback() {
		panic("timewheel: Pool.Wait called from a timer callback, which it could wait for forever")
	}
	p.workers.Wait()
}

// work runs queued callbacks until the queue is empty. Under a burst a
// worker takes a run of callbacks per lock, a fair share of the queue but
// at most maxRun, so that a million callbacks cost thousands of lock
// round trips, not a million; with a short queue it takes one at a time,
// so a callback that blocks holds up no other.
func (p *Pool) work() {
	defer p.workers.Done()
	var buf [maxRun]func() // on the stack: a worker's start allocates no run
	run := buf[:0]
	for {
		p.mu.Lock()
		queued := len(p.queue) - p.head
		if queued == 0 {
			p.queue, p.head = p.queue[:0], 0
			p.running--
			p.mu.Unlock()
			return
		}
		take := min(max(queued/p.running/2, 1), maxRun)
		run = append(run[:0], p.queue[p.head:p.head+take]...)
		clear(p.queue[p.head : p.head+take])
		p.head += take
		p.mu.Unlock()
		for _, f := range run {
			p.run(f)
		}
		clear(run)
	}
}

const maxRun = 64

func (p *Pool) run(f func()) {
	if p.panicHandler != nil {
		defer func() {
			if r := recover(); r != nil {
				p.panicHandler(r)
			}
		}()
	}
	f()
}
