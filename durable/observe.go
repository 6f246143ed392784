package durable

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/timewheel/timewheel/durable/internal/store"
	"github.com/timewheel/timewheel/internal/lockcheck"
)

// observeEvery is how often a Queue with handlers flushes its history;
// beatEvery, how often it writes its heartbeat. A worker whose last beat
// is older than goneAfter beats is shown as gone.
const (
	observeEvery = time.Second
	beatEvery    = 2 * time.Second
	goneAfter    = 3
)

// An observer writes what the pages show of a Queue's workers: its
// heartbeat in the registry (store's registry.go) every beatEvery, and
// the figures of the attempts started and ended since its last flush to
// the history (store's history.go) every observeEvery. Both are one
// round trip each to shard 0, whatever the jobs: the attempts add to
// counters in memory.
//
// It is safe for concurrent use: the workers' goroutines call started
// and ended; loop is its own goroutine, from startWorkers to close.
type observer struct {
	q    *Queue
	host string
	pid  int
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	figs  map[string]*kindFigs // guarded by mu: kind -> figures since the last flush
	first int64                // guarded by mu: the server's clock at the first beat, µs; 0 before
	now   int64                // guarded by mu: the server's clock at the last beat, µs
	since time.Time            // guarded by mu: the wheel's time of the last beat
}

// kindFigs are a kind's figures, as store.Record takes them: the counts
// and the lateness's max (store.Figures of them), then the lateness's
// buckets (Stats.Lateness's).
type kindFigs [store.Figures + len(latenessBounds) + 1]int64

// newObserver returns q's observer, its loop not started: the workers,
// made next, count into it from their start.
func newObserver(q *Queue) *observer {
	o := &observer{q: q, pid: os.Getpid(), stop: make(chan struct{}), done: make(chan struct{}), figs: map[string]*kindFigs{}}
	o.host, _ = os.Hostname()
	return o
}

// start starts the loop, once q's workers are made (it reads q.ws).
func (o *observer) start() { go o.loop() }

// started counts an attempt of kind that started late after its due
// time. It costs O(log buckets).
func (o *observer) started(kind string, late time.Duration) {
	if o == nil {
		return
	}
	late = max(late, 0)
	i, _ := slices.BinarySearch(latenessBounds[:], late)
	o.mu.Lock()
	f := o.kindLocked(kind)
	f[store.Started]++
	f[store.LateMax] = max(f[store.LateMax], late.Microseconds())
	f[store.Figures+i]++
	o.mu.Unlock()
}

// ended counts an attempt of kind that ended: ok, or failed and retried
// or died. It costs O(1).
func (o *observer) ended(kind string, ok, retried, died bool) {
	if o == nil {
		return
	}
	o.mu.Lock()
	f := o.kindLocked(kind)
	switch {
	case ok:
		f[store.Succeeded]++
	case retried:
		f[store.FailedN]++
		f[store.Retried]++
	case died:
		f[store.FailedN]++
		f[store.Died]++
	}
	o.mu.Unlock()
}

// kindLocked returns kind's figures, made if none. mu is held.
func (o *observer) kindLocked(kind string) *kindFigs {
	lockcheck.Held(&o.mu, "kindLocked")
	f := o.figs[kind]
	if f == nil {
		f = new(kindFigs)
		o.figs[kind] = f
	}
	return f
}

// loop beats and flushes until stop.
func (o *observer) loop() {
	defer close(o.done)
	t := o.q.wheel.NewTicker(observeEvery)
	defer t.Stop()
	o.beat(false)
	for {
		select {
		case <-o.stop:
			return
		case <-t.C:
			o.mu.Lock()
			since := o.since
			o.mu.Unlock()
			if o.q.wheel.Since(since) >= beatEvery-observeEvery/2 {
				o.beat(false)
			}
			o.flush()
		}
	}
}

// close stops the loop, then flushes what the workers' last attempts
// did and writes a last beat that says the worker closed. Call it once
// the workers are closed.
func (o *observer) close() {
	close(o.stop)
	<-o.done
	o.flush()
	o.beat(true)
}

// flush writes the figures since the last flush to the history, in the
// minute and hour of the last beat's server clock (plus the wheel's time
// since). A failed write drops them: the history is a view, not a
// ledger.
func (o *observer) flush() {
	o.mu.Lock()
	if len(o.figs) == 0 || o.now == 0 {
		o.mu.Unlock()
		return
	}
	figs := make(map[string][]int64, len(o.figs))
	for k, f := range o.figs {
		figs[k] = f[:]
	}
	clear(o.figs)
	at := o.now + o.q.wheel.Since(o.since).Microseconds()
	o.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), o.q.cfg.callTimeout)
	defer cancel()
	if err := o.q.doOn(ctx, &o.q.br, "record", func(ctx context.Context) error { return o.q.st.Record(ctx, o.q.k, at, figs) }); err != nil {
		o.q.cfg.onError(err)
	}
}

// beat writes the worker's entry in the registry; closing marks it
// closed.
func (o *observer) beat(closing bool) {
	c := &o.q.cfg
	running, held := 0, 0
	var jobs []string
	for i, w := range o.q.ws {
		w.mu.Lock()
		running += len(w.running)
		held += len(w.held)
		for id, a := range w.running {
			if len(jobs) == store.MaxProcJobs {
				break
			}
			jobs = append(jobs, strings.Join([]string{id, a.job.Kind, strconv.Itoa(a.job.Attempt), strconv.FormatInt(a.startedUs, 10), strconv.Itoa(i)}, "\x1f"))
		}
		w.mu.Unlock()
	}
	kinds := make([]string, 0, len(c.handlers))
	for k := range c.handlers {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	o.mu.Lock()
	first := o.first
	o.mu.Unlock()
	fields := []string{"host", o.host, "pid", strconv.Itoa(o.pid), "every", strconv.FormatInt(beatEvery.Microseconds(), 10),
		"conc", strconv.Itoa(c.concurrency), "shards", strconv.Itoa(len(o.q.shards)), "kinds", short(strings.Join(kinds, "\x1f"), 4096),
		"running", strconv.Itoa(running), "held", strconv.Itoa(held), "jobs", strings.Join(jobs, "\x1e")}
	if first != 0 {
		fields = append(fields, "started", strconv.FormatInt(first, 10))
	}
	if closing {
		fields = append(fields, "closed", "1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.callTimeout)
	defer cancel()
	var now int64
	err := o.q.doOn(ctx, &o.q.br, "beat", func(ctx context.Context) (err error) {
		now, err = o.q.st.Beat(ctx, o.q.k, c.worker, fields)
		return err
	})
	if err != nil {
		c.onError(err)
		return
	}
	o.mu.Lock()
	o.now, o.since = now, o.q.wheel.Now()
	if o.first == 0 {
		o.first = now
	}
	o.mu.Unlock()
}

// short cuts s to n bytes.
func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
