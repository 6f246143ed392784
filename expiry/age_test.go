package expiry

import (
	"sync"
	"testing"
	"time"
)

// TestAges: the time in the map of the entries that leave, by Reason,
// counted from the key's entry and not restarted by a replacing value.
func TestAges(t *testing.T) {
	f := newFixture(t, WithAges(), WithCapacity(2))
	f.set("a", 1, time.Hour)
	f.set("b", 1, time.Minute)
	f.clk.Advance(10 * time.Second)
	f.set("a", 2, time.Hour) // replaced: a's age goes on
	f.clk.Advance(5 * time.Second)
	f.m.Delete("a")                 // 15s
	f.clk.Advance(45 * time.Second) // b expires at 60s
	f.set("c", 1, time.Hour)
	f.set("d", 1, 2*time.Hour)
	f.clk.Advance(3 * time.Second)
	f.set("e", 1, 3*time.Hour) // evicts c, 3s old
	st := f.m.Stats()
	if st.DeletedAge != 15*time.Second || st.ExpiredAge != time.Minute || st.CapacityAge != 3*time.Second {
		t.Fatalf("ages: deleted %v, expired %v, capacity %v; want 15s, 1m, 3s", st.DeletedAge, st.ExpiredAge, st.CapacityAge)
	}
	if st.Deleted != 1 || st.Expired != 1 || st.Capacity != 1 {
		t.Fatalf("counts: %+v", st)
	}
}

// TestAgesOneKeyManyGoroutines writes and removes one key from many
// goroutines, then empties the map: no entry time is left behind.
func TestAgesOneKeyManyGoroutines(t *testing.T) {
	f := newFixture(t, WithAges())
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				switch (g + i) % 4 {
				case 0:
					f.m.Delete("k")
				case 1:
					f.m.Compute("k", time.Hour, func(v int, _ bool) (int, ComputeOp) { return v + 1, Write })
				case 2:
					f.m.Set("k", i, time.Duration(1+i%3)*time.Hour) // earlier deadlines replace the entry
				default:
					f.m.GetAndDelete("k")
				}
			}
		})
	}
	wg.Wait()
	f.m.Delete("k")
	n := 0
	f.m.ages.born.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Fatalf("%d entry times left for an empty map", n)
	}
}
