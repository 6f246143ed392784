package lab_test

import (
	"math"
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
