package timewheel_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/queue"
)

// FuzzScheduler drives a wheel on a virtual clock with random AfterFunc,
// Stop, Reset and Advance calls and holds it against a model built on
// queue.Reference: every callback must run exactly at the first tick
// boundary at or after its deadline (the virtual clock stops there), in
// the model's order, and Stop and Reset must return what the model says.
// The one freedom: a timer whose Reset postponed it (pending, moved to a
// deadline no earlier) may take any place among the timers of its tick,
// while the others keep the model's order among themselves.
func FuzzScheduler(f *testing.F) {
	f.Add([]byte{1, 0, 3, 0, 10, 3, 2, 0, 3, 1, 0, 20, 0, 5, 0, 1, 3, 4, 0, 0})
	f.Add([]byte{7, 0, 6, 1, 0, 0, 7, 2, 2, 2, 5, 9, 3, 3, 0, 0, 3, 6, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		tick := []time.Duration{time.Millisecond, 7 * time.Millisecond, time.Nanosecond, time.Second}[data[0]%4]
		checkScheduler(t, tick, data[1:])
	})
}

// TestSchedulerAgainstModel runs the fuzz check on seeded random inputs.
func TestSchedulerAgainstModel(t *testing.T) {
	for seed := range 50 {
		data := make([]byte, 400)
		r := rng(seed + 1)
		for i := range data {
			data[i] = byte(r.next())
		}
		for _, tick := range []time.Duration{time.Millisecond, 7 * time.Millisecond} {
			t.Run(fmt.Sprintf("seed=%d/tick=%v", seed, tick), func(t *testing.T) {
				checkScheduler(t, tick, data)
			})
		}
	}
}

// duration draws a duration at several scales from two bytes.
func duration(class, v byte) time.Duration {
	n := time.Duration(v)
	switch class % 6 {
	case 0:
		return n * time.Microsecond * 37
	case 1:
		return n * time.Millisecond
	case 2:
		return n * time.Second * 13
	case 3:
		return -n * time.Millisecond
	case 4:
		return n * 24 * time.Hour
	default:
		return math.MaxInt64 - n
	}
}

// fired is one callback run: which timer, and when, since the epoch.
type fired struct {
	id int
	at time.Duration
}

func checkScheduler(t *testing.T, tick time.Duration, data []byte) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(epoch)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithTick(tick), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	ref := queue.NewReference()
	var timers []*timewheel.Timer
	var refs []*queue.RefTimer
	var postponed []bool // the timer's last Reset postponed it
	var got []fired

	// dueTick is the model's deadline: rounded up to the tick, or the
	// current tick if due now, saturated at the end of time.
	dueTick := func(d time.Duration) int64 {
		ns := int64(clk.Now().Sub(epoch))
		if d <= 0 {
			return ns / int64(tick)
		}
		if ns > math.MaxInt64-int64(d) {
			return math.MaxInt64 / int64(tick)
		}
		return (ns+int64(d)-1)/int64(tick) + 1 // round up without overflow
	}
	for step := 0; len(data) >= 3; step++ {
		op, a, b := data[0]%4, data[1], data[2]
		data = data[3:]
		switch op {
		case 0:
			id := len(timers)
			d := duration(a, b)
			timers = append(timers, w.AfterFunc(d, func() { got = append(got, fired{id, clk.Now().Sub(epoch)}) }))
			refs = append(refs, ref.Schedule(dueTick(d)))
			postponed = append(postponed, false)
		case 1, 2:
			if len(timers) == 0 {
				continue
			}
			i := int(a) % len(timers)
			old := refs[i].When()
			want := ref.Cancel(refs[i])
			var res bool
			if op == 1 {
				res = timers[i].Stop()
			} else {
				d := duration(b, a)
				res = timers[i].Reset(d)
				when := dueTick(d)
				ref.Reschedule(refs[i], when)
				postponed[i] = want && when >= old
			}
			if res != want {
				t.Fatalf("step %d: %s(timer %d) = %v, model says %v", step, []string{"", "Stop", "Reset"}[op], i, res, want)
			}
		case 3:
			start := clk.Now()
			target := start.Add(duration(a%3, b))
			got = got[:0]
			clk.AdvanceTo(target)
			var want []fired
			ref.Expire(int64(target.Sub(epoch))/int64(tick), func(r *queue.RefTimer) {
				at := time.Duration(r.When()) * tick
				if at < start.Sub(epoch) {
					at = start.Sub(epoch) // due now: runs when the clock next moves
				}
				want = append(want, fired{slices.Index(refs, r), at})
			})
			if !sameFires(got, want, postponed) {
				t.Fatalf("step %d: advancing %v to %v fired %v, model says %v (postponed: %v)", step, start.Sub(epoch), target.Sub(epoch), got, want, postponed)
			}
		}
		if w.Len() != ref.Len() {
			t.Fatalf("step %d: Len() = %d, model says %d", step, w.Len(), ref.Len())
		}
	}
}

// sameFires reports whether got and want hold the same fires at the same
// times, and, leaving out the postponed timers, in the same order.
func sameFires(got, want []fired, postponed []bool) bool {
	if len(got) != len(want) {
		return false
	}
	cmp := func(a, b fired) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.id - b.id
	}
	// The same fires at the same times, whatever their order.
	if !slices.Equal(slices.SortedFunc(slices.Values(got), cmp), slices.SortedFunc(slices.Values(want), cmp)) {
		return false
	}
	// In the order of their times.
	if !slices.IsSortedFunc(got, func(a, b fired) int { return int(a.at - b.at) }) {
		return false
	}
	strict := func(fs []fired) []fired {
		return slices.DeleteFunc(slices.Clone(fs), func(f fired) bool { return postponed[f.id] })
	}
	return slices.Equal(strict(got), strict(want))
}
