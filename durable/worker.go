package durable

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel"
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
//
// # Ground rules
//
// Four goroutines of its own: claimLoop (the only one that claims),
// listen (the subscription: its inbox and the queue's channel), ackLoop
// (acks) and renewLoop (renewals, apart so that an ack waiting for the
// replicas never holds up a lease). Plus one per started attempt, at
// most conc, its shard's share of cfg.concurrency (inHandler counts
// them).
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
// and from the safety-net poll. mu guards the fields below it; Redis is
// never called with mu held, nor from a wheel callback.
type worker struct {
	q      *Queue
	k      keyset   // the shard it runs: a Queue has a worker per shard (shards.go)
	br     *breaker // the shard's
	conc   int      // its share of WithConcurrency's handlers
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

// A clockMap maps Redis's clock onto the wheel's. Each claim measures
// the offset: the server's TIME in the script, less the wheel's clock
// once the reply is back. Since the reply left Redis before that, each
// measurement is at most the true offset. The map keeps the largest, the
// tightest, less drift since it was measured at maxDrift: the true
// offset moves slower than that (NTP slews a clock by 500 ppm at most),
// so a time mapped with it is never early.
type clockMap struct {
	base time.Time // the wheel's clock at the first measurement
	off  int64     // the best offset: server µs less µs since base
	at   int64     // µs since base when off was measured
	ok   bool
}

// maxDrift is the rate, in µs a second, at which a measured offset is
// taken to age: twice NTP's largest slew.
const maxDrift = 1000

// measure notes an offset: the server read server µs before local.
func (c *clockMap) measure(server int64, local time.Time) {
	if !c.ok {
		*c = clockMap{base: local, off: server, ok: true}
		return
	}
	l := local.Sub(c.base).Microseconds()
	if off := server - l; off >= c.offset(l) {
		c.off, c.at = off, l
	}
}

// offset returns the offset at l µs since base, aged since measured.
func (c *clockMap) offset(l int64) int64 {
	return c.off - (l-c.at)*maxDrift/1_000_000
}

// An attempt is one leased run of a job.
type attempt struct {
	job      Job
	due      int64  // µs on the server's clock
	token    string // "attempt|worker|due", the :run value the lease holds
	timer    *timewheel.Timer
	deferred bool      // fired while Redis was down: starts once a renewal confirms the lease (guarded by mu)
	started  time.Time // when its handler started (guarded by mu until then)
	cancel   context.CancelCauseFunc
	timeout  time.Duration
	lost     atomic.Bool // a renewal found the lease gone, and counted it
	canceled atomic.Bool // Cancel or Reschedule took the job while the worker held it
	ended    atomic.Bool // the attempt's end (ack or failure) is under way
}

// startWorker starts the worker of shard k, running up to conc handlers
// at once on wheel.
func startWorker(q *Queue, k keyset, br *breaker, wheel *timewheel.Wheel, conc int) *worker {
	c := &q.cfg
	w := &worker{
		q:        q,
		k:        k,
		br:       br,
		conc:     conc,
		wheel:    wheel,
		inbox:    k.inbox(c.worker),
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
	w.hz = min(horizon*time.Microsecond, c.lease/2)
	w.poll = c.poll * time.Duration(len(q.shards)) // a replica's workers claim without news once a poll between them
	w.urgent = min(urgent, w.hz/4)
	w.ttl = 2*c.lease/3 + 500*time.Millisecond // two renewals
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.sub = subscribe(q.rdb, k.ev, w.inbox)
	w.loops.Add(2)
	go w.claimLoop()
	go w.listen()
	w.acker.Add(2)
	go w.ackLoop()
	go w.renewLoop()
	w.kick <- struct{}{}
	return w
}

// claimLoop claims whenever kicked, until stop.
func (w *worker) claimLoop() {
	defer w.loops.Done()
	for {
		select {
		case <-w.stop:
			return
		case <-w.kick:
		}
		w.claimRound()
	}
}

// claimRound claims while plan says to, then leaves the wake armed.
func (w *worker) claimRound() {
	for {
		w.mu.Lock()
		n := 0
		if !w.stopping {
			n = min(w.roomLocked(), w.q.cfg.batch)
		}
		if n <= 0 {
			w.planLocked()
			w.mu.Unlock()
			return
		}
		w.note = -1
		w.mu.Unlock()

		jobs, left, paused, err := w.claim(n)

		w.mu.Lock()
		if err != nil {
			w.fails++
			w.armLocked(backoff(w.fails))
			w.mu.Unlock()
			return
		}
		w.fails = 0
		again, release := w.takeLocked(jobs, left, paused)
		w.mu.Unlock()
		if len(release) > 0 {
			w.release(release, false)
		}
		if !again {
			return
		}
		select {
		case <-w.stop:
			return
		default:
		}
	}
}

// claim leases up to n jobs due within the horizon, and returns them, the
// due time of the first it left (-1 if none), and the paused kinds. It
// also maps Redis's clock onto the wheel's, and notes when to claim next
// for what it could not take (later).
func (w *worker) claim(n int) ([]*attempt, int64, []string, error) {
	c := &w.q.cfg
	var v []any
	err := w.call("claim", n, func(ctx context.Context) (err error) {
		v, err = claimScript.Run(ctx, w.q.rdb, w.k.all, w.k.prefix, n, c.lease.Microseconds(), c.worker,
			w.hz.Microseconds(), w.ttl.Microseconds()).Slice()
		return err
	})
	local := w.wheel.Now()
	w.q.stats.claims.Add(1)
	if err != nil {
		return nil, 0, nil, err
	}
	now, _ := v[0].(int64)
	left, _ := v[1].(int64)
	later, _ := v[3].(int64)
	var paused []string
	if p, ok := v[2].([]any); ok {
		for _, k := range p {
			s, _ := k.(string)
			paused = append(paused, s)
		}
	}
	w.mu.Lock()
	w.clk.measure(now, local)
	w.later = later
	w.mu.Unlock()
	var jobs []*attempt
	for i := 4; i+3 < len(v); i += 4 {
		id, _ := v[i].(string)
		due, _ := v[i+1].(string)
		at, _ := v[i+2].(int64)
		blob, _ := v[i+3].(string)
		a := &attempt{due: parseScore(due), token: strconv.FormatInt(at, 10) + "|" + c.worker + "|" + due}
		a.job = Job{ID: id, Due: time.UnixMicro(a.due), Attempt: int(at)}
		a.job.Kind, a.job.Payload = split(blob)
		jobs = append(jobs, a)
	}
	w.q.stats.claimed.Add(uint64(len(jobs)))
	return jobs, left, paused, nil
}

// takeLocked holds or starts the jobs a claim leased, notes what it said, and
// returns whether to claim again at once, and the jobs to hand back (the
// worker is stopping, or their kind was paused). mu is held.
func (w *worker) takeLocked(jobs []*attempt, left int64, paused []string) (bool, []*attempt) {
	w.next = left
	if w.note >= 0 && (w.next < 0 || w.note < w.next) {
		w.next = w.note
	}
	w.more = w.next >= 0
	w.pollAt = w.wheel.Now().Add(jitter(w.poll, 0.2))
	var release []*attempt
	clear(w.paused)
	for _, k := range paused {
		w.paused[k] = true
	}
	if len(paused) > 0 {
		for _, a := range w.held {
			if w.pausedLocked(a.job.Kind) {
				release = append(release, w.dropLocked(a))
			}
		}
	}
	now := w.wheel.Now()
	for _, a := range jobs {
		if old := w.held[a.job.ID]; old != nil {
			w.dropLocked(old) // its lease ran out while it waited, and this claim took it again
		}
		if old := w.running[a.job.ID]; old != nil && !old.lost.Swap(true) {
			w.q.stats.lost.Add(1) // its lease ran out while it ran, and this claim took it again
		}
		if w.stopping {
			release = append(release, a)
			continue
		}
		w.held[a.job.ID] = a
		if t := w.localLocked(a.due); t.After(now) {
			a.timer = w.wheel.AfterFunc(t.Sub(now), func() { w.fire(a) })
			continue
		}
		w.startOrQueueLocked(a)
	}
	w.countHeld()
	if w.stopping {
		return false, release
	}
	now = w.wheel.Now()
	claimNow, at := w.decideLocked(now)
	if !claimNow && !at.IsZero() {
		w.armLocked(at.Sub(now))
	}
	return claimNow, release
}

// decideLocked returns whether to claim now, or else when to (zero: only when a
// handler frees up). mu is held.
func (w *worker) decideLocked(now time.Time) (bool, time.Time) {
	room := w.roomLocked()
	if w.stopping || room <= 0 {
		return false, time.Time{}
	}
	if w.fails > 0 {
		return false, time.Time{} // the wake armed for the retry stands
	}
	if !w.clk.ok {
		return true, time.Time{}
	}
	at := w.pollAt
	if w.later >= 0 {
		at = minTime(at, w.localLocked(w.later))
	}
	if w.more {
		t := w.localLocked(w.next)
		if !t.After(now.Add(w.hz)) {
			if room >= max(1, min(w.capLocked(), w.q.cfg.batch)/2) || !t.After(now.Add(w.urgent)) {
				return true, time.Time{}
			}
			at = minTime(at, t.Add(-w.urgent))
		} else {
			at = minTime(at, t.Add(-w.hz/2)) // as the claim's later: the jobs of half a horizon in one claim
		}
	}
	if !at.After(now) {
		return true, time.Time{}
	}
	return false, at
}

// planLocked kicks claimLoop, or arms the wake, as decide says. mu is held.
func (w *worker) planLocked() {
	now := w.wheel.Now()
	claimNow, at := w.decideLocked(now)
	switch {
	case claimNow:
		select {
		case w.kick <- struct{}{}:
		default:
		}
	case !at.IsZero():
		w.armLocked(at.Sub(now))
	}
}

// armLocked makes the wake fire within d, unless it is due sooner already. mu
// is held.
func (w *worker) armLocked(d time.Duration) {
	d = max(d, 0)
	at := w.wheel.Now().Add(d)
	if w.stopping || w.wake != nil && !w.wakeAt.After(at) {
		return
	}
	if w.wheel.Err() != nil {
		w.wheelClosedLocked()
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

// wheelClosedLocked reports, once, that the worker's wheel was closed under it.
// mu is held.
func (w *worker) wheelClosedLocked() {
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

// localLocked returns when Redis's clock reads us, on the wheel's clock. mu is
// held.
func (w *worker) localLocked(us int64) time.Time {
	l := w.wheel.Since(w.clk.base).Microseconds()
	d := min(max(us-w.clk.offset(l), -1<<40), 1<<40)
	return w.clk.base.Add(time.Duration(d) * time.Microsecond)
}

// serverNowLocked returns Redis's clock now, as the worker knows it: never
// ahead of it. mu is held.
func (w *worker) serverNowLocked() int64 {
	l := w.wheel.Since(w.clk.base).Microseconds()
	return l + w.clk.offset(l)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// capLocked returns how many jobs the worker may hold ahead: as many as
// its handlers start within half the horizon at their mean run time, at
// least conc (all, before the first has run), at most twice cfg.batch.
// mu is held.
func (w *worker) capLocked() int {
	c := &w.q.cfg
	if w.dur <= 0 {
		return w.conc
	}
	n := float64(w.conc) * float64(w.hz/2) / float64(w.dur)
	return int(min(max(n, float64(w.conc)), float64(max(w.conc, 2*c.batch))))
}

// roomLocked returns how many more jobs a claim may ask for: none while
// every handler is busy. mu is held.
func (w *worker) roomLocked() int {
	if w.inHandler >= w.conc {
		return 0
	}
	return w.capLocked() - len(w.held)
}

// pausedLocked reports whether jobs of kind wait. mu is held.
func (w *worker) pausedLocked(kind string) bool { return w.paused[""] || w.paused[kind] }

// fire starts a held attempt at its due time, unless it was dropped, its
// kind paused, or Redis is down. It runs on the wheel: it never calls
// Redis.
func (w *worker) fire(a *attempt) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held[a.job.ID] != a || w.stopping {
		return
	}
	now := w.wheel.Now()
	if t := w.localLocked(a.due); t.After(now) {
		// The clock map moved since: wait for the rest, never early.
		a.timer = w.wheel.AfterFunc(t.Sub(now), func() { w.fire(a) })
		return
	}
	if w.pausedLocked(a.job.Kind) {
		w.dropLocked(a)
		w.handlers.Add(1)
		go func() {
			defer w.handlers.Done()
			w.release([]*attempt{a}, false)
		}()
		w.planLocked()
		return
	}
	if w.down {
		a.deferred = true
		return
	}
	w.startOrQueueLocked(a)
}

// startOrQueueLocked starts a held attempt that came due, or queues it
// until a handler is free. mu is held.
func (w *worker) startOrQueueLocked(a *attempt) {
	if w.inHandler >= w.conc {
		w.waiting = append(w.waiting, a)
		return
	}
	delete(w.held, a.job.ID)
	w.countHeld()
	w.startLocked(a)
}

// dequeueLocked starts the first queued attempt still held, if any.
// mu is held.
func (w *worker) dequeueLocked() {
	for len(w.waiting) > 0 && w.inHandler < w.conc {
		a := w.waiting[0]
		w.waiting[0] = nil
		w.waiting = w.waiting[1:]
		if w.held[a.job.ID] == a && !w.stopping {
			delete(w.held, a.job.ID)
			w.countHeld()
			w.startLocked(a)
		}
	}
}

// dropLocked forgets a held attempt, and returns it. mu is held.
func (w *worker) dropLocked(a *attempt) *attempt {
	if a.timer != nil {
		a.timer.Stop()
	}
	delete(w.held, a.job.ID)
	w.countHeld()
	return a
}

// startLocked runs a's handler on a goroutine of its own. mu is held.
func (w *worker) startLocked(a *attempt) {
	w.inHandler++
	a.started = w.wheel.Now()
	w.running[a.job.ID] = a
	w.q.stats.running.Add(1)
	w.q.stats.late(time.Duration(w.serverNowLocked()-a.due) * time.Microsecond)
	timeout, _, _ := w.q.cfg.policy(a.job.Kind)
	ctx, cancel := context.WithCancelCause(w.ctx)
	a.cancel, a.timeout = cancel, timeout
	w.handlers.Add(1)
	go w.run(ctx, a)
}

// timeoutError is the cause of a handler's context past its timeout.
type timeoutError struct {
	kind string
	d    time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("durable: handler of kind %q ran past its timeout of %v", e.kind, e.d)
}

func (e *timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// run runs a's handler, then frees its slot and ends the attempt. Past
// its timeout, the attempt ends as failed at once, whether or not the
// handler returns.
func (w *worker) run(ctx context.Context, a *attempt) {
	defer w.handlers.Done()
	var terr error
	if a.timeout > 0 {
		var cancel context.CancelFunc
		terr = &timeoutError{a.job.Kind, a.timeout}
		ctx, cancel = context.WithTimeoutCause(ctx, a.timeout, terr)
		defer cancel()
		stop := context.AfterFunc(ctx, func() {
			if context.Cause(ctx) == terr && w.end(a, terr) {
				w.q.stats.timedOut.Add(1)
			}
		})
		defer stop()
	}
	err := w.call1(ctx, a)
	if err != nil && terr != nil && context.Cause(ctx) == terr {
		err = terr
	}
	w.q.stats.running.Add(-1)
	w.mu.Lock()
	w.inHandler--
	if d := w.wheel.Since(a.started); w.dur == 0 {
		w.dur = max(d, time.Microsecond)
	} else {
		w.dur = max(w.dur+(d-w.dur)/16, time.Microsecond)
	}
	w.dequeueLocked()
	w.planLocked()
	w.mu.Unlock()
	if w.end(a, err) && err != nil && err == terr {
		w.q.stats.timedOut.Add(1)
	}
}

// call1 runs a's handler and returns its error, or one for a kind with no
// handler or a handler that panicked.
func (w *worker) call1(ctx context.Context, a *attempt) (err error) {
	h := w.q.cfg.handlers[a.job.Kind]
	if h == nil {
		return fmt.Errorf("durable: no handler for kind %q on worker %s", a.job.Kind, w.q.cfg.worker)
	}
	defer func() {
		if p := recover(); p != nil {
			w.q.stats.panics.Add(1)
			w.panicked(a.job, p, debug.Stack())
			err = fmt.Errorf("durable: handler of kind %q panicked: %v", a.job.Kind, p)
		}
	}()
	return h(ctx, a.job)
}

// panicked calls the panic handler, which must not take the worker down.
func (w *worker) panicked(j Job, p any, stack []byte) {
	defer func() { recover() }()
	w.q.cfg.onPanic(j, p, stack)
}

// end ends an attempt once: an ack for nil, a failure otherwise. It
// reports whether this call ended it.
func (w *worker) end(a *attempt, err error) bool {
	if !a.ended.CompareAndSwap(false, true) {
		return false
	}
	if err == nil {
		select {
		case w.acks <- a:
		case <-w.ctx.Done(): // close gave up waiting: the lease runs out
		}
		return true
	}
	w.fail(a, err)
	return true
}

// fail ends a failed attempt: a retry after the kind's backoff, or dead.
// An attempt that failed after close cancelled its context is handed back
// instead: due at once, for another replica, and never dead for it.
func (w *worker) fail(a *attempt, cause error) {
	_, attempts, backoffOf := w.q.cfg.policy(a.job.Kind)
	delay := max(backoffOf(a.job.Attempt), 0)
	closing := w.ctx.Err() != nil
	if closing {
		delay, attempts = 0, math.MaxInt32
	}
	w.forget(a, nil)
	if a.canceled.Load() {
		w.q.stats.canceled.Add(1)
		return
	}
	var r int64
	err := w.call("fail", 1, func(ctx context.Context) (err error) {
		r, err = failScript.Run(ctx, w.q.rdb, w.k.all, w.k.prefix, a.job.ID, a.token, attempts,
			delay.Microseconds(), cause.Error(), horizon, rel(closing), w.q.cfg.worker).Int64()
		return err
	})
	switch {
	case err != nil:
		// The lease runs out and the job runs again, as after a crash.
	case r == -2 || a.canceled.Load():
		w.q.stats.canceled.Add(1)
	case r < 0:
		if !a.lost.Load() {
			w.q.stats.lost.Add(1)
		}
	case r == 0:
		w.q.stats.dead.Add(1)
	case closing:
		w.q.stats.released.Add(1)
	default:
		w.q.stats.retried.Add(1)
		w.notice(r, false)
	}
}

// forget drops a from the attempts whose leases the worker renews, and
// cancels its context.
func (w *worker) forget(a *attempt, cause error) {
	if a.cancel != nil {
		a.cancel(cause)
	}
	w.mu.Lock()
	if w.running[a.job.ID] == a {
		delete(w.running, a.job.ID)
	}
	w.mu.Unlock()
}

// release hands back held attempts to the store, unstarted; closing also
// takes the worker off the live ones.
func (w *worker) release(as []*attempt, closing bool) {
	if len(as) == 0 && !closing {
		return
	}
	args := []any{w.k.prefix, w.q.cfg.worker, rel(closing), horizon}
	for _, a := range as {
		args = append(args, a.job.ID, a.token)
	}
	var n int
	err := w.call("release", len(as), func(ctx context.Context) (err error) {
		n, err = releaseScript.Run(ctx, w.q.rdb, w.k.all, args...).Int()
		return err
	})
	if err == nil {
		w.q.stats.released.Add(uint64(n))
	}
}

// call makes one call of the worker's to Redis, bounded by the call
// timeout; a failure is counted and reported, and marks Redis down until
// a call succeeds.
func (w *worker) call(op string, jobs int, f func(ctx context.Context) error) error {
	return w.callWithin(op, jobs, w.q.cfg.callTimeout, f)
}

// callWithin is call bounded by d.
func (w *worker) callWithin(op string, jobs int, d time.Duration, f func(ctx context.Context) error) error {
	err, timedOut := bounded(context.Background(), d, f)
	w.br.record(err, timedOut)
	w.mu.Lock()
	wasDown := w.down
	w.down = err != nil && !errors.Is(err, ErrNotReplicated) // the primary answered
	w.mu.Unlock()
	if err != nil {
		w.q.stats.errors.Add(1)
		reloadAfter(w.q.rdb, err)
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

// listen follows the worker's inbox and the queue's channel, and claims
// at once on every (re)subscription, when messages may have been missed.
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
				if m.Kind == "subscribe" || m.Kind == "ssubscribe" {
					w.resubscribed()
				}
			case *redis.Message:
				w.message(m.Channel == w.inbox, m.Payload)
			}
		}
	}
}

// resubscribed claims now, and checks the leases held: a Cancel may have
// been missed.
func (w *worker) resubscribed() {
	w.mu.Lock()
	w.more, w.next = true, -1
	if w.clk.ok {
		w.next = w.serverNowLocked()
	}
	w.planLocked()
	w.mu.Unlock()
	select {
	case w.renewNow <- struct{}{}:
	default:
	}
}

// message acts on a message of the inbox (mine) or the queue's channel.
func (w *worker) message(mine bool, p string) {
	if p == "" {
		return
	}
	switch p[0] {
	case 'n':
		if us, err := strconv.ParseInt(p[1:], 10, 64); err == nil {
			w.notice(us, mine)
		}
	case 'c':
		w.canceled(p[1:])
	case 'p':
		w.pauseKind(p[1:])
	case 'r':
		w.mu.Lock()
		delete(w.paused, p[1:])
		w.mu.Unlock()
		w.notice(-1, false)
	default: // a due time, as an older version published it
		if us, err := strconv.ParseInt(p, 10, 64); err == nil {
			w.notice(us, false)
		}
	}
}

// notice notes a job no worker holds, due at us (-1: now), and claims as
// planLocked says. A worker with no room passes on a notice sent
// to it alone to every worker, one each forwardEvery at most.
func (w *worker) notice(us int64, forward bool) {
	w.mu.Lock()
	if us < 0 && w.clk.ok {
		us = w.serverNowLocked()
	}
	if w.next < 0 || us < w.next {
		w.next = us
	}
	if w.note < 0 || us < w.note {
		w.note = us
	}
	w.more = true
	full := w.roomLocked() <= 0
	now := w.wheel.Now()
	if full && forward && now.Sub(w.forwarded) >= forwardEvery {
		w.forwarded = now
	} else {
		forward = false
	}
	w.planLocked()
	w.mu.Unlock()
	if forward {
		w.call("publish", 1, func(ctx context.Context) error {
			return w.sub.publish(ctx, w.k.ev, "n"+strconv.FormatInt(us, 10))
		})
	}
}

// canceled drops or cancels the job id, which Cancel deleted or
// Reschedule took back.
func (w *worker) canceled(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if a := w.held[id]; a != nil {
		w.dropLocked(a)
		w.q.stats.canceled.Add(1)
		w.planLocked()
		return
	}
	if a := w.running[id]; a != nil {
		a.canceled.Store(true)
		a.cancel(ErrCanceled)
	}
}

// pauseKind notes that kind ("" for the queue) is paused, and hands back
// the jobs of it held.
func (w *worker) pauseKind(kind string) {
	w.mu.Lock()
	w.paused[kind] = true
	var out []*attempt
	for _, a := range w.held {
		if kind == "" || a.job.Kind == kind {
			out = append(out, w.dropLocked(a))
		}
	}
	w.planLocked()
	w.mu.Unlock()
	w.release(out, false)
}

// ackLoop deletes finished jobs, many a call (an ack waits up to
// ackLinger for others), until ackEnd. WithReplicated, each call waits
// for the replicas too: renewLoop, on its own goroutine, goes on renewing
// the leases meanwhile.
func (w *worker) ackLoop() {
	defer w.acker.Done()
	var batch []*attempt
	var linger *timewheel.Timer
	var lingerC <-chan time.Time
	flush := func() {
		if linger != nil {
			linger.Stop()
			linger, lingerC = nil, nil
		}
		for n := 1; !w.ack(batch) && w.pause(backoff(n)); n++ {
		}
		batch = batch[:0]
	}
	for {
		select {
		case a := <-w.acks:
			batch = append(batch, a)
			if len(batch) >= maxAcks {
				flush()
			} else if linger == nil {
				linger = w.wheel.NewTimer(ackLinger)
				lingerC = linger.C
			}
		case <-lingerC:
			linger, lingerC = nil, nil
			flush()
		case <-w.ackEnd:
			if linger != nil {
				linger.Stop()
			}
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

// renewLoop renews the leases held every third of the lease, and when
// asked (renewNow), until ackEnd.
func (w *worker) renewLoop() {
	defer w.acker.Done()
	renew := w.wheel.NewTicker(w.q.cfg.lease / 3)
	defer renew.Stop()
	for {
		select {
		case <-renew.C:
			w.renew()
		case <-w.renewNow:
			w.renew()
		case <-w.ackEnd:
			return
		}
	}
}

// ack deletes the jobs of batch from the store, and reports whether the
// call succeeded. WithReplicated, it waits for the replicas (Queue.eval):
// a shortfall is counted and reported as a failed call, but the primary
// made the change, so the batch counts as done.
func (w *worker) ack(batch []*attempt) bool {
	args := make([]any, 0, 1+2*len(batch))
	args = append(args, w.k.prefix)
	for _, a := range batch {
		args = append(args, a.job.ID, a.token)
	}
	var lost, gone map[string]bool
	err := w.callWithin("ack", len(batch), w.q.writeBound(), func(ctx context.Context) (err error) {
		lost, gone, err = lostGone(w.q.eval(ctx, ackScript, w.k.all, args...))
		return err
	})
	if err != nil && lost == nil {
		return false
	}
	for _, a := range batch {
		w.forget(a, nil)
		switch {
		case gone[a.job.ID] || lost[a.job.ID] && a.canceled.Load():
			w.q.stats.canceled.Add(1)
		case !lost[a.job.ID]:
			w.q.stats.ran.Add(1)
		case !a.lost.Load():
			w.q.stats.lost.Add(1)
		}
	}
	return true
}

// lostGone parses the {lost, gone} reply of ackScript and renewScript.
// After a shortfall (ErrNotReplicated) the script ran: it returns the
// sets with the error.
func lostGone(cmd *redis.Cmd) (lost, gone map[string]bool, err error) {
	v, err := cmd.Slice()
	if err != nil {
		if !errors.Is(err, ErrNotReplicated) {
			return nil, nil, err
		}
		v, _ = cmd.Val().([]any)
	}
	sets := [2]map[string]bool{{}, {}}
	for i := range min(len(v), 2) {
		ids, _ := v[i].([]any)
		for _, id := range ids {
			s, _ := id.(string)
			sets[i][s] = true
		}
	}
	return sets[0], sets[1], err
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

// renew extends the leases of the attempts the worker holds, and drops
// (or cancels the contexts of) those it lost; then it starts the held
// jobs that came due while Redis was down, their leases confirmed.
func (w *worker) renew() {
	w.mu.Lock()
	ttl := w.ttl
	if w.stopping {
		ttl = 0 // close took it off the live workers
	}
	args := make([]any, 0, 5+2*(len(w.running)+len(w.held)))
	args = append(args, w.k.prefix, w.q.cfg.lease.Microseconds(), w.q.cfg.worker, ttl.Microseconds(), w.hz.Microseconds())
	for id, a := range w.running {
		args = append(args, id, a.token)
	}
	for id, a := range w.held {
		args = append(args, id, a.token)
	}
	w.mu.Unlock()
	var lost, gone map[string]bool
	later := int64(-1)
	err := w.call("renew", (len(args)-5)/2, func(ctx context.Context) (err error) {
		cmd := renewScript.Run(ctx, w.q.rdb, w.k.all, args...)
		if lost, gone, err = lostGone(cmd); err == nil {
			if v, _ := cmd.Val().([]any); len(v) > 2 {
				later, _ = v[2].(int64)
			}
		}
		return err
	})
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if later >= 0 && (w.later < 0 || later < w.later) {
		w.later = later
	}
	for _, set := range []map[string]bool{lost, gone} {
		for id := range set {
			canceled := gone[id]
			if a := w.running[id]; a != nil {
				delete(w.running, id)
				if canceled || a.canceled.Load() {
					// Cancel's message was missed, or has not come yet.
					a.canceled.Store(true)
					a.cancel(ErrCanceled)
				} else {
					if !a.lost.Swap(true) {
						w.q.stats.lost.Add(1)
					}
					a.cancel(ErrLeaseLost)
				}
			} else if a := w.held[id]; a != nil {
				w.dropLocked(a)
				if canceled {
					w.q.stats.canceled.Add(1)
				} else {
					w.q.stats.lost.Add(1)
				}
			}
		}
	}
	for _, a := range w.held {
		if a.deferred && !w.down && !w.stopping {
			a.deferred = false
			w.startOrQueueLocked(a)
		}
	}
	w.countHeld()
	w.planLocked()
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

// countHeld adds the change in len(held) to Stats.Held, which sums the
// Queue's workers. mu is held.
func (w *worker) countHeld() {
	w.q.stats.held.Add(int64(len(w.held) - w.heldN))
	w.heldN = len(w.held)
}
