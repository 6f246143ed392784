package store_test

import (
	"strings"
	"testing"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// layout: a read of a new name reads 0 and writes nothing; the first
// write of a new name writes it, later ones read it; a queue with jobs
// and no record reads as 1 shard, unwritten; a record of a later
// version is refused; SetLayout writes over.
func TestScriptLayout(t *testing.T) {
	servers(t, func(e *env) {
		l, err := e.st.Layout(e.ctx, e.k, 0)
		check(t, "Layout read of a new name", l, err, store.Layout{})
		l, err = e.st.Layout(e.ctx, e.k, 3)
		check(t, "Layout write of 3", l, err, store.Layout{Shards: 3, Version: store.Version, Written: true})
		l, err = e.st.Layout(e.ctx, e.k, 2)
		check(t, "Layout of 2 after 3", l, err, store.Layout{Shards: 3, Version: store.Version})
		e.keysAre("after Layout", "layout: shards=3 version=1")
		check(t, "SetLayout 5", e.st.SetLayout(e.ctx, e.k, 5), nil, nil)
		e.keysAre("after SetLayout", "layout: shards=5 version=1")

		e.rdb.Del(e.ctx, e.k.Layout())
		e.pending("old", far)
		l, err = e.st.Layout(e.ctx, e.k, 3)
		check(t, "Layout of a queue made before the record", l, err, store.Layout{Shards: 1, Version: 1})
		e.keysAre("after Layout of an old queue", "due: old="+itoa(far), "job: old=k|p-old")

		e.do(e.rdb.HSet(e.ctx, e.k.Layout(), "shards", 1, "version", store.Version+1))
		if _, err := e.st.Layout(e.ctx, e.k, 1); err == nil || !strings.Contains(err.Error(), "version 2") {
			t.Errorf("Layout of version 2: %v", err)
		}
	})
}

// snap: a pending job due past the margin and a dead one read whole;
// one due within the margin, a held one, a parked one and a missing ID
// not.
func TestScriptSnap(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		e.pending("far", far)
		e.job("d", "k", "pd")
		e.run("d", "2")
		e.dead("d", "boom")
		e.pending("soon", now+1_000_000)
		e.lease("held", "w1", 1, far, far+lease)
		e.job("parked", "p", "")
		e.zadd(e.k.Park("p"), "parked", past)
		for _, c := range []struct {
			id   string
			ok   bool
			want store.Snapshot
		}{
			{"far", true, store.Snapshot{Blob: "k\x00p-far", Score: itoa(far)}},
			{"d", true, store.Snapshot{Blob: "k\x00pd", Run: "2", Dead: "boom"}},
			{"soon", false, store.Snapshot{}},
			{"held", false, store.Snapshot{}},
			{"parked", false, store.Snapshot{}},
			{"none", false, store.Snapshot{}},
		} {
			s, ok, err := e.st.Snap(e.ctx, e.k, c.id, 10_000_000)
			if err != nil || ok != c.ok || s != c.want {
				t.Errorf("Snap %s = %+v, %v, %v; want %+v, %v", c.id, s, ok, err, c.want, c.ok)
			}
		}
	})
}

// put: a job added as read (and announced), a dead one with its :run
// and :dead; the same job again true, a different one under the ID
// false.
func TestScriptPut(t *testing.T) {
	servers(t, func(e *env) {
		s := store.Snapshot{Blob: "k\x00p", Score: itoa(far)}
		ok, err := e.st.Put(e.ctx, e.k, "j", s)
		check(t, "Put j", ok, err, true)
		ok, err = e.st.Put(e.ctx, e.k, "j", s)
		check(t, "Put j again", ok, err, true)
		ok, err = e.st.Put(e.ctx, e.k, "j", store.Snapshot{Blob: "k\x00other", Score: itoa(far)})
		check(t, "Put another j", ok, err, false)
		ok, err = e.st.Put(e.ctx, e.k, "d", store.Snapshot{Blob: "k\x00", Run: "2", Dead: "boom"})
		check(t, "Put dead d", ok, err, true)
		e.keysAre("after Put", "due: j="+itoa(far), "job: d=k| j=k|p", "run: d=2", "dead: d=boom")
	})
}

// drop: a job deleted while it is as its snapshot read it, pending or
// dead; not once changed.
func TestScriptDrop(t *testing.T) {
	servers(t, func(e *env) {
		s := store.Snapshot{Blob: "k\x00p", Score: itoa(far)}
		dead := store.Snapshot{Blob: "k\x00", Run: "2", Dead: "boom"}
		for id, snap := range map[string]store.Snapshot{"j": s, "d": dead} {
			if ok, err := e.st.Put(e.ctx, e.k, id, snap); !ok || err != nil {
				t.Fatalf("Put %s: %v, %v", id, ok, err)
			}
		}
		ok, err := e.st.Drop(e.ctx, e.k, "j", store.Snapshot{Blob: "k\x00p", Score: itoa(far + 1)})
		check(t, "Drop of a changed j", ok, err, false)
		e.keysAre("after a refused Drop", "due: j="+itoa(far), "job: d=k| j=k|p", "run: d=2", "dead: d=boom")
		ok, err = e.st.Drop(e.ctx, e.k, "j", s)
		check(t, "Drop j", ok, err, true)
		ok, err = e.st.Drop(e.ctx, e.k, "d", dead)
		check(t, "Drop d", ok, err, true)
		e.keysAre("after Drop")
	})
}

// Scan returns every ID of :due, then of :dead.
func TestScan(t *testing.T) {
	servers(t, func(e *env) {
		e.pending("a", far)
		e.job("d", "k", "")
		e.dead("d", "boom")
		for _, c := range []struct {
			dead bool
			want string
		}{{false, "a"}, {true, "d"}} {
			ids, next, err := e.st.Scan(e.ctx, e.k, c.dead, 0, 100)
			if err != nil || next != 0 || len(ids) != 1 || ids[0] != c.want {
				t.Errorf("Scan dead=%v = %q, %d, %v", c.dead, ids, next, err)
			}
		}
	})
}

func itoa(n int64) string { return formatInt(n) }
