package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// kinds: the jobs counted by kind and state (pending, leased ahead as
// pending, a lease of a worker no longer live as pending, running, dead),
// over walks of a budget each until the cursor comes back "0".
func TestScriptKinds(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		e.pending("p1", far)
		e.pending("p2", past)
		e.live("w1", now+lease)
		e.live("wd", now-1)
		e.lease("ahead", "w1", 1, far, far+lease)
		e.lease("ranout", "wd", 1, past, past+lease)
		e.lease("run", "w1", 1, now, now+lease)
		e.job("d", "x", "")
		e.dead("d", "boom")
		for i := range 40 {
			e.job(fmt.Sprint("x", i), "x", "")
			e.due(fmt.Sprint("x", i), far)
		}
		sum := map[string]store.KindCount{}
		cursor, calls := "0", 0
		for {
			v, err := e.st.Kinds(e.ctx, e.k, cursor, 10)
			if err != nil || v.Jobs != 46 || v.Now < now {
				t.Fatalf("Kinds = %+v, %v", v, err)
			}
			for _, c := range v.Kinds {
				s := sum[c.Kind]
				s.Kind = c.Kind
				s.Pending += c.Pending
				s.Running += c.Running
				s.Dead += c.Dead
				sum[c.Kind] = s
			}
			calls++
			if cursor = v.Cursor; cursor == "0" {
				break
			}
		}
		got := []store.KindCount{sum["k"], sum["x"]}
		want := []store.KindCount{{Kind: "k", Pending: 4, Running: 1}, {Kind: "x", Pending: 40, Dead: 1}}
		if !slices.Equal(got, want) || len(sum) != 2 {
			t.Errorf("Kinds summed over %d calls = %v; want %v", calls, sum, want)
		}
	})
}
