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
