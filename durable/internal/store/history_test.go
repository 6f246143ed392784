package store_test

import (
	"fmt"
	"testing"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// figs returns a kind's figures: started, succeeded, failed, retried,
// died, max lateness, then two lateness buckets.
func figs(v ...int64) []int64 { return v }

// record and hist: figures added to a kind's bucket and the queue's, in
// the minute and the hour; a max kept as a max; a slot that held a
// bucket of a day before starts anew; a bucket out of the ring's span
// not returned; the hashes expire.
func TestScriptRecord(t *testing.T) {
	servers(t, func(e *env) {
		keys := []string{e.k.Hist(false, "", true), e.k.Hist(true, "", true), e.k.Hist(false, "a", false), e.k.Hist(true, "a", false), e.k.Hist(false, "b", false), e.k.Hist(true, "b", false), e.k.HistKinds()}
		e.rdb.Del(e.ctx, keys...)
		t.Cleanup(func() { e.rdb.Del(e.ctx, keys...) })
		now := e.now()
		min := now / 60_000_000
		// A day ago, in the same slot: overwritten.
		e.do(e.rdb.HSet(e.ctx, e.k.Hist(false, "a", false), fmt.Sprint(min%store.Minutes), fmt.Sprintf("%d 9 9 9 9 9 9 9 9", min-store.Minutes)))
		if err := e.st.Record(e.ctx, e.k, now, map[string][]int64{"a": figs(2, 1, 1, 1, 0, 700, 1, 1), "b": figs(1, 1, 0, 0, 0, 300, 1, 0)}); err != nil {
			t.Fatal(err)
		}
		if err := e.st.Record(e.ctx, e.k, now, map[string][]int64{"a": figs(1, 0, 1, 0, 1, 500, 0, 1)}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			hourly bool
			kind   string
			all    bool
			want   string
		}{
			{false, "a", false, fmt.Sprint([]int64{3, 1, 2, 1, 1, 700, 1, 2})},
			{true, "a", false, fmt.Sprint([]int64{3, 1, 2, 1, 1, 700, 1, 2})},
			{false, "b", false, fmt.Sprint([]int64{1, 1, 0, 0, 0, 300, 1, 0})},
			{false, "", true, fmt.Sprint([]int64{4, 2, 2, 1, 1, 700, 2, 2})},
			{true, "", true, fmt.Sprint([]int64{4, 2, 2, 1, 1, 700, 2, 2})},
		} {
			bs, at, err := e.st.History(e.ctx, e.k, c.hourly, c.kind, c.all)
			if err != nil || len(bs) != 1 || at < now {
				t.Fatalf("History(%v, %q, %v) = %v, %d, %v", c.hourly, c.kind, c.all, bs, at, err)
			}
			if got := fmt.Sprint(bs[0].Figs); got != c.want {
				t.Errorf("History(%v, %q, %v) = %s; want %s", c.hourly, c.kind, c.all, got, c.want)
			}
		}
		// A bucket from before the ring's span, in another slot: not read.
		e.do(e.rdb.HSet(e.ctx, e.k.Hist(false, "b", false), fmt.Sprint((min-5)%store.Minutes), fmt.Sprintf("%d 1 1 1 1 1 1 1 1", min-5-store.Minutes)))
		if bs, _, _ := e.st.History(e.ctx, e.k, false, "b", false); len(bs) != 1 {
			t.Errorf("History of b read %d buckets; want 1 (the old one out of span)", len(bs))
		}
		if ttl := e.rdb.PTTL(e.ctx, e.k.Hist(false, "a", false)).Val(); ttl.Hours() > 24 || ttl <= 0 {
			t.Errorf("a's minutes expire in %v; want within a day", ttl)
		}
		if ttl := e.rdb.PTTL(e.ctx, e.k.Hist(true, "", true)).Val(); ttl.Hours() > 720 || ttl.Hours() < 719 {
			t.Errorf("the queue's hours expire in %v; want 30 days", ttl)
		}
		kinds, err := e.st.HistoryKinds(e.ctx, e.k, 10)
		if err != nil || len(kinds) != 2 {
			t.Errorf("HistoryKinds = %v, %v; want a and b", kinds, err)
		}
		if err := e.st.Record(e.ctx, e.k, now, map[string][]int64{"a": figs(1), "b": figs(1, 2, 3, 4, 5, 6)}); err == nil {
			t.Error("Record of figures of two lengths: no error")
		}
	})
}
