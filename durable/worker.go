package durable

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel"
)

// retryDelay is how long the worker waits before it calls Redis again
// after a call failed.
const retryDelay = 100 * time.Millisecond

// maxAcks bounds the attempts one ack call deletes.
const maxAcks = 512

// A worker claims and runs a Queue's due jobs.
//
// # Ground rules
//
// Three goroutines of its own: claimLoop (the only one that claims and
// starts handlers), listen (the subscription) and ackLoop (acks and
// renewals), plus one per running handler, at most cfg.concurrency, each
// holding a token from slots. One wheel timer, wake, fires claimLoop
// through kick; arm moves it earlier, never later, so that whatever armed
// it last cannot hide an earlier wake another caller asked for. mu guards
// the fields below it; Redis is never called with mu held.
type worker struct {
	q     *Queue
	sh    *shard // the shard it claims from: a Queue has a worker per shard
	wheel *timewheel.Wheel
	sub   *feed // the shard's channel

	ctx    context.Context // the handlers' parent, canceled by close after its wait
	cancel context.CancelFunc
	stop   chan struct{} // closed by close: claimLoop and listen return
	kick   chan struct{} // capacity 1: claim now
	slots  chan struct{} // a token per free handler
	acks   chan *attempt // finished attempts to delete
	ackEnd chan struct{} // closed by close once no handler runs: ackLoop flushes and returns

	loops    sync.WaitGroup // claimLoop, listen
	handlers sync.WaitGroup
	acker    sync.WaitGroup

	mu       sync.Mutex
	stopping bool                // no more wakes
	wake     *timewheel.Timer    // pending wake, nil if none
	wakeAt   time.Time           // when wake fires, on the wheel's clock
	gen      uint64              // wake's generation: a stale wake's callback leaves wake alone
	offset   time.Duration       // Redis's clock minus the wheel's, measured at the last claim
	running  map[string]*attempt // id -> the attempt this worker holds the lease of
}

// An attempt is one leased run of a job.
type attempt struct {
	job    Job
	token  string // "attempt|worker", the :run value the lease holds
	cancel context.CancelFunc
	lost   atomic.Bool // a renewal found the lease gone, and counted it
}

// startWorker starts the worker of shard sh on wheel, its handlers
// holding the tokens of slots, which the Queue's workers share.
func startWorker(q *Queue, sh *shard, wheel *timewheel.Wheel, slots chan struct{}) *worker {
	c := &q.cfg
	w := &worker{
		q:       q,
		sh:      sh,
		wheel:   wheel,
		stop:    make(chan struct{}),
		kick:    make(chan struct{}, 1),
		slots:   slots,
		acks:    make(chan *attempt, c.concurrency),
		ackEnd:  make(chan struct{}),
		running: map[string]*attempt{},
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.sub = subscribe(q.rdb, sh.channel)
	w.loops.Add(2)
	go w.claimLoop()
	go w.listen()
	w.acker.Add(1)
	go w.ackLoop()
	w.kick <- struct{}{}
	return w
}

// claimLoop claims due jobs whenever kicked, until stop.
func (w *worker) claimLoop() {
	defer w.loops.Done()
	for {
		select {
		case <-w.stop:
			return
		case <-w.kick:
		}
		w.claimDue()
	}
}

// claimDue claims and starts jobs while a full batch comes back, then
// arms the wake at the earliest score left, within the poll interval.
func (w *worker) claimDue() {
	c := &w.q.cfg
	for {
		select {
		case <-w.stop:
			return
		case <-w.slots:
		}
		n := 1
	more:
		for n < c.batch {
			select {
			case <-w.slots:
				n++
			default:
				break more
			}
		}
		jobs, next, err := w.claim(n)
		for range n - len(jobs) {
			w.slots <- struct{}{}
		}
		if err != nil {
			reloadAfter(w.q.rdb, err)
			w.arm(retryDelay)
			return
		}
		for _, a := range jobs {
			w.start(a)
		}
		if len(jobs) == n {
			continue
		}
		d := c.poll
		if next >= 0 {
			d = min(d, w.untilScore(next))
		}
		w.arm(d)
		return
	}
}

// claim leases up to n due jobs, and returns them and the earliest score
// left in the store (-1 if none). It also measures the offset of Redis's
// clock.
func (w *worker) claim(n int) ([]*attempt, int64, error) {
	c := &w.q.cfg
	v, err := claimScript.Run(w.ctx, w.q.rdb, w.sh.keys, n, c.lease.Microseconds(), c.worker).Slice()
	local := w.wheel.Now()
	if err != nil {
		return nil, 0, err
	}
	now, _ := v[0].(int64)
	next, _ := v[1].(int64)
	// The reply left Redis before local was read, so this offset is at
	// most the true one: a time converted with it is never early.
	w.mu.Lock()
	w.offset = time.UnixMicro(now).Sub(local)
	w.mu.Unlock()
	var jobs []*attempt
	for i := 2; i+3 < len(v); i += 4 {
		id, _ := v[i].(string)
		due, _ := v[i+1].(string)
		at, _ := v[i+2].(int64)
		blob, _ := v[i+3].(string)
		a := &attempt{job: Job{ID: id, Due: time.UnixMicro(parseScore(due)), Attempt: int(at)}}
		a.job.Kind, a.job.Payload = split(blob)
		a.token = strconv.FormatInt(at, 10) + "|" + c.worker
		jobs = append(jobs, a)
	}
	w.q.stats.claimed.Add(uint64(len(jobs)))
	return jobs, next, nil
}

// untilScore returns how long from now on the wheel's clock until Redis's
// clock reaches µs.
func (w *worker) untilScore(us int64) time.Duration {
	w.mu.Lock()
	off := w.offset
	w.mu.Unlock()
	return time.UnixMicro(us).Add(-off).Sub(w.wheel.Now())
}

// arm makes the wake fire within d, unless it is due sooner already.
func (w *worker) arm(d time.Duration) {
	d = max(d, 0)
	at := w.wheel.Now().Add(d)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopping || w.wake != nil && !w.wakeAt.After(at) {
		return
	}
	if w.wake != nil {
		w.wake.Stop()
	}
	w.gen++
	gen := w.gen
	w.wakeAt = at
	// AfterFunc never calls its f before it returns: holding mu is safe.
	w.wake = w.wheel.AfterFunc(d, func() {
		w.mu.Lock()
		if w.gen == gen {
			w.wake = nil
		}
		w.mu.Unlock()
		select {
		case w.kick <- struct{}{}:
		default:
		}
	})
}

// listen arms the wake at each due time published, and claims at once on
// every (re)subscription, when messages may have been missed.
func (w *worker) listen() {
	defer w.loops.Done()
	ch := w.sub.C()
	for {
		select {
		case <-w.stop:
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			switch m := m.(type) {
			case *redis.Subscription:
				w.arm(0)
			case *redis.Message:
				if us, err := strconv.ParseInt(m.Payload, 10, 64); err == nil {
					w.arm(w.untilScore(us))
				}
			}
		}
	}
}

// start runs a claimed attempt on a goroutine of its own, which holds a
// slot until the handler returns.
func (w *worker) start(a *attempt) {
	var ctx context.Context
	ctx, a.cancel = context.WithCancel(w.ctx)
	w.mu.Lock()
	w.running[a.job.ID] = a
	w.mu.Unlock()
	w.q.stats.running.Add(1)
	w.handlers.Add(1)
	go func() {
		defer w.handlers.Done()
		w.q.stats.late(w.wheel.Now().Sub(a.job.Due))
		err := w.call(ctx, a)
		w.q.stats.running.Add(-1)
		w.slots <- struct{}{}
		if err == nil {
			select {
			case w.acks <- a:
			case <-w.ctx.Done(): // close gave up waiting: the lease runs out
			}
			return
		}
		w.fail(a, err)
	}()
}

// call runs a's handler and returns its error, or one for a kind with no
// handler or a handler that panicked.
func (w *worker) call(ctx context.Context, a *attempt) (err error) {
	h := w.q.cfg.handlers[a.job.Kind]
	if h == nil {
		return fmt.Errorf("durable: no handler for kind %q on worker %s", a.job.Kind, w.q.cfg.worker)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("durable: handler of kind %q panicked: %v", a.job.Kind, p)
		}
	}()
	return h(ctx, a.job)
}

// fail ends a failed attempt: a retry after the backoff, or dead. An
// attempt that failed after close cancelled its context is handed back
// instead: due at once, for another replica, and never dead for it.
func (w *worker) fail(a *attempt, cause error) {
	c := &w.q.cfg
	backoff, attempts := max(c.backoff(a.job.Attempt), 0), c.maxAttempts
	closing := w.ctx.Err() != nil
	if closing {
		backoff, attempts = 0, math.MaxInt32
	}
	w.forget(a)
	r, err := failScript.Run(context.Background(), w.q.rdb, w.sh.keys,
		a.job.ID, a.token, attempts, backoff.Microseconds(), cause.Error(), w.sh.channel).Int()
	switch {
	case err != nil:
		// The lease runs out and the job runs again, as after a crash.
	case r < 0:
		if !a.lost.Load() {
			w.q.stats.lost.Add(1)
		}
	case r == 0:
		w.q.stats.dead.Add(1)
	case !closing:
		w.q.stats.retried.Add(1)
		w.arm(backoff)
	}
}

// forget drops a from the attempts whose leases the worker renews.
func (w *worker) forget(a *attempt) {
	a.cancel()
	w.mu.Lock()
	if w.running[a.job.ID] == a {
		delete(w.running, a.job.ID)
	}
	w.mu.Unlock()
}

// ackLoop deletes finished jobs, many a call, and renews the leases of
// running ones every third of the lease, until ackEnd.
func (w *worker) ackLoop() {
	defer w.acker.Done()
	renew := w.wheel.NewTicker(w.q.cfg.lease / 3)
	defer renew.Stop()
	var batch []*attempt
	for {
		select {
		case a := <-w.acks:
			batch = append(batch, a)
		drain:
			for len(batch) < maxAcks {
				select {
				case a := <-w.acks:
					batch = append(batch, a)
				default:
					break drain
				}
			}
			for !w.ack(batch) && w.pause(retryDelay) {
			}
			batch = batch[:0]
		case <-renew.C:
			w.renew()
		case <-w.ackEnd:
			for {
				select {
				case a := <-w.acks:
					batch = append(batch, a)
					continue
				default:
				}
				break
			}
			if len(batch) > 0 {
				w.ack(batch)
			}
			return
		}
	}
}

// ack deletes the jobs of batch from the store, and reports whether the
// call succeeded.
func (w *worker) ack(batch []*attempt) bool {
	args := make([]any, 0, 2*len(batch))
	for _, a := range batch {
		args = append(args, a.job.ID, a.token)
	}
	n, err := ackScript.Run(context.Background(), w.q.rdb, w.sh.keys, args...).Int()
	if err != nil {
		return false
	}
	counted := 0
	for _, a := range batch {
		w.forget(a)
		if a.lost.Load() {
			counted++ // a lost lease is never held again: the attempt is among the len(batch)-n
		}
	}
	w.q.stats.ran.Add(uint64(n))
	w.q.stats.lost.Add(uint64(len(batch) - n - counted))
	return true
}

// pause waits d on the wheel, and reports false if ackEnd came first.
func (w *worker) pause(d time.Duration) bool {
	t := w.wheel.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.ackEnd:
		return false
	}
}

// renew extends the leases of the attempts the worker runs, and cancels
// the contexts of those it lost.
func (w *worker) renew() {
	w.mu.Lock()
	args := make([]any, 0, 1+2*len(w.running))
	args = append(args, w.q.cfg.lease.Microseconds())
	for id, a := range w.running {
		args = append(args, id, a.token)
	}
	w.mu.Unlock()
	if len(args) == 1 {
		return
	}
	lost, err := renewScript.Run(context.Background(), w.q.rdb, w.sh.keys, args...).StringSlice()
	if err != nil {
		return
	}
	for _, id := range lost {
		w.mu.Lock()
		a := w.running[id]
		w.mu.Unlock()
		if a != nil {
			a.lost.Store(true)
			w.q.stats.lost.Add(1)
			w.forget(a)
		}
	}
}

// close stops claiming, waits for the handlers until ctx ends (then
// cancels them and waits for them to return) and flushes the acks.
func (w *worker) close(ctx context.Context) error {
	w.mu.Lock()
	w.stopping = true
	if w.wake != nil {
		w.wake.Stop()
		w.wake = nil
	}
	w.mu.Unlock()
	close(w.stop)
	w.sub.close()
	w.loops.Wait()
	done := make(chan struct{})
	go func() {
		w.handlers.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		w.cancel()
		<-done
	}
	close(w.ackEnd)
	w.acker.Wait()
	w.cancel()
	return err
}
