package lab_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/timewheel/timewheel/lab"
	"github.com/timewheel/timewheel/queue"
	"github.com/timewheel/timewheel/queue/queuetest"
)

// checkNext replays random operations on queues from newQueue with a model
// of the pending timers and calls check after every step with what Next
// returned, the least pending deadline and the least deadline+slack.
func checkNext[H comparable](t *testing.T, newQueue func() queue.Queue[H], slack func(at, when int64) int64, check func(seed int64, step int, got int64, gotOK bool, least, latest int64, pending int)) {
	t.Helper()
	for seed := int64(0); seed < 60; seed++ {
		q := newQueue()
		var hs []H
		var when, at []int64
		var pending []bool
		index := map[H]int{}
		now := int64(0)
		for step, op := range queuetest.RandomOps(seed, 400) {
			w := now + op.Arg
			if op.Arg > 0 && w < now {
				w = math.MaxInt64
			}
			switch op.Kind {
			case queuetest.OpSchedule:
				h := q.Schedule(w)
				index[h] = len(hs)
				hs = append(hs, h)
				when, at, pending = append(when, max(w, now)), append(at, now), append(pending, true)
			case queuetest.OpCancel:
				if len(hs) > 0 {
					i := op.Pick % len(hs)
					q.Cancel(hs[i])
					pending[i] = false
				}
			case queuetest.OpReschedule:
				if len(hs) > 0 {
					i := op.Pick % len(hs)
					q.Reschedule(hs[i], w)
					when[i], at[i], pending[i] = max(w, now), now, true
				}
			case queuetest.OpExpire:
				w = max(w, now)
				q.Expire(w, func(h H) { pending[index[h]] = false })
				now = w
			}
			least, latest, n := int64(math.MaxInt64), int64(math.MaxInt64), 0
			for i, p := range pending {
				if !p {
					continue
				}
				n++
				least = min(least, when[i])
				s := int64(0)
				if slack != nil {
					s = slack(at[i], when[i])
				}
				if l := when[i] + s; l >= when[i] {
					latest = min(latest, l)
				}
			}
			got, gotOK := q.Next()
			check(seed, step, got, gotOK, least, latest, n)
		}
	}
}

// TestLibcoNext: libco declares itself unordered, so the suite never
// compares its Next with the reference; but libco is exact in time, so
// Next must be the least pending deadline.
func TestLibcoNext(t *testing.T) {
	checkNext(t, func() queue.Queue[*lab.LibcoTimer] { return lab.NewLibco() }, nil,
		func(seed int64, step int, got int64, ok bool, least, latest int64, n int) {
			if ok != (n > 0) || ok && got != least {
				t.Fatalf("seed %d step %d: Next() = %d, %v; %d pending, least deadline %d", seed, step, got, ok, n, least)
			}
		})
}

// TestLinuxNext: the suite never checks the linux wheel's Next beyond
// its ok; it must lie between the least deadline and the least
// deadline+slack.
func TestLinuxNext(t *testing.T) {
	checkNext(t, func() queue.Queue[*lab.LinuxTimer] { return lab.NewLinux() }, lab.LinuxSlack,
		func(seed int64, step int, got int64, ok bool, least, latest int64, n int) {
			if ok != (n > 0) || ok && (got < least || got > latest) {
				t.Fatalf("seed %d step %d: Next() = %d, %v; %d pending, least deadline %d, latest allowed %d", seed, step, got, ok, n, least, latest)
			}
		})
}

// TestLinuxSlackBelow63 holds LinuxSlack to its documentation: "8/63
// of its delay, rounded down, which is zero below 63 ticks", and the
// type's "late ... by nothing below 63 ticks".
func TestLinuxSlackBelow63(t *testing.T) {
	for d := int64(1); d < 63; d++ {
		if s := lab.LinuxSlack(0, d); s != 0 {
			t.Fatalf("LinuxSlack(0, %d) = %d, documented as zero below 63 ticks", d, s)
		}
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
