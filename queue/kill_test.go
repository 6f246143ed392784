package queue_test

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/timewheel/timewheel/queue"
)

// TestKillAgainstModel: entries killed, revived, buried, postponed,
// cancelled and rescheduled, and expired across the slots they lie in, against a plain
// model: a killed entry never fires, a revived one fires at its new
// deadline, none early, none late, each once. A killed entry's wheel may
// drop it whenever it reaches the entry's slot, so the model knows a dead
// entry only as dead or dropped: Revive of one may fail, and Len lies
// between the pending count and that plus the dead.
func TestKillAgainstModel(t *testing.T) { onWheels(t, checkKill) }

func checkKill(t *rapid.T, w *queue.Wheel) {
	m := &postponeModel{t: t, w: w, index: map[*queue.Entry]int{}}
	dead := map[int]bool{} // killed and perhaps not dropped yet
	span := rapid.SampledFrom([]int64{8, 70, 5000, 300000}).Draw(t, "span")
	offset := func(label string) int64 { return rapid.Int64Range(-2, span).Draw(t, label) }
	for range rapid.IntRange(1, 200).Draw(t, "steps") {
		pick := func() int { return rapid.IntRange(0, len(m.entries)-1).Draw(t, "pick") }
		switch op := rapid.IntRange(0, 7).Draw(t, "op"); {
		case op == 0 || len(m.entries) == 0:
			m.add(m.now + offset("when"))
		case op == 1:
			i := pick()
			m.cancel(i)
			if m.entries[i].Dead() {
				t.Fatalf("entry %d dead after Cancel", i)
			}
			dead[i] = false
		case op == 2:
			i := pick()
			m.reschedule(i, m.now+offset("when"))
			dead[i] = false
		case op == 3:
			i := pick()
			old, ok := m.entries[i].Kill()
			if ok != m.pending[i] || ok && old != m.when[i] {
				t.Fatalf("Kill(%d) = %d, %v; want %d, %v", i, old, ok, m.when[i], m.pending[i])
			}
			if ok {
				m.pending[i], dead[i] = false, true
			}
			if m.entries[i].Pending() {
				t.Fatalf("entry %d pending after Kill", i)
			}
		case op == 4:
			i, when := pick(), m.now+offset("when")
			got := m.entries[i].Revive(when)
			switch {
			case got && (!dead[i] || when < m.when[i]):
				t.Fatalf("Revive(%d, %d) = true; dead %v, was due %d", i, when, dead[i], m.when[i])
			case got:
				m.when[i], m.pending[i] = when, true
			case dead[i] && when >= m.when[i] && m.entries[i].Dead():
				t.Fatalf("Revive(%d, %d) = false of a dead entry due %d", i, when, m.when[i])
			}
			if got || when >= m.when[i] {
				dead[i] = false // revived, or refused because dropped
			}
		case op == 5:
			i, when := pick(), m.now+offset("when")
			want := m.pending[i] && when >= m.when[i]
			if got := m.entries[i].Postpone(when); got != want {
				t.Fatalf("Postpone(%d, %d) = %v, want %v", i, when, got, want)
			}
			if want {
				m.when[i] = when
			}
		case op == 6:
			m.expire(m.now + rapid.Int64Range(0, span).Draw(t, "advance"))
		case op == 7:
			i := pick()
			wasDead := m.entries[i].Dead()
			got := m.w.Bury(m.entries[i])
			if got != wasDead || got && !dead[i] {
				t.Fatalf("Bury(%d) = %v; dead %v, killed in the model %v", i, got, wasDead, dead[i])
			}
			if m.entries[i].Dead() || m.entries[i].Pending() != m.pending[i] {
				t.Fatalf("entry %d after Bury: dead %v, pending %v", i, m.entries[i].Dead(), m.entries[i].Pending())
			}
			dead[i] = false
		}
		checkKilled(m, dead)
	}
	m.expire(1 << 62)
	checkKilled(m, dead)
	if n := m.w.Len(); n != 0 {
		t.Fatalf("Len = %d after expiring every slot", n)
	}
	for i, e := range m.entries {
		if e.Dead() {
			t.Fatalf("entry %d still dead after its slot was reached", i)
		}
	}
}

// checkKilled checks the wheel's invariants and its Len against the
// model, where dead entries may or may not have been dropped.
func checkKilled(m *postponeModel, dead map[int]bool) {
	if err := m.w.Verify(); err != nil {
		m.t.Fatal(err)
	}
	pending, killed := 0, 0
	for i, p := range m.pending {
		if p {
			pending++
		}
		if dead[i] {
			killed++
		}
	}
	if n := m.w.Len(); n < pending || n > pending+killed {
		m.t.Fatalf("Len = %d, want %d pending plus at most %d killed", n, pending, killed)
	}
}

// TestKillRacingExpire kills and revives entries from other goroutines
// while the wheel's owner expires them: an entry whose last Kill returned
// true, with no Revive after it, never fires; every other entry fires
// exactly once, never before a deadline it was given.
func TestKillRacingExpire(t *testing.T) {
	t.Run("default", func(t *testing.T) { killRacingExpire(t, queue.NewWheel()) })
	t.Run("ahead", func(t *testing.T) { killRacingExpire(t, queue.NewWheelAhead(2, 16)) })
}

func killRacingExpire(t *testing.T, w *queue.Wheel) {
	const n, rounds = 2000, 400
	entries := make([]*queue.Entry, n)
	for i := range entries {
		entries[i] = w.Schedule(int64(1 + i%300))
	}
	// Each entry is touched by one goroutine only (i%2), so that its last
	// successful Kill or Revive is known.
	killed := make([]atomic.Bool, n)
	due := make([]atomic.Int64, n)
	for i := range due {
		due[i].Store(int64(1 + i%300))
	}
	firedAt := expireWhileRacing(t, w, entries, rounds, 2, func(g int, r *rand.Rand) {
		i := r.IntN(n/2)*2 + g
		e := entries[i]
		if r.IntN(2) == 0 {
			if _, ok := e.Kill(); ok {
				killed[i].Store(true)
			}
			return
		}
		when := due[i].Load() + r.Int64N(100)
		if e.Revive(when) {
			due[i].Store(when)
			killed[i].Store(false)
		}
	}, func(i int, now int64) {
		if now < due[i].Load() {
			t.Errorf("entry %d fired at %d, before its deadline %d", i, now, due[i].Load())
		}
	})
	for i, at := range firedAt {
		if killed[i].Load() && at > 0 {
			t.Fatalf("entry %d fired at %d after a Kill that returned true", i, at)
		}
		if !killed[i].Load() && at == 0 {
			t.Fatalf("entry %d was never killed for good, and never fired", i)
		}
	}
}
