package timewheel

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/timewheel/timewheel/clock"
)

// rendezvous is an Executor whose first call waits for its second: if the
// shards' drivers called Execute one at a time, it would wait for ever.
type rendezvous struct{ first chan struct{} }

func (r *rendezvous) Execute(f func()) {
	select {
	case r.first <- struct{}{}: // the second call, or a later one
	case <-r.first: // the first call: wait for a second
		// nothing: we got here because another call sent
	}
	f()
}

// TestExecutorCalledConcurrentlyByShards checks what the Executor doc
// says: with two shards, two drivers call Execute at once.
func TestExecutorCalledConcurrentlyByShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &rendezvous{first: make(chan struct{})}
		w := New(WithShards(2), WithExecutor(r))
		defer w.Close()
		done := make(chan int, 2)
		for i, s := range w.shards {
			tm := &Timer{f: func() { done <- i }, p: unsafe.Pointer(s)}
			s.start(&tm.e, nil, time.Second)
		}
		<-done
		<-done // synctest reports a deadlock here if Execute is called serially
	})
}

// recorder makes pool callbacks that append their number to got; the one
// numbered 0 closes started and waits for gate.
type recorder struct {
	mu      sync.Mutex
	got     []int
	started chan struct{}
	gate    chan struct{}
}

func (r *recorder) f(i int) func() {
	return func() {
		if i == 0 {
			close(r.started)
			<-r.gate
		}
		r.mu.Lock()
		r.got = append(r.got, i)
		r.mu.Unlock()
	}
}

// chunks returns callbacks lo to hi-1 of r in chunks of p's, as a shard
// fills them.
func (r *recorder) chunks(p *Pool, lo, hi int) chunkList {
	var l chunkList
	for i := lo; i < hi; i++ {
		if l.full() {
			l.link(p.spare())
		}
		l.push(r.f(i))
	}
	return l
}

// inOrder fails t unless got is 0 to n-1 in order.
func inOrder(t *testing.T, got []int, n int) {
	t.Helper()
	for i, v := range got {
		if i != v {
			t.Fatalf("callback %d ran in place %d", v, i)
		}
	}
	if len(got) != n {
		t.Fatalf("%d of %d callbacks ran", len(got), n)
	}
}

// freeChunks returns the number of chunks on p's free list, and fails t
// if one of them is not empty and cleared.
func freeChunks(t *testing.T, p *Pool) int {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c := p.free; c != nil; c = c.next {
		if c.n != 0 || c.taken != 0 || slices.ContainsFunc(c.fs[:], func(f func()) bool { return f != nil }) {
			t.Fatalf("a free chunk holds %d callbacks, %d taken, or one not cleared", c.n, c.taken)
		}
		n++
	}
	return n
}

// TestPoolRunsChunksInOrder: chunk lists the pool takes, each of several
// chunks, and callbacks queued one at a time between them, run in the
// order they were queued, with Stats counting them across chunks.
func TestPoolRunsChunksInOrder(t *testing.T) {
	const n = 3*chunkLen + 10
	r := &recorder{started: make(chan struct{}), gate: make(chan struct{})}
	p := NewPool(1)
	p.executeAll(r.chunks(p, 0, chunkLen+5), false)
	p.Execute(r.f(chunkLen + 5))
	p.executeAll(r.chunks(p, chunkLen+6, 3*chunkLen), false)
	p.executeAll(r.chunks(p, 3*chunkLen, 3*chunkLen+1), false)
	for i := 3*chunkLen + 1; i < n; i++ {
		p.Execute(r.f(i))
	}
	<-r.started
	// Callback 0 blocks the one worker, which took a run with it.
	if st := p.Stats(); st.Submitted != uint64(n) || st.Running != 1 || st.Queued < n-maxRun || st.Queued > n-1 {
		t.Fatalf("Stats() = %+v with callback 0 blocked; want %d submitted, 1 running, %d to %d queued", st, n, n-maxRun, n-1)
	}
	close(r.gate)
	p.Wait()
	inOrder(t, r.got, n)
	if st, want := p.Stats(), (PoolStats{Limit: 1, Submitted: uint64(n)}); st != want {
		t.Fatalf("Stats() = %+v after Wait; want %+v", st, want)
	}
}

// TestPoolRecyclesChunks: the chunks the pool has run go to its free
// list, cleared, and the next burst as big takes them all from there
// instead of allocating; a shard is given one back with each hand-over.
func TestPoolRecyclesChunks(t *testing.T) {
	r := &recorder{}
	p := NewPool(2)
	lists := []chunkList{r.chunks(p, 1, 2*chunkLen), r.chunks(p, 1, 2*chunkLen), r.chunks(p, 1, 2*chunkLen)}
	for _, l := range lists {
		p.executeAll(l, false)
	}
	p.Wait()
	if n := freeChunks(t, p); n != 6 {
		t.Fatalf("%d chunks on the free list after 6 ran", n)
	}
	l := r.chunks(p, 1, 2*chunkLen)
	if n := freeChunks(t, p); n != 4 {
		t.Fatalf("%d chunks on the free list after a list of 2 was filled; want 4", n)
	}
	if c := p.executeAll(l, true); c == nil || c.n != 0 {
		t.Fatalf("executeAll gave back %v; want an empty chunk", c)
	}
	p.Wait()
	if n := freeChunks(t, p); n != 5 {
		t.Fatalf("%d chunks on the free list; want 5", n)
	}
	if n := len(r.got); n != 4*(2*chunkLen-1) {
		t.Fatalf("%d of %d callbacks ran", n, 4*(2*chunkLen-1))
	}
}

// TestPoolPanicKeepsChunks: a callback that panics, with a panic handler
// set, leaves the rest of its chunk and the chunks after it to run.
func TestPoolPanicKeepsChunks(t *testing.T) {
	r := &recorder{}
	var panics []any
	p := NewPool(1)
	p.panicHandler = func(v any) { panics = append(panics, v) }
	l := r.chunks(p, 1, 4)
	l.push(func() { panic("boom") })
	p.executeAll(l, false)
	p.executeAll(r.chunks(p, 4, chunkLen+10), false)
	p.Wait()
	if len(panics) != 1 || panics[0] != "boom" {
		t.Fatalf("panic handler got %v; want [boom]", panics)
	}
	inOrder(t, append([]int{0}, r.got...), chunkLen+10)
}

// TestPoolRunsOneTickInStartOrder: a wheel's timers due at one tick, more
// than a chunk holds, reach its pool in the order they were started, and
// run in that order on one worker; each runs once.
func TestPoolRunsOneTickInStartOrder(t *testing.T) {
	const n = 2*chunkLen + 7
	vc := clock.NewVirtual(time.Unix(0, 0))
	w := New(WithClock(vc), WithWorkers(1))
	r := &recorder{}
	for i := range n {
		w.AfterFunc(time.Second, r.f(i+1))
	}
	vc.Advance(time.Second)
	w.pool.Wait()
	inOrder(t, append([]int{0}, r.got...), n+1)
	if st := w.Stats().Executor; st.Submitted != uint64(n) || st.Queued != 0 {
		t.Fatalf("pool Stats() = %+v; want %d submitted, none queued", st, n)
	}
	w.Close()
}
