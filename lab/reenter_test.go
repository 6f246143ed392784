package lab_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/timewheel/timewheel/queue"
)

func TestFireMayReenter(t *testing.T) {
	for _, s := range suites {
		t.Run("engine="+s.name, s.reenter)
	}
}

// reenter checks that fire can cancel, schedule and reschedule timers,
// including ones the same Expire is about to fire.
func reenter[H comparable](t *testing.T, q queue.Queue[H]) {
	a, b, c := q.Schedule(10), q.Schedule(10), q.Schedule(10)
	var order []string
	q.Expire(10, func(h H) {
		switch h {
		case a:
			order = append(order, "a")
			if !q.Cancel(b) {
				t.Error("Cancel(b) inside fire = false, want true")
			}
			q.Schedule(12)
			q.Reschedule(a, 11)
		case c:
			order = append(order, "c")
		default:
			t.Errorf("fired an unexpected timer")
		}
	})
	if fmt.Sprint(order) != "[a c]" {
		t.Fatalf("fired %v, want [a c]", order)
	}
	if n := q.Expire(12, func(H) {}); n != 2 || q.Len() != 0 {
		t.Fatalf("second Expire fired %d leaving %d, want 2 leaving 0", n, q.Len())
	}
}

// reentrant drives q with fire callbacks that cancel, reschedule and
// schedule other timers, always for a tick after the one being fired, and
// checks what holds whatever a structure does with timers made due during
// a call: never early, exactly once, none lost, Len, and within one call
// deadlines in order for the timers that were pending before it.
func reentrant[H comparable](t *testing.T, name string, newQueue func() queue.Queue[H], slack func(at, when int64) int64, unordered bool) {
	for seed := uint64(0); seed < 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		q := newQueue()
		var hs []H
		var when, at []int64
		var pending []bool
		index := map[H]int{}
		now := int64(0)
		add := func(w int64) {
			h := q.Schedule(w)
			index[h] = len(hs)
			hs = append(hs, h)
			when, at, pending = append(when, max(w, now)), append(at, now), append(pending, true)
		}
		for range 20 {
			add(r.Int64N(300))
		}
		for round := 0; round < 60 && q.Len() > 0; round++ {
			target := now + r.Int64N(40)
			before := map[int]bool{}
			for i, p := range pending {
				if p {
					before[i] = true
				}
			}
			var last int64 = math.MinInt64
			q.Expire(target, func(h H) {
				i := index[h]
				if !pending[i] {
					t.Fatalf("%s seed %d: timer %d fired while not pending", name, seed, i)
				}
				if when[i] > target {
					t.Fatalf("%s seed %d: timer %d due %d fired by Expire(%d)", name, seed, i, when[i], target)
				}
				if !unordered && slack == nil && before[i] {
					if when[i] < last {
						t.Fatalf("%s seed %d: timer %d due %d fired after one due %d", name, seed, i, when[i], last)
					}
					last = when[i]
				}
				pending[i] = false
				for range r.IntN(3) {
					j := r.IntN(len(hs))
					w := target + 1 + r.Int64N(100) // after this call: what "now" is inside fire differs between structures
					switch r.IntN(3) {
					case 0:
						if got := q.Cancel(hs[j]); got != pending[j] && slack == nil {
							t.Fatalf("%s seed %d: Cancel(%d) in fire = %v, model %v", name, seed, j, got, pending[j])
						}
						pending[j] = false
					case 1:
						q.Reschedule(hs[j], w)
						when[j], at[j], pending[j] = max(w, now), now, true
						delete(before, j)
					case 2:
						add(w)
					}
				}
			})
			now = max(now, target)
			n := 0
			for _, p := range pending {
				if p {
					n++
				}
			}
			if q.Len() != n {
				t.Fatalf("%s seed %d: Len() = %d, model %d", name, seed, q.Len(), n)
			}
		}
		for k := 0; k < 5 && q.Len() > 0; k++ {
			q.Expire(math.MaxInt64, func(h H) {
				if !pending[index[h]] {
					t.Fatalf("%s seed %d: timer fired twice at the end", name, seed)
				}
				pending[index[h]] = false
			})
		}
		for i, p := range pending {
			if p {
				t.Fatalf("%s seed %d: timer %d due %d never fired (Len %d)", name, seed, i, when[i], q.Len())
			}
		}
	}
}

// TestReentrantFire runs reentrant on every structure: the suite's
// only re-entrant test (TestFireMayReenter) is one fixed case.
func TestReentrantFire(t *testing.T) {
	for _, s := range suites {
		t.Run("engine="+s.name, s.random)
	}
}
