package timewheel_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
)

// TestConcurrentContracts drives wheels from several goroutines with random
// operations inside a synctest bubble (the wheel's real clock runs on the
// bubble's fake time) and checks every timer against a model of package
// time's Go 1.23 rules:
//
//   - an AfterFunc schedule that Stop or Reset cancelled (returned true)
//     never fires; every other schedule fires exactly once, never before its
//     deadline rounded up to the tick, and has fired once the bubble is idle
//     past that deadline. Stop or Reset returning false while a schedule is
//     pending means its firing has begun: the callback may still be running
//     or about to run, and must then run exactly once ("owed"), as package
//     time documents for AfterFunc;
//   - a channel timer delivers at most one value per schedule, none from an
//     earlier schedule once Stop or Reset has returned, and Stop and Reset
//     report exactly whether a value was still to be received;
//   - a ticker delivers nothing after Stop, nothing from before a Reset, and
//     never early;
//   - after Close returns nil, Len is 0 and nothing fires any more.
func TestConcurrentContracts(t *testing.T) {
	configs := []struct {
		name string
		tick time.Duration
		opts []timewheel.Option
		lazy bool // every Stop and Reset as if from another processor
	}{
		{"default", time.Millisecond, nil, false},
		{"shards3", time.Millisecond, []timewheel.Option{timewheel.WithShards(3)}, false},
		{"tick7ms", 7 * time.Millisecond, []timewheel.Option{timewheel.WithTick(7 * time.Millisecond)}, false},
		{"lazy", time.Millisecond, nil, true},
		{"lazy-shards3", time.Millisecond, []timewheel.Option{timewheel.WithShards(3)}, true},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			if cfg.lazy {
				defer timewheel.LazyStops()()
			}
			synctest.Test(t, func(t *testing.T) {
				seed := rand.Uint64()
				t.Logf("seed %d", seed)
				h := &stressHarness{t: t, tick: cfg.tick}
				h.epoch = time.Now() // the wheel reads the same fake instant as its epoch
				h.w = timewheel.New(cfg.opts...)
				h.run(seed)
			})
		})
	}
}

const (
	stressWorkers = 4
	stressOps     = 6000
	never         = int64(math.MaxInt64) // a deadline past the end of time
)

type stressHarness struct {
	t     *testing.T
	w     *timewheel.Wheel
	epoch time.Time
	tick  time.Duration

	errs     atomic.Int32
	closed   atomic.Bool // set once Close has returned
	waiting  atomic.Bool // a goroutine is in synctest.Wait
	fires    atomic.Int64
	lateFire atomic.Int64 // callbacks after Close returned (must stay 0)

	// What the run exercised, for the log.
	cancelled, racing, endedDone, idleChecks atomic.Int64

	regMu sync.RWMutex
	reg   []*afModel // every AfterFunc timer, whoever made it

	chans   [stressWorkers][]*chModel // per goroutine
	tickers [stressWorkers][]*tkModel // per goroutine
}

// afModel is what the rules say about one AfterFunc timer. mu is held
// across every Stop and Reset of the timer and while its callback records
// a firing, so that the model sees them in one order.
type afModel struct {
	mu    sync.Mutex
	id    int
	t     *timewheel.Timer
	live  bool    // the last schedule was neither cancelled nor found expired by Stop/Reset
	dl    int64   // its deadline, ns since epoch, rounded as the wheel rounds
	fired bool    // a firing of the last schedule has been seen
	owed  []int64 // deadlines of earlier schedules whose firing had begun: each runs once
	hist  []string
}

type chModel struct {
	t        *timewheel.Timer
	live     bool  // scheduled, not stopped, value not received
	dl       int64 // deadline of the last schedule
	since    int64 // when the last schedule was made
	received bool
}

type tkModel struct {
	tk      *timewheel.Ticker
	running bool
	period  int64 // ns, rounded up to the tick
	first   int64 // deadline of the first tick after the last start
	since   int64
	last    int64 // last value received since the last start, or -1
}

func (h *stressHarness) errorf(format string, args ...any) {
	if n := h.errs.Add(1); n <= 25 {
		h.t.Errorf(format, args...)
	} else if n == 26 {
		h.t.Errorf("more errors suppressed")
	}
}

func (h *stressHarness) now() int64 { return int64(time.Since(h.epoch)) }

// deadline mirrors Wheel.deadline: d from now rounded up to the tick, in ns
// since the epoch; zero or negative is the current tick.
func (h *stressHarness) deadline(now int64, d time.Duration) int64 {
	tick := int64(h.tick)
	if d <= 0 {
		return now / tick * tick
	}
	if now > math.MaxInt64-int64(d) {
		return never
	}
	ticks := (now+int64(d)-1)/tick + 1
	if ticks > math.MaxInt64/tick {
		return never
	}
	return ticks * tick
}

func (h *stressHarness) periodOf(d time.Duration) int64 {
	tick := int64(h.tick)
	return max(1, (int64(d)-1)/tick+1) * tick
}

func fmtNS(ns int64) string {
	if ns == never {
		return "never"
	}
	return time.Duration(ns).String()
}

func randDuration(r *rand.Rand, tick time.Duration) time.Duration {
	switch r.IntN(12) {
	case 0:
		return 0
	case 1:
		return -time.Duration(1 + r.Int64N(int64(time.Second)))
	case 2:
		return time.Duration(1 + r.Int64N(int64(tick))) // sub-tick
	case 3, 4, 5, 6:
		return time.Duration(r.Int64N(int64(20 * tick)))
	case 7, 8:
		return time.Duration(1 + r.Int64N(int64(200*time.Millisecond)))
	case 9:
		return time.Duration(1 + r.Int64N(int64(2*time.Second)))
	case 10:
		return time.Duration(int64(time.Minute) + r.Int64N(int64(time.Hour))) // long: upper wheel levels
	default:
		if r.IntN(3) == 0 {
			return math.MaxInt64 // saturates
		}
		return time.Duration(1 + r.Int64N(int64(5*tick)))
	}
}

func randInterval(r *rand.Rand, tick time.Duration) time.Duration {
	if r.IntN(4) == 0 {
		return time.Duration(1 + r.Int64N(int64(tick)))
	}
	return time.Duration(1 + r.Int64N(int64(30*tick)))
}

func (m *afModel) note(format string, args ...any) {
	if len(m.hist) >= 12 {
		m.hist = append(m.hist[:0], m.hist[len(m.hist)-11:]...)
	}
	m.hist = append(m.hist, fmt.Sprintf(format, args...))
}

// fire is every AfterFunc callback: it matches the firing to a schedule
// that may fire.
func (h *stressHarness) fire(m *afModel) {
	now := h.now()
	h.fires.Add(1)
	if h.closed.Load() {
		h.lateFire.Add(1)
		h.errorf("timer %d: callback ran at %v, after Close returned", m.id, fmtNS(now))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.note("fire@%v", fmtNS(now))
	for i, dl := range m.owed {
		if dl <= now {
			m.owed = append(m.owed[:i], m.owed[i+1:]...)
			return
		}
	}
	if len(m.owed) > 0 {
		h.errorf("timer %d: fired at %v before the deadline %v of a schedule already reported expired; history %v",
			m.id, fmtNS(now), fmtNS(m.owed[0]), m.hist)
		m.owed = m.owed[1:]
		return
	}
	switch {
	case !m.live:
		h.errorf("timer %d: callback ran at %v with no schedule outstanding (stopped timer fired, or fired twice); history %v",
			m.id, fmtNS(now), m.hist)
	case m.fired:
		h.errorf("timer %d: callback ran twice for one schedule (at %v); history %v", m.id, fmtNS(now), m.hist)
	case now < m.dl:
		h.errorf("timer %d: fired early at %v, deadline %v; history %v", m.id, fmtNS(now), fmtNS(m.dl), m.hist)
		m.fired = true
	default:
		m.fired = true
	}
}

func (h *stressHarness) newAfterFunc(r *rand.Rand) {
	d := randDuration(r, h.tick)
	m := &afModel{}
	m.mu.Lock()
	now := h.now()
	m.t = h.w.AfterFunc(d, func() { h.fire(m) })
	m.live, m.dl, m.fired = true, h.deadline(now, d), false
	h.regMu.Lock()
	m.id = len(h.reg)
	h.reg = append(h.reg, m)
	h.regMu.Unlock()
	m.note("AfterFunc(%v)@%v dl=%v", d, fmtNS(now), fmtNS(m.dl))
	m.mu.Unlock()
}

// ended applies a Stop or Reset result to the schedule it ended.
func (h *stressHarness) ended(m *afModel, op string, ok bool, now int64) {
	switch {
	case ok && (!m.live || m.fired):
		h.errorf("timer %d: %s at %v returned true, but its last schedule was stopped or had fired; history %v",
			m.id, op, fmtNS(now), m.hist)
	case ok:
		// Cancelled: this schedule must never fire.
		h.cancelled.Add(1)
	case !m.live || m.fired:
		h.endedDone.Add(1) // on a stopped or fired timer
	default:
		// Its firing has begun: the callback runs exactly once, maybe later.
		if now < m.dl {
			h.errorf("timer %d: %s at %v returned false before the deadline %v (expired early or lost); history %v",
				m.id, op, fmtNS(now), fmtNS(m.dl), m.hist)
		}
		m.owed = append(m.owed, m.dl)
		h.racing.Add(1)
	}
	m.live = false
}

func (h *stressHarness) pick(r *rand.Rand) *afModel {
	h.regMu.RLock()
	defer h.regMu.RUnlock()
	if len(h.reg) == 0 {
		return nil
	}
	n := len(h.reg)
	if r.IntN(2) == 0 && n > 64 { // mostly recent ones: more of them pending
		return h.reg[n-1-r.IntN(64)]
	}
	return h.reg[r.IntN(n)]
}

func (h *stressHarness) stopAfterFunc(m *afModel) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := h.now()
	ok := m.t.Stop()
	m.note("Stop@%v=%v", fmtNS(now), ok)
	h.ended(m, "Stop", ok, now)
}

func (h *stressHarness) resetAfterFunc(m *afModel, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := h.now()
	ok := m.t.Reset(d)
	dl := h.deadline(now, d)
	m.note("Reset(%v)@%v=%v dl=%v", d, fmtNS(now), ok, fmtNS(dl))
	h.ended(m, "Reset", ok, now)
	m.live, m.dl, m.fired = true, dl, false
}

// checkChanValue checks a value received from a channel timer.
func (h *stressHarness) checkChanValue(g, i int, c *chModel, v time.Time, how string) {
	at := int64(v.Sub(h.epoch))
	switch {
	case !c.live && c.received:
		h.errorf("chan timer %d/%d: second value %v received (%s) for one schedule", g, i, fmtNS(at), how)
	case !c.live:
		h.errorf("chan timer %d/%d: value %v received (%s) after Stop returned", g, i, fmtNS(at), how)
	case at < c.since:
		h.errorf("chan timer %d/%d: stale value %v received (%s) after Reset at %v", g, i, fmtNS(at), how, fmtNS(c.since))
	case at < c.dl:
		h.errorf("chan timer %d/%d: early value %v (%s), deadline %v", g, i, fmtNS(at), how, fmtNS(c.dl))
	}
	c.live, c.received = false, true
}

func (h *stressHarness) chanOp(r *rand.Rand, g int) {
	cs := h.chans[g]
	if len(cs) == 0 || (len(cs) < 16 && r.IntN(4) == 0) {
		d := randDuration(r, h.tick)
		now := h.now()
		h.chans[g] = append(cs, &chModel{t: h.w.NewTimer(d), live: true, dl: h.deadline(now, d), since: now})
		return
	}
	i := r.IntN(len(cs))
	c := cs[i]
	switch r.IntN(5) {
	case 0: // Stop
		ok := c.t.Stop()
		if ok != c.live {
			h.errorf("chan timer %d/%d: Stop at %v returned %v, want %v (pending or unreceived: %v)", g, i, fmtNS(h.now()), ok, c.live, c.live)
		}
		c.live = false
		select {
		case v := <-c.t.C:
			h.checkChanValue(g, i, c, v, "right after Stop")
		default:
		}
	case 1, 2: // Reset
		d := randDuration(r, h.tick)
		now := h.now()
		ok := c.t.Reset(d)
		if ok != c.live {
			h.errorf("chan timer %d/%d: Reset at %v returned %v, want %v", g, i, fmtNS(now), ok, c.live)
		}
		c.live, c.dl, c.since, c.received = true, h.deadline(now, d), now, false
		select {
		case v := <-c.t.C:
			h.checkChanValue(g, i, c, v, "right after Reset")
		default:
		}
	case 3: // receive without blocking
		select {
		case v := <-c.t.C:
			h.checkChanValue(g, i, c, v, "non-blocking")
		default:
		}
	case 4: // receive, waiting past the deadline if it is near
		now := h.now()
		if c.live && c.dl != never && c.dl-now <= int64(300*time.Millisecond) {
			wait := time.Duration(max(c.dl-now, 0)) + 2*h.tick
			select {
			case v := <-c.t.C:
				h.checkChanValue(g, i, c, v, "blocking")
			case <-time.After(wait):
				h.errorf("chan timer %d/%d: no value by %v, deadline %v", g, i, fmtNS(h.now()), fmtNS(c.dl))
			}
		} else {
			select {
			case v := <-c.t.C:
				h.checkChanValue(g, i, c, v, "blocking")
			case <-time.After(time.Duration(r.Int64N(int64(3 * h.tick)))):
			}
		}
	}
}

func (h *stressHarness) checkTick(g, i int, k *tkModel, v time.Time, how string) {
	at := int64(v.Sub(h.epoch))
	switch {
	case !k.running:
		h.errorf("ticker %d/%d: tick %v received (%s) after Stop returned", g, i, fmtNS(at), how)
	case at < k.since:
		h.errorf("ticker %d/%d: stale tick %v received (%s) after Reset at %v", g, i, fmtNS(at), how, fmtNS(k.since))
	case at < k.first:
		h.errorf("ticker %d/%d: early first tick %v (%s), deadline %v", g, i, fmtNS(at), how, fmtNS(k.first))
	case k.last >= 0 && at < k.last+k.period-int64(h.tick):
		h.errorf("ticker %d/%d: tick %v (%s) too soon after tick %v, period %v", g, i, fmtNS(at), how, fmtNS(k.last), fmtNS(k.period))
	}
	k.last = at
}

func (h *stressHarness) tickerOp(r *rand.Rand, g int) {
	ks := h.tickers[g]
	if len(ks) == 0 || (len(ks) < 4 && r.IntN(8) == 0) {
		d := randInterval(r, h.tick)
		now := h.now()
		h.tickers[g] = append(ks, &tkModel{tk: h.w.NewTicker(d), running: true, period: h.periodOf(d),
			first: h.deadline(now, d), since: now, last: -1})
		return
	}
	i := r.IntN(len(ks))
	k := ks[i]
	switch r.IntN(4) {
	case 0:
		k.tk.Stop()
		k.running = false
		select {
		case v := <-k.tk.C:
			h.checkTick(g, i, k, v, "right after Stop")
		default:
		}
	case 1:
		d := randInterval(r, h.tick)
		now := h.now()
		k.tk.Reset(d)
		k.running, k.period, k.first, k.since, k.last = true, h.periodOf(d), h.deadline(now, d), now, -1
		select {
		case v := <-k.tk.C:
			h.checkTick(g, i, k, v, "right after Reset")
		default:
		}
	case 2:
		select {
		case v := <-k.tk.C:
			h.checkTick(g, i, k, v, "non-blocking")
		default:
		}
	case 3:
		now := h.now()
		if k.running {
			wait := time.Duration(max(k.first-now, 0)+k.period) + 2*h.tick
			select {
			case v := <-k.tk.C:
				h.checkTick(g, i, k, v, "blocking")
			case <-time.After(wait):
				h.errorf("ticker %d/%d: no tick between %v and %v, period %v", g, i, fmtNS(now), fmtNS(h.now()), fmtNS(k.period))
			}
		} else {
			select {
			case v := <-k.tk.C:
				h.checkTick(g, i, k, v, "blocking")
			case <-time.After(time.Duration(r.Int64N(int64(3 * h.tick)))):
			}
		}
	}
}

// quiescent runs with every other goroutine of the bubble durably blocked,
// so nothing moves: every callback whose firing began has run, and every
// schedule due before now has fired.
func (h *stressHarness) quiescent(g int) {
	h.idleChecks.Add(1)
	now := h.now()
	h.regMu.RLock()
	reg := h.reg
	h.regMu.RUnlock()
	for _, m := range reg {
		m.mu.Lock()
		if len(m.owed) > 0 {
			h.errorf("timer %d: idle at %v, but a callback whose firing began (deadline %v) has not run; history %v",
				m.id, fmtNS(now), fmtNS(m.owed[0]), m.hist)
		}
		if m.live && !m.fired && m.dl < now {
			h.errorf("timer %d: idle at %v, not fired though due at %v; history %v", m.id, fmtNS(now), fmtNS(m.dl), m.hist)
		}
		m.mu.Unlock()
	}
	if g < 0 {
		return
	}
	for i, c := range h.chans[g] {
		if c.live && c.dl < now && len(c.t.C) == 0 {
			h.errorf("chan timer %d/%d: idle at %v, no value though due at %v", g, i, fmtNS(now), fmtNS(c.dl))
		}
	}
}

func (h *stressHarness) worker(g int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, uint64(g)))
	for range stressOps {
		switch x := r.IntN(100); {
		case x < 18:
			h.newAfterFunc(r)
		case x < 33:
			if m := h.pick(r); m != nil {
				h.stopAfterFunc(m)
			}
		case x < 53:
			if m := h.pick(r); m != nil {
				h.resetAfterFunc(m, randDuration(r, h.tick))
			}
		case x < 68:
			h.chanOp(r, g)
		case x < 76:
			h.tickerOp(r, g)
		case x < 85:
			time.Sleep(time.Duration(r.Int64N(int64(3 * h.tick))))
		case x < 97:
			// Wake on a tick boundary, when the drivers fire too, and
			// stop or reset timers as their firing may be under way.
			tick := int64(h.tick)
			time.Sleep(time.Duration(tick - h.now()%tick + tick*r.Int64N(3)))
			for range 1 + r.IntN(4) {
				if m := h.pick(r); m != nil && r.IntN(2) == 0 {
					h.stopAfterFunc(m)
				} else if m != nil {
					h.resetAfterFunc(m, randDuration(r, h.tick))
				}
			}
		default:
			if h.waiting.CompareAndSwap(false, true) {
				synctest.Wait()
				h.quiescent(g)
				h.waiting.Store(false)
			}
		}
	}
}

func (h *stressHarness) run(seed uint64) {
	t, w := h.t, h.w
	defer func() {
		if !h.closed.Load() {
			w.Close() // on an early failure: stop the drivers so the bubble can end
		}
	}()

	// Phase 1: random operations from several goroutines.
	var wg sync.WaitGroup
	for g := range stressWorkers {
		wg.Go(func() { h.worker(g, seed) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// Phase 2: stop the tickers (a ticker wakes the wheel every period),
	// sleep past every finite deadline; everything due has fired exactly
	// once, and what is left pending is exactly what the model says.
	for g := range stressWorkers {
		for i, k := range h.tickers[g] {
			k.tk.Stop()
			k.running = false
			select {
			case v := <-k.tk.C:
				h.checkTick(g, i, k, v, "right after the final Stop")
			default:
			}
		}
	}
	last := h.now()
	for _, m := range h.reg {
		m.mu.Lock()
		if m.live && !m.fired && m.dl != never {
			last = max(last, m.dl)
		}
		m.mu.Unlock()
	}
	for g := range stressWorkers {
		for _, c := range h.chans[g] {
			if c.live && c.dl != never {
				last = max(last, c.dl)
			}
		}
	}
	time.Sleep(time.Duration(last-h.now()) + 3*h.tick)
	synctest.Wait()
	h.quiescent(-1)
	pending, afPending := 0, 0
	for _, m := range h.reg {
		m.mu.Lock()
		if m.live && !m.fired {
			if m.dl != never {
				h.errorf("timer %d: not fired at %v, deadline %v; history %v", m.id, fmtNS(h.now()), fmtNS(m.dl), m.hist)
			}
			pending++
			afPending++
		}
		m.mu.Unlock()
	}
	for g := range stressWorkers {
		for i, c := range h.chans[g] {
			if !c.live {
				if len(c.t.C) != 0 {
					h.errorf("chan timer %d/%d: value waiting though stopped or received", g, i)
				}
				continue
			}
			if c.dl == never {
				pending++
				continue
			}
			select {
			case v := <-c.t.C:
				h.checkChanValue(g, i, c, v, "after sleeping past all deadlines")
			default:
				h.errorf("chan timer %d/%d: no value at %v, deadline %v", g, i, fmtNS(h.now()), fmtNS(c.dl))
			}
		}
		for i, k := range h.tickers[g] {
			if n := drainTimes(k.tk.C); n > 0 {
				t.Errorf("ticker %d/%d: %d ticks sent after Stop returned", g, i, n)
			}
		}
	}
	if n := w.Len(); n != pending {
		t.Errorf("Len() = %d after sleeping past every deadline, want %d pending (%d AfterFunc)", n, pending, afPending)
	}
	t.Logf("%d AfterFunc timers, %d callbacks; Stop/Reset: %d cancelled, %d on stopped or fired timers, %d found the firing begun but the callback not yet run; %d idle checks; %d pending before Close",
		len(h.reg), h.fires.Load(), h.cancelled.Load(), h.endedDone.Load(), h.racing.Load(), h.idleChecks.Load(), pending)
	if t.Failed() {
		t.FailNow()
	}

	// Phase 3: Close while two goroutines keep starting, resetting and
	// stopping timers; nothing runs after Close has returned.
	var stop atomic.Bool
	for g := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(100+g)))
			for !stop.Load() {
				nap := time.Duration(r.Int64N(int64(h.tick)))
				tm := w.AfterFunc(time.Duration(r.Int64N(int64(3*h.tick))), func() {
					// A callback that takes a while: Close must wait for it.
					time.Sleep(nap)
					if h.closed.Load() {
						h.lateFire.Add(1)
						h.errorf("churn callback still running after Close returned")
					}
				})
				if r.IntN(2) == 0 {
					tm.Reset(time.Duration(r.Int64N(int64(3 * h.tick))))
				}
				if r.IntN(3) == 0 {
					tm.Stop()
				}
				time.Sleep(time.Duration(r.Int64N(int64(h.tick))))
			}
		})
	}
	// A few running tickers, to be dropped by Close too.
	for g := range stressWorkers {
		if len(h.tickers[g]) > 0 {
			h.tickers[g][0].tk.Reset(h.tick)
			pending++
		}
	}
	tick := int64(h.tick)
	time.Sleep(time.Duration(5*tick - h.now()%tick)) // on a tick boundary, as callbacks are dispatched
	err := w.Close()
	h.closed.Store(true)
	stop.Store(true)
	if err != nil {
		t.Errorf("Close() = %v, want nil", err)
	}
	if n := w.Len(); n != 0 {
		t.Errorf("Len() = %d after Close, want 0", n)
	}
	if n := w.Discarded(); n < pending {
		t.Errorf("Discarded() = %d, want at least the %d timers pending before Close", n, pending)
	}
	if err := w.Close(); err != timewheel.ErrClosed {
		t.Errorf("second Close() = %v, want ErrClosed", err)
	}
	wg.Wait()

	// Values sent before Close may still wait in channels; take them, then
	// nothing more may come.
	for g := range stressWorkers {
		for _, c := range h.chans[g] {
			drainTimes(c.t.C)
		}
		for _, k := range h.tickers[g] {
			drainTimes(k.tk.C)
		}
	}
	for _, m := range h.reg {
		m.mu.Lock()
		if m.t.Stop() {
			h.errorf("timer %d: Stop after Close returned true", m.id)
		}
		if m.t.Reset(time.Millisecond) {
			h.errorf("timer %d: Reset after Close returned true", m.id)
		}
		m.mu.Unlock()
	}
	late := w.AfterFunc(time.Millisecond, func() {
		h.lateFire.Add(1)
		h.errorf("AfterFunc made after Close fired")
	})
	lateC := w.NewTimer(0)
	lateTk := w.NewTicker(h.tick)
	if late.Reset(2*time.Millisecond) || lateC.Reset(time.Millisecond) {
		t.Errorf("Reset of a timer made after Close returned true")
	}
	lateTk.Reset(2 * h.tick)
	time.Sleep(2 * time.Hour)
	synctest.Wait()
	for g := range stressWorkers {
		for i, c := range h.chans[g] {
			if n := drainTimes(c.t.C); n > 0 {
				t.Errorf("chan timer %d/%d: %d values sent after Close returned", g, i, n)
			}
		}
		for i, k := range h.tickers[g] {
			if n := drainTimes(k.tk.C); n > 0 {
				t.Errorf("ticker %d/%d: %d ticks sent after Close returned", g, i, n)
			}
		}
	}
	if drainTimes(lateC.C) > 0 || drainTimes(lateTk.C) > 0 {
		t.Errorf("timer or ticker made after Close delivered a value")
	}
	if n := h.lateFire.Load(); n > 0 {
		t.Errorf("%d callbacks ran after Close returned", n)
	}
	if n := w.Len(); n != 0 {
		t.Errorf("Len() = %d long after Close, want 0", n)
	}
}

func drainTimes(c <-chan time.Time) int {
	n := 0
	for {
		select {
		case <-c:
			n++
		default:
			return n
		}
	}
}
