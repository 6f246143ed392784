package queuetest

import (
	"slices"
	"testing"

	"github.com/timewheel/timewheel/queue"
)

// harness runs table steps on one queue, naming timers by string. Exact
// queues must fire exactly the timers a step lists, in its order; queues
// with declared slack must fire only due timers and every timer past its
// slack.
type harness[H comparable] struct {
	t       *testing.T
	q       queue.Queue[H]
	opts    Options
	now     int64
	handles map[string]H
	names   map[H]string
	when    map[string]int64 // effective deadline of pending timers
	at      map[string]int64 // tick each pending timer was scheduled at
}

func newHarness[H comparable](t *testing.T, q queue.Queue[H], opts Options) *harness[H] {
	return &harness[H]{
		t: t, q: q, opts: opts,
		handles: map[string]H{}, names: map[H]string{},
		when: map[string]int64{}, at: map[string]int64{},
	}
}

func (h *harness[H]) verify(step string) {
	h.t.Helper()
	if v, ok := h.q.(verifier); ok {
		if err := v.Verify(); err != nil {
			h.t.Fatalf("after %s: invariant broken: %v", step, err)
		}
	}
}

func (h *harness[H]) schedule(name string, when int64) {
	h.t.Helper()
	hd := h.q.Schedule(when)
	h.handles[name], h.names[hd] = hd, name
	h.when[name], h.at[name] = max(when, h.now), h.now
	h.verify("schedule " + name)
}

func (h *harness[H]) cancel(name string, want bool) {
	h.t.Helper()
	if h.opts.loose() { // a timer may still be pending within its slack
		_, want = h.when[name]
	}
	if got := h.q.Cancel(h.handles[name]); got != want {
		h.t.Fatalf("Cancel(%s) = %v, want %v", name, got, want)
	}
	delete(h.when, name)
	h.verify("cancel " + name)
}

func (h *harness[H]) reschedule(name string, when int64, want bool) {
	h.t.Helper()
	if h.opts.loose() {
		_, want = h.when[name]
	}
	if got := h.q.Reschedule(h.handles[name], when); got != want {
		h.t.Fatalf("Reschedule(%s, %d) = %v, want %v", name, when, got, want)
	}
	h.when[name], h.at[name] = max(when, h.now), h.now
	h.verify("reschedule " + name)
}

func (h *harness[H]) expire(now int64, want ...string) {
	h.t.Helper()
	var got []string
	h.q.Expire(now, func(hd H) { got = append(got, h.names[hd]) })
	h.now = max(h.now, now)
	if !h.opts.loose() {
		if !slices.Equal(got, want) {
			h.t.Fatalf("Expire(%d) fired %q, want %q", now, got, want)
		}
		for _, name := range want {
			delete(h.when, name)
		}
	} else {
		for _, name := range got {
			w, pending := h.when[name]
			if !pending || w > now {
				h.t.Fatalf("Expire(%d) fired %s: pending %v, due at %d", now, name, pending, w)
			}
			delete(h.when, name)
		}
		for name, w := range h.when {
			if addSat(w, h.opts.slack(h.at[name], w)) <= now {
				h.t.Fatalf("Expire(%d) left %s (due %d) pending past its declared slack", now, name, w)
			}
		}
	}
	h.verify("expire")
}

func (h *harness[H]) next(want int64, ok bool) {
	h.t.Helper()
	if h.opts.loose() {
		ok = len(h.when) > 0
	}
	got, gotOK := h.q.Next()
	if gotOK != ok || (!h.opts.loose() && got != want) {
		h.t.Fatalf("Next() = %d, %v; want %d, %v", got, gotOK, want, ok)
	}
}

func (h *harness[H]) length(want int) {
	h.t.Helper()
	if h.opts.loose() {
		want = len(h.when)
	}
	if got := h.q.Len(); got != want {
		h.t.Fatalf("Len() = %d, want %d", got, want)
	}
}

func (h *harness[H]) finish() {
	h.t.Helper()
	h.q.Expire(1<<63-1, func(H) {})
	clear(h.when) // the end of time: nothing may still be pending
	h.length(0)
	h.next(0, false)
}
