package durable

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/durable/internal/store"
	"github.com/timewheel/timewheel/internal/lockcheck"
)

const (
	// maxAcks bounds the attempts one ack call deletes.
	maxAcks = 512
	// ackLinger is how long a finished attempt waits for others to share
	// its ack call.
	ackLinger = 10 * time.Millisecond
	// takeBackMargin is how soon before its due time a job leased ahead
	// counts as running for Reschedule: its worker must hear that it was
	// taken back before it starts it.
	takeBackMargin = 100 * time.Millisecond
	// urgent is how soon before its due time a job no worker holds makes a
	// worker with room for it claim, whatever else it waits for.
	urgent = 20 * time.Millisecond
	// forwardEvery bounds how often a full worker passes notices on to
	// every worker: one says "claim what is due" for all since.
	forwardEvery = 10 * time.Millisecond
)

// A worker leases a Queue's jobs ahead of their due times and runs them.
// It is a set of services, each in a file of its own:
//
//	claim.go   claiming: claimLoop, the only goroutine that claims, and
//	           the hand-backs (release)
//	plan.go    planning: when to claim next (decideLocked), pure of Redis
//	clock.go   the map of Redis's clock onto the wheel's (clockMap)
//	attempt.go an attempt's life: fired, started, run, ended (its states below)
//	listen.go  listening: the subscription (its inbox and the queue's channel)
//	ack.go     acknowledging: ackLoop deletes finished jobs, many a call
//	renew.go   renewing: renewLoop extends the leases every third of the lease
//
// # Ground rules
//
// Four goroutines of its own: claimLoop, listen, ackLoop and renewLoop
// (apart from ackLoop so that an ack waiting for the replicas never
// holds up a lease). Plus one per started attempt, at most conc, its
// shard's share of cfg.concurrency (inHandler counts them), and wheel
// callbacks (fire, the wake), which never call Redis.
//
// Who owns which field:
//
//   - immutable after startWorker: q, k, br, conc, wheel, sub, inbox, hz,
//     poll, urgent, ttl, ctx, cancel and the channels;
//   - mu guards every field below it, whoever reads it. Redis is never
//     called with mu held, nor from a wheel callback; the …Locked methods
//     need mu held, and check it under the race detector (lockcheck);
//   - an attempt's fields are listed on attempt, each with its owner.
//
// held are the attempts leased ahead, each with a wheel timer at its due
// time, and those that came due while every handler was busy (queued in
// waiting). A claim asks for at most capLocked-len(held): as many as the
// handlers can start within the horizon, by their mean run time (dur),
// so that a worker with slow handlers holds no more than it can start on
// time.
//
// One wheel timer, wake, fires claimLoop through kick; armLocked moves it
// earlier, never later. planLocked decides when to claim next, from what
// the last claim, the renewals and the messages since said (later, next),
// and from the safety-net poll.
type worker struct {
	q      *Queue
	k      store.Keys // the shard it runs: a Queue has a worker per shard (shards.go)
	br     *breaker   // the shard's
	conc   int        // its share of WithConcurrency's handlers
	wheel  *timewheel.Wheel
	sub    *feed
	inbox  string        // this worker's channel
	hz     time.Duration // the horizon: how far ahead of its due time a job is leased at most
	poll   time.Duration // the period of claims without news
	urgent time.Duration
	ttl    time.Duration // how long the worker counts as live after a claim or renewal

	ctx      context.Context // the handlers' parent, canceled by close after its wait
	cancel   context.CancelFunc
	stop     chan struct{} // closed by close: claimLoop and listen return
	kick     chan struct{} // capacity 1: claim now
	acks     chan *attempt // finished attempts to delete
	renewNow chan struct{} // capacity 1: renew (and check) the leases now
	ackEnd   chan struct{} // closed by close once no handler runs: ackLoop flushes and returns, renewLoop returns

	loops    sync.WaitGroup // claimLoop, listen
	handlers sync.WaitGroup
	acker    sync.WaitGroup

	mu        sync.Mutex
	stopping  bool                // no more wakes, claims or starts
	wake      *timewheel.Timer    // pending wake, nil if none
	wakeAt    time.Time           // when wake fires, on the wheel's clock
	gen       uint64              // wake's generation: a stale wake's callback leaves wake alone
	inHandler int                 // handlers running (at most conc)
	dur       time.Duration       // the handlers' mean run time, a moving average; 0 before the first
	waiting   []*attempt          // held attempts that came due while every handler was busy, in order
	held      map[string]*attempt // id -> attempt leased ahead, its timer armed
	running   map[string]*attempt // id -> attempt started, until its end is written
	more      bool                // a job no worker holds is due within reach: at next
	next      int64               // µs on the server's clock; -1 if none known
	note      int64               // the earliest due time told since the claim in flight began; -1 if none
	later     int64               // µs on the server's clock: when to claim for what the last claim (or a renewal since) saw out of reach; -1 if nothing
	pollAt    time.Time           // when to claim without news
	paused    map[string]bool     // as the last claim or message said
	clk       clockMap            // Redis's clock against the wheel's
	down      bool                // the last call to Redis failed: held jobs wait for the next that succeeds
	fails     int                 // claims in a row that failed
	wheelGone bool                // the wheel was found closed, and it was reported
	forwarded time.Time           // when a notice was last passed on to every worker
	heldN     int                 // len(held) as last added to stats.held
}

// startWorker starts the worker of shard k, running up to conc handlers
// at once on wheel.
func startWorker(q *Queue, k store.Keys, br *breaker, wheel *timewheel.Wheel, conc int) *worker {
	c := &q.cfg
	w := &worker{
		q:        q,
		k:        k,
		br:       br,
		conc:     conc,
		wheel:    wheel,
		inbox:    k.Inbox(c.worker),
		stop:     make(chan struct{}),
		kick:     make(chan struct{}, 1),
		acks:     make(chan *attempt, conc),
		renewNow: make(chan struct{}, 1),
		ackEnd:   make(chan struct{}),
		held:     map[string]*attempt{},
		running:  map[string]*attempt{},
		paused:   map[string]bool{},
		next:     -1,
		note:     -1,
		later:    -1,
	}
	w.hz = min(store.Horizon*time.Microsecond, c.lease/2)
	w.poll = c.poll * time.Duration(len(q.shards)) // a replica's workers claim without news once a poll between them
	w.urgent = min(urgent, w.hz/4)
	w.ttl = 2*c.lease/3 + 500*time.Millisecond // two renewals
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.sub = subscribe(q.st.Redis(), k.Ev(), w.inbox)
	w.loops.Add(2)
	go w.claimLoop()
	go w.listen()
	w.acker.Add(2)
	go w.ackLoop()
	go w.renewLoop()
	w.kick <- struct{}{}
	return w
}

// close stops claiming, hands back the jobs held, waits for the handlers
// until ctx ends (then cancels them and waits for them to return) and
// flushes the acks. The Queue closes the wheel.
func (w *worker) close(ctx context.Context) error {
	w.mu.Lock()
	w.stopping = true
	if w.wake != nil {
		w.wake.Stop()
		w.wake = nil
	}
	var held []*attempt
	for _, a := range w.held {
		held = append(held, w.dropLocked(a))
	}
	w.mu.Unlock()
	close(w.stop)
	w.sub.close()
	w.loops.Wait()
	w.release(held, true)
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

// call makes one call of the worker's to Redis, bounded by the call
// timeout; a failure is counted and reported, and marks Redis down until
// a call succeeds.
func (w *worker) call(op string, jobs int, f func(ctx context.Context) error) error {
	return w.callWithin(op, jobs, w.q.cfg.callTimeout, f)
}

// callWithin is call bounded by d.
func (w *worker) callWithin(op string, jobs int, d time.Duration, f func(ctx context.Context) error) error {
	err, timedOut := bounded(context.Background(), op, d, f)
	w.br.record(err, timedOut)
	w.mu.Lock()
	wasDown := w.down
	w.down = err != nil && !errors.Is(err, ErrNotReplicated) // the primary answered
	w.mu.Unlock()
	if err != nil {
		w.q.stats.errors.Add(1)
		w.q.cfg.onError(&CallError{Queue: w.q.cfg.name, Worker: w.q.cfg.worker, Op: op, Jobs: jobs, Err: err})
		return err
	}
	if wasDown {
		// The jobs that came due meanwhile start once a renewal finds
		// their leases still held.
		select {
		case w.renewNow <- struct{}{}:
		default:
		}
	}
	return nil
}

// countHeldLocked adds the change in len(held) to Stats.Held, which sums
// the Queue's workers. mu is held.
func (w *worker) countHeldLocked() {
	lockcheck.Held(&w.mu, "countHeldLocked")
	w.q.stats.held.Add(int64(len(w.held) - w.heldN))
	w.heldN = len(w.held)
}

// wheelClosedLocked reports, once, that the worker's wheel was closed under it.
// mu is held.
func (w *worker) wheelClosedLocked() {
	lockcheck.Held(&w.mu, "wheelClosedLocked")
	if w.wheelGone {
		return
	}
	w.wheelGone = true
	err := fmt.Errorf("durable: queue %q, worker %s: its wheel (WithWheel) is closed: it starts no more jobs, and those it holds run elsewhere once their leases end", w.q.cfg.name, w.q.cfg.worker)
	w.handlers.Add(1)
	go func() {
		defer w.handlers.Done()
		w.q.cfg.onError(err)
	}()
}
