package lab

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/timewheel/timewheel/lab/workload"
)

// TestWheelStepsPlacesAsTheWheel holds wheelSteps's idea of where the
// engine files an entry to the engine itself. NextWake answers the start
// of the first occupied slot when that slot holds more than 64 entries
// whose earliest deadline the wheel has not looked for, which is so of
// every slot that entries have just been filed or moved into: 65 entries
// at one deadline show which slot the wheel put them in, and after each
// Expire that reaches it, which slot they moved down to. The steps are
// held to a count worked out from the deadline's digits alone: a slot
// reached and an Expire call for each level the entries pass through, a
// move for each of those above level 0, a link and a fire for each entry.
func TestWheelStepsPlacesAsTheWheel(t *testing.T) {
	const entries = 65
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		steps := new(workload.Steps)
		m := newWheelSteps(steps).(*wheelSteps)
		now := r.Int64N(1 << 50)
		m.Expire(now, func(*wheelEntry) {}) // nothing pending: moves the current tick
		when := now + 1 + r.Int64N(int64(1)<<(6*r.IntN(8)+r.IntN(6)))
		before := steps.Total()
		var es []*wheelEntry
		for range entries {
			es = append(es, m.Schedule(when))
		}
		for reached := 0; ; reached++ {
			s := es[0].slot
			if reached > 11 { // eleven levels: no entry moves down more often
				t.Fatalf("trial %d: deadline %d has not fired after %d slots", trial, when, reached)
			}
			if s.level < 0 {
				t.Fatalf("trial %d: deadline %d at tick %d went to the due list", trial, when, m.w.Now())
			}
			if wake, _ := m.w.NextWake(); wake != s.start {
				t.Fatalf("trial %d: deadline %d at tick %d: the lab files it in the level-%d slot starting %d, the wheel wakes at %d",
					trial, when, m.w.Now(), s.level, s.start, wake)
			}
			fired := m.Expire(s.start, func(*wheelEntry) {})
			if fired > 0 {
				if fired != entries || s.start != when {
					t.Fatalf("trial %d: deadline %d: %d fired at %d", trial, when, fired, s.start)
				}
				break
			}
		}
		// The levels the entries pass through: the highest digit in which
		// the deadline and the tick it was scheduled at differ, then each
		// lower digit of the deadline that is not zero.
		top := (bits.Len64(uint64(when^now)) - 1) / 6
		levels, moves := 0, 0
		for k := top; k >= 0; k-- {
			if k == top || when>>(6*k)&63 != 0 {
				levels++
				if k > 0 {
					moves++
				}
			}
		}
		want := int64(entries + 2*levels + entries*moves + entries)
		if got := steps.Total() - before; got != want {
			t.Fatalf("trial %d: deadline %d at tick %d: %d steps, want %d (%d levels, %d moves each)", trial, when, now, got, want, levels, moves)
		}
	}
}

// TestWheelStepsCountsWhatTheWheelDoes runs random operations on a
// wheelSteps and checks that it changes nothing of the wheel's: what
// fires and when is what a plain wheel fires, and Len agrees.
func TestWheelStepsCountsWhatTheWheelDoes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	steps := new(workload.Steps)
	m := newWheelSteps(steps).(*wheelSteps)
	var live []*wheelEntry
	now := int64(0)
	for step := range 20000 {
		switch op := r.IntN(10); {
		case op < 5 || len(live) == 0:
			live = append(live, m.Schedule(now+r.Int64N(5000)))
		case op < 7:
			i := r.IntN(len(live))
			m.Cancel(live[i])
			live = append(live[:i], live[i+1:]...)
		case op < 8:
			m.Reschedule(live[r.IntN(len(live))], now+r.Int64N(5000))
		default:
			now += r.Int64N(300)
			m.Expire(now, func(e *wheelEntry) {
				if d := e.When(); d != -1 {
					t.Fatalf("step %d: fired entry still due at %d", step, d)
				}
			})
			kept := live[:0]
			for _, e := range live {
				if e.Pending() {
					kept = append(kept, e)
				} else if e.slot.level >= 0 {
					t.Fatalf("step %d: a fired entry is still filed at level %d", step, e.slot.level)
				}
			}
			live = kept
		}
		if m.Len() != len(live) {
			t.Fatalf("step %d: Len %d, %d live", step, m.Len(), len(live))
		}
	}
	if err := m.w.Verify(); err != nil {
		t.Fatal(err)
	}
}
