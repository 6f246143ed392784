// Command heartbeat is a heartbeat monitor on a timewheel: peers send
// beats, a peer silent for longer than the timeout is reported, and
// reported again when it comes back.
//
// Each peer's deadline is one wheel timer, reset on every beat: the most
// common timer there is, started and reset constantly and almost never
// fired. The peers here are simulated, on the same wheel, and one of them
// dies while another falls silent for a while. It runs for 1.2 seconds:
//
//	go run ./examples/heartbeat
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/timewheel/timewheel"
)

func main() {
	w := timewheel.New()
	defer w.Close()
	run(os.Stdout, w, time.Sleep)
}

// Monitor reports peers whose beats stop. It is safe for concurrent use.
// The zero Monitor has no wheel to time peers on: its Beat panics (make
// one with NewMonitor), its Stop returns no counts.
type Monitor struct {
	w       *timewheel.Wheel
	timeout time.Duration
	report  func(format string, args ...any)

	mu      sync.Mutex
	peers   map[string]*peer // guarded by mu
	stopped bool             // guarded by mu; Stop was called
}

type peer struct {
	timer   *timewheel.Timer // fires timeout after the last beat
	last    time.Time        // guarded by Monitor.mu
	missing bool             // guarded by Monitor.mu; reported missing, not back yet
	beats   int              // guarded by Monitor.mu
}

// NewMonitor returns a monitor that reports, through report, a peer
// silent for timeout. It panics if w or report is nil or timeout is not
// positive. report is called without the monitor's lock held, so it may
// call Beat and Stop.
func NewMonitor(w *timewheel.Wheel, timeout time.Duration, report func(format string, args ...any)) *Monitor {
	switch {
	case w == nil:
		panic("heartbeat: NewMonitor called with a nil wheel")
	case timeout <= 0:
		panic(fmt.Sprintf("heartbeat: NewMonitor called with non-positive timeout %v", timeout))
	case report == nil:
		panic("heartbeat: NewMonitor called with a nil report func")
	}
	return &Monitor{w: w, timeout: timeout, report: report, peers: map[string]*peer{}}
}

// Beat records a beat from the named peer and pushes its deadline back.
// After Stop it does nothing. The complexity is O(1).
func (m *Monitor) Beat(name string) {
	if m.w == nil {
		panic("heartbeat: Beat called on a zero Monitor; make one with NewMonitor")
	}
	now := m.w.Now()
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return
	}
	p := m.peers[name]
	if p == nil {
		p = &peer{}
		m.peers[name] = p
		p.timer = m.w.AfterFunc(m.timeout, func() { m.check(name) })
	} else {
		p.timer.Reset(m.timeout)
	}
	back, silent := p.missing, now.Sub(p.last)
	p.last, p.missing = now, false
	p.beats++
	m.mu.Unlock()
	if back {
		m.report("%s is back after %v of silence", name, silent.Round(time.Millisecond))
	}
}

// check runs when a peer's timer fires. A beat may have raced with the
// firing; then the peer is not silent and nothing is reported.
func (m *Monitor) check(name string) {
	now := m.w.Now()
	m.mu.Lock()
	p := m.peers[name]
	silent := now.Sub(p.last)
	missed := !m.stopped && !p.missing && silent >= m.timeout
	if missed {
		p.missing = true
	}
	m.mu.Unlock()
	if missed {
		m.report("%s missed its heartbeats: silent for %v", name, silent.Round(time.Millisecond))
	}
}

// Stop stops every peer's timer, and the monitor: no peer is found
// missing after it, and later beats are ignored. It returns the beat
// counts by peer, again if called again.
func (m *Monitor) Stop() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopped = true
	counts := map[string]int{}
	for name, p := range m.peers {
		p.timer.Stop()
		counts[name] = p.beats
	}
	return counts
}

// simulatedPeer beats every period on the wheel, except while silent
// says so.
type simulatedPeer struct {
	name   string
	period time.Duration
	silent func(at time.Duration) bool // at: time since the start
	m      *Monitor
	timer  *timewheel.Timer
	n      int // beats due so far; touched only by the timer's callback
}

func (s *simulatedPeer) start(w *timewheel.Wheel) {
	s.timer = w.AfterFunc(time.Hour, s.tick) // set before it can fire
	s.timer.Reset(s.period)
}

func (s *simulatedPeer) tick() {
	s.n++
	if !s.silent(time.Duration(s.n) * s.period) {
		s.m.Beat(s.name)
	}
	s.timer.Reset(s.period)
}

// run monitors three simulated peers on w for 1.2s, with sleep moving
// time forward, and writes what happens to out.
func run(out io.Writer, w *timewheel.Wheel, sleep func(time.Duration)) {
	start := w.Now()
	var mu sync.Mutex // reports come from the wheel's callbacks
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		at := w.Now().Sub(start).Round(10 * time.Millisecond)
		fmt.Fprintf(out, "%6v  %s\n", at, fmt.Sprintf(format, args...))
	}
	m := NewMonitor(w, 250*time.Millisecond, report)
	peers := []*simulatedPeer{
		{name: "alpha", silent: func(time.Duration) bool { return false }},
		{name: "bravo", silent: func(at time.Duration) bool { return at > 300*time.Millisecond }},
		{name: "charlie", silent: func(at time.Duration) bool { return at > 500*time.Millisecond && at < 900*time.Millisecond }},
	}
	for _, p := range peers {
		p.period, p.m = 100*time.Millisecond, m
		p.start(w)
	}
	report("monitoring %d peers, beat every 100ms, timeout 250ms", len(peers))

	sleep(1200 * time.Millisecond)

	for _, p := range peers {
		p.timer.Stop()
	}
	counts := m.Stop()
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		report("%s: %d beats", name, counts[name])
	}
}
