package store_test

import (
	"fmt"
	"slices"
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

// hist: the hash of the kind (or of the queue) asked for, by the minute
// or the hour; its buckets within the ring's span of the server's now,
// not one a day old nor one to come; none for a hash that does not
// exist; an error for a bucket that is not one; the keys read only.
func TestScriptHist(t *testing.T) {
	servers(t, func(e *env) {
		keys := []string{e.k.Hist(false, "a", false), e.k.Hist(true, "", true), e.k.Hist(false, "", true), e.k.Hist(false, "bad", false)}
		e.rdb.Del(e.ctx, keys...)
		t.Cleanup(func() { e.rdb.Del(e.ctx, keys...) })
		now := e.now()
		min, hour := now/60_000_000, now/3600_000_000
		bucket := func(i int64, n int64) string { return fmt.Sprintf("%d %d 0 0 0 0 %d 1 2", i, n, 10*n) }
		for _, i := range []int64{min - 3, min - 1} {
			e.do(e.rdb.HSet(e.ctx, e.k.Hist(false, "a", false), fmt.Sprint(i%store.Minutes), bucket(i, min-i)))
		}
		old, next := min-5-store.Minutes, min+10
		e.do(e.rdb.HSet(e.ctx, e.k.Hist(false, "a", false), fmt.Sprint(old%store.Minutes), bucket(old, 9), fmt.Sprint(next%store.Minutes), bucket(next, 8)))
		e.do(e.rdb.HSet(e.ctx, e.k.Hist(true, "", true), fmt.Sprint(hour%store.Hours), bucket(hour, 5)))
		e.do(e.rdb.HSet(e.ctx, e.k.Hist(false, "bad", false), "0", "1 2 3"))
		before := e.rdb.HGetAll(e.ctx, e.k.Hist(false, "a", false)).Val()
		for _, c := range []struct {
			hourly bool
			kind   string
			all    bool
			want   string
		}{
			{false, "a", false, fmt.Sprintf("[{%d [1 0 0 0 0 10 1 2]} {%d [3 0 0 0 0 30 1 2]}]", min-1, min-3)},
			{true, "", true, fmt.Sprintf("[{%d [5 0 0 0 0 50 1 2]}]", hour)},
			{false, "", true, "[]"},
			{true, "a", false, "[]"},
		} {
			bs, at, err := e.st.History(e.ctx, e.k, c.hourly, c.kind, c.all)
			slices.SortFunc(bs, func(a, b store.Bucket) int { return int(b.Index - a.Index) })
			if got := fmt.Sprint(bs); err != nil || got != c.want || at < now {
				t.Errorf("History(%v, %q, %v) = %s, %d, %v; want %s, now", c.hourly, c.kind, c.all, got, at, err, c.want)
			}
		}
		if bs, _, err := e.st.History(e.ctx, e.k, false, "bad", false); err == nil {
			t.Errorf("History of a bad bucket = %v; want an error", bs)
		}
		if after := e.rdb.HGetAll(e.ctx, e.k.Hist(false, "a", false)).Val(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("History changed a's minutes: %v; were %v", after, before)
		}
	})
}
