package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// beat and procs: a worker's fields written with its beat, read back
// newest first; a beat replaces the last one's fields; the hash expires
// an hour after it; a worker older than Keep is trimmed by the next beat.
func TestScriptBeat(t *testing.T) {
	servers(t, func(e *env) {
		e.rdb.Del(e.ctx, e.k.Procs(), e.k.Proc("w1"), e.k.Proc("w2"), e.k.Proc("old"))
		t.Cleanup(func() { e.rdb.Del(e.ctx, e.k.Procs(), e.k.Proc("w1"), e.k.Proc("w2"), e.k.Proc("old")) })
		e.zadd(e.k.Procs(), "old", 1)
		e.do(e.rdb.HSet(e.ctx, e.k.Proc("old"), "host", "gone"))
		now, err := e.st.Beat(e.ctx, e.k, "w1", []string{"host", "h1", "running", "3", "jobs", "a"})
		if err != nil || now < e.now()-1_000_000 {
			t.Fatalf("Beat = %d, %v", now, err)
		}
		if _, err := e.st.Beat(e.ctx, e.k, "w2", []string{"host", "h2"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.Beat(e.ctx, e.k, "w1", []string{"host", "h1", "running", "0"}); err != nil {
			t.Fatal(err)
		}
		ps, at, err := e.st.Procs(e.ctx, e.k, 10)
		if err != nil || at < now {
			t.Fatalf("Procs = %v, %d, %v", ps, at, err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, fmt.Sprintf("%s host=%s running=%s jobs=%q beat-ok=%v", p.Worker, p.Fields["host"], p.Fields["running"], p.Fields["jobs"], p.Fields["beat"] == fmt.Sprint(p.Beat)))
		}
		want := `w1 host=h1 running=0 jobs="" beat-ok=true|w2 host=h2 running= jobs="" beat-ok=true`
		if strings.Join(got, "|") != want {
			t.Errorf("Procs:\n%s\nwant\n%s", strings.Join(got, "|"), want)
		}
		if ttl := e.rdb.PTTL(e.ctx, e.k.Proc("w1")).Val().Microseconds(); ttl <= 0 || ttl > store.Keep {
			t.Errorf("w1's hash expires in %d µs; want within Keep", ttl)
		}
		if n := e.rdb.Exists(e.ctx, e.k.Proc("old")).Val(); n != 1 {
			t.Errorf("old's hash: %d; left to its own expiry", n) // trimmed from :procs only
		}
		if ps, _, _ := e.st.Procs(e.ctx, e.k, 1); len(ps) != 1 || ps[0].Worker != "w1" {
			t.Errorf("Procs of 1 = %v; want w1", ps)
		}
	})
}

// leases: each ID's :run and :due score, "" and -1 when absent.
func TestScriptLeases(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		e.lease("a", "w1", 2, now, now+lease)
		e.pending("b", far)
		st, at, err := e.st.Leases(e.ctx, e.k, []string{"a", "b", "gone"})
		if err != nil || at < now || len(st) != 3 {
			t.Fatalf("Leases = %v, %d, %v", st, at, err)
		}
		want := []store.Standing{{Run: store.Token{Attempt: 2, Worker: "w1", Due: now}, Score: now + lease}, {Score: far}, {Score: -1}}
		for i := range want {
			if st[i] != want[i] {
				t.Errorf("Leases[%d] = %+v; want %+v", i, st[i], want[i])
			}
		}
	})
}

// procs: the workers of :procs newest first, each with its beat (its
// score) and its hash's fields (none once the hash expired), up to the
// limit; none when there are none; the keys read only.
func TestScriptProcs(t *testing.T) {
	servers(t, func(e *env) {
		keys := []string{e.k.Procs(), e.k.Proc("w1"), e.k.Proc("w2"), e.k.Proc("w3")}
		e.rdb.Del(e.ctx, keys...)
		t.Cleanup(func() { e.rdb.Del(e.ctx, keys...) })
		now := e.now()
		ps, at, err := e.st.Procs(e.ctx, e.k, 10)
		if err != nil || len(ps) != 0 || at < now {
			t.Fatalf("Procs of none = %v, %d, %v", ps, at, err)
		}
		e.zadd(e.k.Procs(), "w1", now-1_000_000)
		e.zadd(e.k.Procs(), "w2", now-3_000_000)
		e.zadd(e.k.Procs(), "w3", now-2_000_000) // its hash expired
		e.do(e.rdb.HSet(e.ctx, e.k.Proc("w1"), "host", "h1", "running", "2"))
		e.do(e.rdb.HSet(e.ctx, e.k.Proc("w2"), "host", "h2"))
		for _, c := range []struct {
			limit int
			want  string
		}{
			{10, fmt.Sprintf("[{w1 %d map[host:h1 running:2]} {w3 %d map[]} {w2 %d map[host:h2]}]", now-1_000_000, now-2_000_000, now-3_000_000)},
			{2, fmt.Sprintf("[{w1 %d map[host:h1 running:2]} {w3 %d map[]}]", now-1_000_000, now-2_000_000)},
		} {
			ps, at, err := e.st.Procs(e.ctx, e.k, c.limit)
			if got := fmt.Sprint(ps); err != nil || got != c.want || at < now {
				t.Errorf("Procs(%d) = %s, %d, %v; want %s, now", c.limit, got, at, err, c.want)
			}
		}
		if n := e.rdb.ZCard(e.ctx, e.k.Procs()).Val(); n != 3 || e.rdb.Exists(e.ctx, e.k.Proc("w3")).Val() != 0 {
			t.Errorf("Procs changed the registry: %d workers", n)
		}
	})
}
