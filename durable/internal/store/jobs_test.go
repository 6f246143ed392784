package store_test

import (
	"fmt"
	"testing"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// schedule: a new ID is added and announced to a live worker when due
// within the horizon; an existing one is left alone; a delay counts
// from the server's clock; a job due after another needs no message.
func TestScriptSchedule(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		e.live("w1", far)
		msg := e.inbox("w1")
		added, err := e.st.Schedule(e.ctx, e.k, "a", past, false, []byte("k\x00pa"))
		check(t, "Schedule a", added, err, true)
		if m := msg(); m != fmt.Sprint("n", past) {
			t.Errorf("w1 was told %q; want n%d", m, past)
		}
		added, err = e.st.Schedule(e.ctx, e.k, "a", far, false, []byte("k\x00other"))
		check(t, "Schedule a again", added, err, false)
		added, err = e.st.Schedule(e.ctx, e.k, "b", 3_600_000_000, true, []byte("k\x00pb"))
		check(t, "Schedule b after an hour", added, err, true)
		s := e.rdb.ZScore(e.ctx, e.k.Due(), "b").Val()
		if int64(s) < now+3_600_000_000 || int64(s) > e.now()+3_600_000_000 {
			t.Errorf("b due at %d; want an hour after %d", int64(s), now)
		}
		e.keysAre("after Schedule",
			fmt.Sprintf("due: a=%d b=%d", past, int64(s)),
			"job: a=k|pa b=k|pb",
			fmt.Sprintf("workers: w1=%d", far))
	})
}

// reschedule: a missing ID, a pending job moved, a dead one brought back
// with its attempts forgotten, one leased ahead taken back (its worker
// told, its lease forgotten), one due within the margin refused, a
// parked one moved back to :due.
func TestScriptReschedule(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		r, err := e.st.Reschedule(e.ctx, e.k, "none", far, 0)
		check(t, "Reschedule none", r, err, store.Missing)

		e.pending("p", far)
		r, err = e.st.Reschedule(e.ctx, e.k, "p", far+1, 0)
		check(t, "Reschedule pending", r, err, store.Moved)

		e.job("d", "k", "pd")
		e.run("d", "3")
		e.dead("d", "boom")
		r, err = e.st.Reschedule(e.ctx, e.k, "d", far+2, 0)
		check(t, "Reschedule dead", r, err, store.Moved)

		msg := e.inbox("w1")
		e.lease("ahead", "w1", 2, far, far+5_000_000)
		r, err = e.st.Reschedule(e.ctx, e.k, "ahead", far+3, 0)
		check(t, "Reschedule leased ahead", r, err, store.Moved)
		if m := msg(); m != "cahead" {
			t.Errorf("w1 was told %q; want cahead", m)
		}

		e.lease("soon", "w1", 1, now+50_000, now+5_050_000)
		r, err = e.st.Reschedule(e.ctx, e.k, "soon", far, 60_000_000)
		check(t, "Reschedule due within the margin", r, err, store.Running)

		e.job("parked", "p", "pp")
		e.zadd(e.k.Park("p"), "parked", past)
		r, err = e.st.Reschedule(e.ctx, e.k, "parked", far+4, 0)
		check(t, "Reschedule parked", r, err, store.Moved)

		e.keysAre("after Reschedule",
			fmt.Sprintf("due: p=%d d=%d ahead=%d parked=%d soon=%d", far+1, far+2, far+3, far+4, now+5_050_000),
			"job: ahead=k|p-ahead d=k|pd p=k|p-p parked=p|pp soon=k|p-soon",
			"run: ahead=1 soon=1|w1|"+fmt.Sprint(now+50_000),
			fmt.Sprintf("lease:w1: soon=%d", now+50_000))
	})
}

// cancel: a missing ID; a pending, a dead, a parked and a held job each
// deleted from every key, the holder told.
func TestScriptCancel(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		found, err := e.st.Cancel(e.ctx, e.k, "none")
		check(t, "Cancel none", found, err, false)
		e.pending("p", far)
		e.job("d", "k", "pd")
		e.run("d", "5")
		e.dead("d", "boom")
		e.job("parked", "p", "pp")
		e.zadd(e.k.Park("p"), "parked", past)
		msg := e.inbox("w1")
		e.lease("held", "w1", 1, now, now+5_000_000)
		e.pending("kept", far)
		for _, id := range []string{"p", "d", "parked", "held"} {
			found, err := e.st.Cancel(e.ctx, e.k, id)
			check(t, "Cancel "+id, found, err, true)
		}
		if m := msg(); m != "cheld" {
			t.Errorf("w1 was told %q; want cheld", m)
		}
		e.keysAre("after Cancel", fmt.Sprintf("due: kept=%d", far), "job: kept=k|p-kept")
	})
}

// lookup: a missing ID; a pending, a held, a dead and a parked job, each
// field read back.
func TestScriptLookup(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		f, err := e.st.Lookup(e.ctx, e.k, "none")
		if err != nil || f.Exists || f.Now < now {
			t.Fatalf("Lookup none = %+v, %v", f, err)
		}
		e.pending("p", far)
		e.lease("held", "w1", 2, now, now+5_000_000)
		e.job("d", "k", "pd")
		e.run("d", "5")
		e.dead("d", "boom")
		e.job("parked", "p", "pp")
		e.zadd(e.k.Park("p"), "parked", past)
		for _, c := range []struct {
			id   string
			want store.Found
		}{
			{"p", store.Found{Exists: true, Blob: "k\x00p-p", Score: far, HasScore: true}},
			{"held", store.Found{Exists: true, Blob: "k\x00p-held", Score: now + 5_000_000, HasScore: true, Run: store.Token{Attempt: 2, Worker: "w1", Due: now}}},
			{"d", store.Found{Exists: true, Blob: "k\x00pd", Run: store.Token{Attempt: 5}, Dead: true, Err: "boom"}},
			{"parked", store.Found{Exists: true, Blob: "p\x00pp", Score: past, HasScore: true}},
		} {
			f, err := e.st.Lookup(e.ctx, e.k, c.id)
			if f.Now < now {
				t.Errorf("Lookup %s: Now %d before %d", c.id, f.Now, now)
			}
			f.Now = 0
			check(t, "Lookup "+c.id, f, err, c.want)
		}
	})
}
