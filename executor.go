package timewheel

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/timewheel/timewheel/internal/lockcheck"
)

// Executor runs AfterFunc callbacks. When the wheel's driver wakes, each
// due shard hands its due callbacks to Execute one at a time, in deadline
// order. Execute should not block: the shard's next callbacks wait behind
// it. Shards due at the same wake fire in parallel (see [WithShards]), so
// they call Execute concurrently. So an Executor must be safe for
// concurrent use, and callbacks of different shards come in no particular
// order.
type Executor interface {
	Execute(f func())
}

// Inline returns an Executor that runs each callback on the driver, before
// the next. Callbacks run one at a time, in order, and a slow one delays
// every timer behind it. It suits short callbacks and tests on a
// [clock.Virtual], where the callbacks have all run when Advance returns.
// A callback it runs must not wait for another timer of the same wheel
// (Sleep, or a receive from After). The goroutine that would fire that
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
// are queued and fewer than the limit run. It exits when the queue is
// empty. So an idle pool holds no goroutine, and a burst of a million
// callbacks starts at most the limit. The queue is unbounded: the driver
// never blocks on it.
//
// The cost is memory: the pool keeps every 4 KB chunk of its queue it has
// had, as a slice keeps its capacity. That is 4 KB per 509 callbacks of
// its biggest backlog, on 64-bit platforms.
//
// A Pool is safe for concurrent use. Its zero value is a pool of
// DefaultWorkers() workers (the number GOMAXPROCS gives when it first
// queues a callback).
type Pool struct {
	limit        int // guarded by mu; 0 until a zero Pool first queues
	panicHandler func(any)
	workers      sync.WaitGroup

	mu        sync.Mutex
	queue     chunkList // guarded by mu; callbacks queued, from queue.head's taken on
	free      *chunk    // guarded by mu; emptied chunks, linked by next
	running   int       // guarded by mu; live workers
	submitted uint64    // guarded by mu; callbacks queued, for Stats
}

// chunk is a run of up to chunkLen callbacks in a chunkList: filled from
// fs[0] on, run from fs[taken] on. A chunk that is full, or that a
// worker has emptied, is not filled again until it comes off the free
// list.
//
// A worker returns the chunks it has run to the pool's free list. A
// wheel's shard fills chunks from that list with the callbacks it expires
// at a wake, and hands them to the pool as they are (executeAll). So a
// callback is written once, by the shard, and cleared once, by the worker
// that takes it. A burst allocates only the chunks its backlog needs,
// none once a burst as big has run, and never copies a queue to grow it.
// This matters under a burst: while the collector marks, each pointer
// written to the heap goes through the write barrier, and allocating is
// what starts the collector.
type chunk struct {
	fs    [chunkLen]func()
	n     int    // callbacks in fs
	taken int    // callbacks a worker took, each cleared in fs
	next  *chunk // the next chunk of its list
}

// chunkLen makes a chunk 4 KB: the callbacks, two ints and a pointer,
// each a word.
const chunkLen = (4096 - 3*word) / word

const word = int(unsafe.Sizeof(uintptr(0)))

// A chunk fills its size class: this fails to compile (index out of
// range) if it does not.
var _ = [1]struct{}{}[unsafe.Sizeof(chunk{})-4096]

// chunkList is a FIFO list of chunks, and how many callbacks they hold
// that no worker has taken.
type chunkList struct {
	head, tail *chunk
	n          int
}

// full reports whether l needs a chunk linked to it before a push.
func (l *chunkList) full() bool { return l.tail == nil || l.tail.n == chunkLen }

// push appends f to l's last chunk, which must not be full.
func (l *chunkList) push(f func()) {
	c := l.tail
	c.fs[c.n] = f
	c.n++
	l.n++
}

// link appends c, an empty chunk, to l.
func (l *chunkList) link(c *chunk) { l.concat(chunkList{c, c, 0}) }

// concat appends the chunks of m to l.
func (l *chunkList) concat(m chunkList) {
	if l.tail == nil {
		l.head = m.head
	} else {
		l.tail.next = m.head
	}
	l.tail = m.tail
	l.n += m.n
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
// complexity is O(1).
func (p *Pool) Execute(f func()) {
	if p == nil {
		panic("timewheel: Execute called on a nil *Pool")
	}
	if f == nil {
		panic("timewheel: Pool.Execute: nil func")
	}
	p.mu.Lock()
	if p.queue.full() {
		p.queue.link(orNew(p.freeLocked()))
	}
	p.queue.push(f)
	p.queuedUnlock(1)
}

// executeAll queues the callbacks of l, in order, and takes its chunks:
// the caller must not touch them again. If wantSpare is set, it returns
// an empty chunk from the free list for the caller to fill next, or nil
// if the list is empty. The complexity is O(1): no callback is copied.
func (p *Pool) executeAll(l chunkList, wantSpare bool) (spare *chunk) {
	p.mu.Lock()
	p.queue.concat(l)
	if wantSpare {
		spare = p.freeLocked()
	}
	p.queuedUnlock(l.n)
	return spare
}

// spare returns an empty chunk: one from the free list, or a new one if
// the list is empty.
func (p *Pool) spare() *chunk {
	p.mu.Lock()
	c := p.freeLocked()
	p.mu.Unlock()
	return orNew(c)
}

// orNew returns c, or a new chunk if c is nil.
func orNew(c *chunk) *chunk {
	if c == nil {
		c = new(chunk)
	}
	return c
}

// freeLocked takes a chunk off the free list, or returns nil if it is
// empty.
func (p *Pool) freeLocked() *chunk {
	lockcheck.Held(&p.mu, "Pool.freeLocked")
	c := p.free
	if c != nil {
		p.free, c.next = c.next, nil
	}
	return c
}

// queuedUnlock counts n callbacks just queued and starts the workers they
// call for. It is called with mu held, and unlocks it.
func (p *Pool) queuedUnlock(n int) {
	if p.limit == 0 {
		p.limit = DefaultWorkers() // a zero Pool
	}
	p.submitted += uint64(n)
	start := min(p.limit-p.running, p.queue.n)
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
// a Pool or a wheel's driver runs, it could wait for itself, so it panics
// instead of hanging.
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
// worker takes a run of callbacks per lock: a fair share of the queue, but
// at most maxRun and no further than the end of the first chunk. So a
// million callbacks cost thousands of lock round trips, not a million.
// With a short queue it takes one at a time, so a callback that blocks
// holds up no other.
func (p *Pool) work() {
	defer p.workers.Done()
	var buf [maxRun]func() // on the stack: a worker's start allocates no run
	run := buf[:0]
	for {
		p.mu.Lock()
		if p.queue.n == 0 {
			p.running--
			p.mu.Unlock()
			return
		}
		run = p.takeLocked(run[:0], min(max(p.queue.n/p.running/2, 1), maxRun))
		p.mu.Unlock()
		for _, f := range run {
			p.run(f)
		}
		clear(run)
	}
}

// takeLocked moves up to n callbacks from the first chunk of the queue to
// run, clearing them there, and returns run. A chunk it empties goes to
// the free list.
func (p *Pool) takeLocked(run []func(), n int) []func() {
	lockcheck.Held(&p.mu, "Pool.takeLocked")
	c := p.queue.head
	taken := c.fs[c.taken:min(c.taken+n, c.n)]
	run = append(run, taken...)
	clear(taken)
	c.taken += len(taken)
	p.queue.n -= len(taken)
	if c.taken == c.n {
		if p.queue.head = c.next; p.queue.head == nil {
			p.queue.tail = nil
		}
		c.n, c.taken, c.next = 0, 0, p.free
		p.free = c
	}
	return run
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
