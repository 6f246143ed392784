package queue_test

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/timewheel/timewheel/queue"
)

// postponeModel replays operations on a wheel, Postpone among them,
// against a plain model: each entry's deadline and whether it is pending.
type postponeModel struct {
	t       *rapid.T
	w       *queue.Wheel
	now     int64
	entries []*queue.Entry
	when    []int64 // model deadline of each entry
	pending []bool
	index   map[*queue.Entry]int
}

func (m *postponeModel) add(when int64) {
	e := m.w.Schedule(when)
	m.index[e] = len(m.entries)
	m.entries = append(m.entries, e)
	m.when = append(m.when, max(when, m.now))
	m.pending = append(m.pending, true)
}

// cancel cancels entry i and checks what Cancel reports.
func (m *postponeModel) cancel(i int) {
	if got := m.w.Cancel(m.entries[i]); got != m.pending[i] {
		m.t.Fatalf("Cancel(%d) = %v, want %v", i, got, m.pending[i])
	}
	m.pending[i] = false
}

// reschedule moves entry i to tick when and checks what Reschedule
// reports.
func (m *postponeModel) reschedule(i int, when int64) {
	if got := m.w.Reschedule(m.entries[i], when); got != m.pending[i] {
		m.t.Fatalf("Reschedule(%d) = %v, want %v", i, got, m.pending[i])
	}
	m.when[i], m.pending[i] = max(when, m.now), true
}

func (m *postponeModel) expire(now int64) {
	var fired []int
	m.w.Expire(now, func(e *queue.Entry) {
		i, ok := m.index[e]
		if !ok || !m.pending[i] {
			m.t.Fatalf("fired entry %d, which is not pending", i)
		}
		if m.when[i] > now {
			m.t.Fatalf("entry %d due at %d fired early, at Expire(%d)", i, m.when[i], now)
		}
		m.pending[i] = false
		fired = append(fired, i)
	})
	for i := range m.entries {
		if m.pending[i] && m.when[i] <= now {
			m.t.Fatalf("entry %d due at %d not fired by Expire(%d)", i, m.when[i], now)
		}
	}
	if !slices.IsSortedFunc(fired, func(a, b int) int { return int(m.when[a] - m.when[b]) }) {
		m.t.Fatalf("fired out of deadline order")
	}
	m.now = max(m.now, now)
}

func (m *postponeModel) check() {
	if err := m.w.Verify(); err != nil {
		m.t.Fatal(err)
	}
	n, earliest := 0, int64(-1)
	for i, p := range m.pending {
		if p {
			n++
			if earliest < 0 || m.when[i] < earliest {
				earliest = m.when[i]
			}
		}
	}
	if got := m.w.Len(); got != n {
		m.t.Fatalf("Len = %d, want %d", got, n)
	}
	next, ok := m.w.Next()
	if ok != (n > 0) || ok && (next > earliest || next < m.now) {
		m.t.Fatalf("Next = %d, %v; want a tick in [%d, %d]", next, ok, m.now, earliest)
	}
	if wake, ok := m.w.NextWake(); ok && (wake > earliest || wake < m.now) {
		m.t.Fatalf("NextWake = %d; want a tick in [%d, %d]", wake, m.now, earliest)
	}
}

// TestPostponeAgainstModel: entries postponed many times, cancelled or
// rescheduled earlier after a postpone, and expired across the slots they
// were filed in, against the model: none early, none late, each once, in
// deadline order. The ahead case runs on wheels that move slots of one
// to four timers ahead of time (see ahead.go), so that entries are
// postponed before, while and after they are moved ahead, and reached
// in their chunks.
func TestPostponeAgainstModel(t *testing.T) { onWheels(t, checkPostpone) }

// checkPostpone is TestPostponeAgainstModel's property on wheel w.
func checkPostpone(t *rapid.T, w *queue.Wheel) {
	{
		m := &postponeModel{t: t, w: w, index: map[*queue.Entry]int{}}
		span := rapid.SampledFrom([]int64{8, 70, 5000, 300000, 1 << 40}).Draw(t, "span")
		offset := func(label string) int64 { return rapid.Int64Range(-2, span).Draw(t, label) }
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			pick := func() int { return rapid.IntRange(0, len(m.entries)-1).Draw(t, "pick") }
			switch op := rapid.IntRange(0, 5).Draw(t, "op"); {
			case op == 0 || len(m.entries) == 0:
				m.add(m.now + offset("when"))
			case op == 1:
				m.cancel(pick())
			case op == 2:
				m.reschedule(pick(), m.now+offset("when"))
			case op == 3 || op == 4:
				i, when := pick(), m.now+offset("when")
				want := m.pending[i] && when >= m.when[i]
				if got := m.entries[i].Postpone(when); got != want {
					t.Fatalf("Postpone(%d, %d) = %v, want %v (pending %v, due %d)", i, when, got, want, m.pending[i], m.when[i])
				}
				if want {
					m.when[i] = when
				}
				if got := m.entries[i].When(); m.pending[i] && got != m.when[i] {
					t.Fatalf("When(%d) = %d, want %d", i, got, m.when[i])
				}
			case op == 5:
				m.expire(m.now + rapid.Int64Range(0, span).Draw(t, "advance"))
			}
			m.check()
		}
		m.expire(1 << 62)
		m.check()
	}
}

// TestPostponeRacingExpire postpones entries from other goroutines while
// the wheel's owner expires them: every entry fires exactly once, and at a
// tick no earlier than any deadline a successful Postpone gave it.
func TestPostponeRacingExpire(t *testing.T) {
	t.Run("default", func(t *testing.T) { postponeRacingExpire(t, queue.NewWheel()) })
	t.Run("ahead", func(t *testing.T) { postponeRacingExpire(t, queue.NewWheelAhead(2, 16)) })
}

// postponeRacingExpire is TestPostponeRacingExpire on wheel w.
func postponeRacingExpire(t *testing.T, w *queue.Wheel) {
	const n, rounds = 2000, 400
	entries := make([]*queue.Entry, n)
	for i := range entries {
		entries[i] = w.Schedule(int64(1 + i%300))
	}
	var mu sync.Mutex
	moved := make([]int64, n) // the latest deadline a Postpone set
	firedAt := expireWhileRacing(t, w, entries, rounds, 1, func(_ int, r *rand.Rand) {
		i := r.IntN(n)
		e := entries[i]
		when := e.When()
		if when < 0 {
			return
		}
		when += r.Int64N(200)
		if e.Postpone(when) {
			mu.Lock()
			moved[i] = max(moved[i], when)
			mu.Unlock()
		}
	}, nil)
	for i, at := range firedAt {
		if at == 0 {
			t.Fatalf("entry %d never fired", i)
		}
		if at < moved[i] || at < int64(1+i%300) {
			t.Fatalf("entry %d fired at %d, before its deadline %d", i, at, max(moved[i], int64(1+i%300)))
		}
	}
}
