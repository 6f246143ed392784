package expiry

import (
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// TestStats: every figure after a known sequence of operations.
func TestStats(t *testing.T) {
	f := newFixture(t, WithCapacity(3), WithGranularity(time.Second))
	want := func(step string, want Stats) {
		t.Helper()
		if got := f.m.Stats(); got != want {
			t.Fatalf("after %s: stats %+v, want %+v", step, got, want)
		}
	}
	want("New", Stats{})
	f.set("a", 1, time.Second)
	f.set("b", 2, 2*time.Second)
	f.set("c", 3, 2*time.Second)
	want("3 Set", Stats{Entries: 3, Buckets: 2})
	f.wantGet("a", 1, true)
	f.wantGet("x", 0, false)
	want("a hit and a miss", Stats{Entries: 3, Buckets: 2, Hits: 1, Misses: 1})
	f.set("b", 20, 2*time.Second) // replaces
	f.m.Delete("c")
	f.set("d", 4, 3*time.Second)
	f.set("e", 5, 3*time.Second) // full: evicts a, the closest to expiry
	want("replace, delete, evict", Stats{Entries: 3, Buckets: 2, Hits: 1, Misses: 1,
		Deleted: 1, Replaced: 1, Capacity: 1})
	f.advanceTo(2 * time.Second)
	f.wantGet("b", 0, false)
	want("b expired", Stats{Entries: 2, Buckets: 1, Hits: 1, Misses: 2,
		Expired: 1, Deleted: 1, Replaced: 1, Capacity: 1})
}

// TestStatsBacklog: callbacks queued behind a callback that blocks are the
// backlog, until they run.
func TestStatsBacklog(t *testing.T) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	m := New[string, int](WithWheel(w), WithOnEvict(func(string, int, Reason) {
		once.Do(func() { close(entered); <-release })
	}))
	defer m.Close()
	for _, k := range []string{"a", "b", "c"} {
		m.Set(k, 0, time.Second)
		m.Delete(k)
		if k == "a" {
			<-entered // a's callback is running: it is not backlog
		}
	}
	if st := m.Stats(); st.Backlog != 2 || st.Deleted != 3 {
		t.Fatalf("stats %+v with a callback blocked, want a backlog of 2", st)
	}
	close(release)
	m.Flush()
	if st := m.Stats(); st.Backlog != 0 {
		t.Fatalf("stats %+v after Flush, want no backlog", st)
	}
}
