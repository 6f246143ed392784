package lab_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/timewheel/timewheel/lab"
	"github.com/timewheel/timewheel/lab/workload"
)

// TestLibcoLongTimerFiresOnItsTick drives a libco wheel one tick at a
// time, as co_eventloop does, past a timer three minutes out: clamped and
// re-added three times, it still fires on its tick.
func TestLibcoLongTimerFiresOnItsTick(t *testing.T) {
	c := lab.NewLibco()
	const due = 3*lab.LibcoSlots + 5
	c.Schedule(due)
	for now := int64(1); now <= due; now++ {
		if n := c.Expire(now, func(*lab.LibcoTimer) {}); n != 0 && now != due || n != 1 && now == due {
			t.Fatalf("Expire(%d) fired %d", now, n)
		}
	}
	if c.Len() != 0 {
		t.Fatalf("Len() = %d after the deadline", c.Len())
	}
}

// TestLibcoReaddedTimerLosesItsPlace shows why libco declares itself
// unordered: a long timer re-added to its slot goes behind a timer
// scheduled later for the same tick.
func TestLibcoReaddedTimerLosesItsPlace(t *testing.T) {
	c := lab.NewLibco()
	first := c.Schedule(70_000) // clamped to the slot of tick 59,999
	c.Expire(20_000, func(*lab.LibcoTimer) {})
	second := c.Schedule(70_000) // fits: goes straight to the slot of tick 70,000
	var order []*lab.LibcoTimer
	for now := int64(20_001); now <= 70_000; now++ {
		c.Expire(now, func(x *lab.LibcoTimer) { order = append(order, x) })
	}
	if len(order) != 2 || order[0] != second || order[1] != first {
		t.Fatalf("fired %d timers, want the second scheduled first", len(order))
	}
}

// TestLinuxLatenessBound checks the linux wheel against the slack it
// declares over delays at every level boundary and between.
func TestLinuxLatenessBound(t *testing.T) {
	var delays []int64
	for d := int64(1); d < 1<<40; d = d*3/2 + 1 {
		delays = append(delays, d, d+7)
	}
	for lvl := int64(1); lvl < 14; lvl++ {
		b := int64(63) << (3 * (lvl - 1))
		delays = append(delays, b-1, b, b+1)
	}
	for _, start := range []int64{0, 1, 12345} {
		for _, d := range delays {
			w := lab.NewLinux()
			w.Expire(start, func(*lab.LinuxTimer) {})
			w.Schedule(start + d)
			next, _ := w.Next()
			late := next - (start + d)
			if late < 0 || late > lab.LinuxSlack(start, start+d) {
				t.Fatalf("delay %d from %d fires at %d: %d late, slack %d", d, start, next, late, lab.LinuxSlack(start, start+d))
			}
			if w.Expire(next-1, func(*lab.LinuxTimer) {}) != 0 || w.Expire(next, func(*lab.LinuxTimer) {}) != 1 {
				t.Fatalf("delay %d from %d does not fire at Next() = %d", d, start, next)
			}
		}
	}
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

// TestNewRoundsPanics checks the message of a bad slot count.
func TestNewRoundsPanics(t *testing.T) {
	defer func() {
		if r := recover(); fmt.Sprint(r) != "lab: NewRounds called with 500 slots, not a power of two" {
			t.Fatalf("recovered %v", r)
		}
	}()
	lab.NewRounds(500)
}

func ExampleStructures() {
	for _, s := range lab.Structures()[:3] {
		c := s.Claims
		fmt.Printf("%-9s schedule %-8s cancel %-5s expire %-5s (%s)\n", s.Name, c.Schedule.Cost, c.Cancel.Cost, c.Expire.Cost, c.Expire.Source)
	}
	// Output:
	// unordered schedule O(1)     cancel O(n)  expire O(n)  (004)
	// sorted    schedule O(n)     cancel O(1)  expire O(1)  (004)
	// heap      schedule O(lg n)  cancel O(1)  expire O(1)  (004)
}

func ExampleLibco() {
	c := lab.NewLibco()
	c.Schedule(90_000) // a minute and a half: clamped into the last slot
	fmt.Println(c.Expire(60_000, func(*lab.LibcoTimer) {}), "fired at one minute;", c.Len(), "re-added")
	fmt.Println(c.Expire(90_000, func(*lab.LibcoTimer) {}), "fired at its tick")
	// Output:
	// 0 fired at one minute; 1 re-added
	// 1 fired at its tick
}

// TestEveryContenderRunsEveryWorkload runs each row of the lab through
// every workload it supports, at a tiny size: each structure's one
// register call must give a contender that measures.
func TestEveryContenderRunsEveryWorkload(t *testing.T) {
	cs := lab.Contenders()
	if len(cs) != len(lab.Structures())+2 {
		t.Fatalf("%d contenders for %d structures, want the structures, time and timewheel", len(cs), len(lab.Structures()))
	}
	cfg := workload.Config{Contenders: cs, Kinds: workload.Kinds(), Sizes: []int{16},
		Budget: workload.Budget{Round: time.Microsecond, Cell: time.Minute, Fill: time.Minute, Far: time.Minute}, Seed: 1}
	rs := workload.Run(cfg)
	if len(rs) != workload.Cells(cfg) {
		t.Fatalf("%d results, want %d", len(rs), workload.Cells(cfg))
	}
	for _, r := range rs {
		if r.Status != workload.OK || r.Ops <= 0 {
			t.Errorf("%s %s n=%d: %s after %d ops", r.Contender, r.Workload, r.N, r.Status, r.Ops)
		}
	}
}

// TestCountingIsExact runs the counting pass twice on every contender at
// two small sizes (far, whose day of clock steps is slow under the race
// detector for libco and rounds, on the wheels and a heap): every
// counting structure has a count at every size, the two passes count the
// same steps to the step, and the steps of the operations whose cost is
// one link or unlink come out at exactly that.
func TestCountingIsExact(t *testing.T) {
	var near, far []workload.Contender
	for _, c := range lab.Contenders() {
		near = append(near, c)
		if c.Name == "wheel" || c.Name == "linux" || c.Name == "heap" {
			far = append(far, c)
		}
	}
	nearKinds := slices.DeleteFunc(workload.Kinds(), func(k workload.Kind) bool { return k == workload.Far })
	count := func() []workload.Result {
		rs := workload.CountSteps(workload.Config{Contenders: near, Kinds: nearKinds, Sizes: []int{64, 512}, Seed: 1})
		return append(rs, workload.CountSteps(workload.Config{Contenders: far, Kinds: []workload.Kind{workload.Far}, Sizes: []int{64, 512}, Seed: 1})...)
	}
	cells := workload.CountCells(workload.Config{Contenders: near, Kinds: nearKinds, Sizes: []int{64, 512}}) +
		workload.CountCells(workload.Config{Contenders: far, Kinds: []workload.Kind{workload.Far}, Sizes: []int{64, 512}})
	first, second := count(), count()
	if len(first) != cells || len(second) != len(first) {
		t.Fatalf("%d and %d results, want %d", len(first), len(second), cells)
	}
	for i, r := range first {
		if r.Contender == "time" || r.Contender == "timewheel" || r.Workload == workload.Memory {
			t.Errorf("%s %s has steps", r.Contender, r.Workload)
		}
		if r.Status != workload.OK || r.Steps <= 0 {
			t.Errorf("%s %s n=%d: %s, %d steps", r.Contender, r.Workload, r.N, r.Status, r.Steps)
		}
		if s := second[i]; s.Contender != r.Contender || s.Workload != r.Workload || s.N != r.N || s.Steps != r.Steps {
			t.Errorf("%s %s n=%d: %d steps, then %d", r.Contender, r.Workload, r.N, r.Steps, s.Steps)
		}
	}
	want := map[workload.Kind]float64{workload.Schedule: 1, workload.Cancel: 1, workload.Churn: 2, workload.Refresh: 2}
	for _, r := range first {
		if w, ok := want[r.Workload]; ok && (r.Contender == "wheel" || r.Contender == "linux" || r.Contender == "unordered") && r.Value != w {
			t.Errorf("%s %s n=%d: %g steps/op, want %g (a link, an unlink)", r.Contender, r.Workload, r.N, r.Value, w)
		}
	}
}
