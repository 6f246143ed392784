package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// counts: the running jobs exactly (those a live worker holds for a due
// time come; not one leased ahead, not one of a dead worker, whose lease
// runs out), the dead, the due (a lease run out, a parked job) and the
// oldest of those.
func TestScriptCounts(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		e.live("w1", far)
		e.live("wd", past)
		e.lease("running", "w1", 1, now-1_000_000, now+lease)
		e.lease("ahead", "w1", 1, now+1_000_000, now+1_000_000+lease)
		e.lease("expired", "wd", 1, past, past+lease)
		e.pending("later", far)
		e.job("d", "k", "")
		e.dead("d", "boom")
		e.job("parked", "p", "")
		e.zadd(e.k.Park("p"), "parked", past-1)
		e.do(e.rdb.SAdd(e.ctx, e.k.Parked(), "p"))
		c, err := e.st.Counts(e.ctx, e.k)
		if err != nil || c.Now < now {
			t.Fatalf("Counts = %+v, %v", c, err)
		}
		c.Now = 0
		check(t, "Counts", c, err, store.Counted{Jobs: 6, Running: 1, Dead: 1, Due: 2, Oldest: past - 1})
	})
}

// listDue: the pending jobs by score a page at a time (a leased-ahead
// one pending, then the parked ones), and the running ones alone.
func TestScriptListDue(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		e.pending("a", past)
		e.pending("b", past+1)
		e.lease("run", "w1", 2, now-1_000_000, now+lease)
		e.lease("ahead", "w1", 1, now+1_000_000, now+1_000_000+lease)
		e.job("parked", "p", "pp")
		e.zadd(e.k.Park("p"), "parked", past)
		e.do(e.rdb.SAdd(e.ctx, e.k.Parked(), "p"))
		ids := func(l store.ListedDue) (s []string) {
			for _, j := range l.Jobs {
				s = append(s, j.ID)
			}
			return s
		}
		p, err := e.st.ListDue(e.ctx, e.k, store.ListDueArgs{Limit: 2, Budget: 100})
		if err != nil || !slices.Equal(ids(p), []string{"a", "b"}) || p.Next.ID != "b" || p.Jobs[0].Blob != "k\x00p-a" || p.Jobs[1].Score != past+1 {
			t.Fatalf("ListDue page 1 = %+v, %v", p, err)
		}
		a := p.Next
		a.Limit, a.Budget = 2, 100
		p, err = e.st.ListDue(e.ctx, e.k, a)
		if err != nil || !slices.Equal(ids(p), []string{"ahead", "parked"}) || p.Next.ID != "" {
			t.Fatalf("ListDue page 2 = %+v, %v", p, err)
		}
		if r := p.Jobs[0].Run; r != (store.Token{Attempt: 1, Worker: "w1", Due: now + 1_000_000}) {
			t.Errorf("ahead's run = %+v", r)
		}
		p, err = e.st.ListDue(e.ctx, e.k, store.ListDueArgs{Running: true, Limit: 10, Budget: 100})
		if err != nil || !slices.Equal(ids(p), []string{"run"}) || p.Jobs[0].Run.Attempt != 2 {
			t.Fatalf("ListDue running = %+v, %v", p, err)
		}
	})
}

// listDead: every dead job once across pages, with its attempts and
// error.
func TestScriptListDead(t *testing.T) {
	servers(t, func(e *env) {
		for i := range 5 {
			id := fmt.Sprint("d", i)
			e.job(id, "k", "")
			e.run(id, "3")
			e.dead(id, "e"+id)
		}
		var got []string
		cursor, skip := "0", int64(0)
		for range 10 {
			p, err := e.st.ListDead(e.ctx, e.k, cursor, skip, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range p.Jobs {
				if j.Err != "e"+j.ID || j.Run.Attempt != 3 || j.Blob != "k\x00" {
					t.Errorf("ListDead: %+v", j)
				}
				got = append(got, j.ID)
			}
			if p.Cursor == "" {
				break
			}
			cursor, skip = p.Cursor, p.Skip
		}
		slices.Sort(got)
		if !slices.Equal(got, []string{"d0", "d1", "d2", "d3", "d4"}) {
			t.Errorf("ListDead listed %q", got)
		}
	})
}

// dead: retry of IDs (only the dead ones, due now, attempts forgotten),
// delete of IDs, and a sweep of one kind.
func TestScriptDead(t *testing.T) {
	servers(t, func(e *env) {
		for _, id := range []string{"a", "b", "c"} {
			e.job(id, "k", "")
			e.run(id, "3")
			e.dead(id, "boom")
		}
		e.job("other", "p", "")
		e.dead("other", "boom")
		e.pending("alive", far)
		s, err := e.st.Dead(e.ctx, e.k, true, []string{"a", "alive", "none"})
		check(t, "Dead retry a", s, err, store.Swept{Cursor: "0", Done: 1})
		s, err = e.st.Dead(e.ctx, e.k, false, []string{"b"})
		check(t, "Dead delete b", s, err, store.Swept{Cursor: "0", Done: 1})
		s, err = e.st.DeadSweep(e.ctx, e.k, false, "k", "0")
		check(t, "DeadSweep delete k", s, err, store.Swept{Cursor: "0", Done: 1})
		a := f0(e, "a")
		e.keysAre("after Dead",
			fmt.Sprintf("due: a=%d alive=%d", a, far),
			"job: a=k| alive=k|p-alive other=p|",
			"dead: other=boom")
	})
}

// listRunning: the live workers' leases for a due time come, by ID a
// page at a time, and nothing of the pending jobs (however many), nor a
// job leased ahead, nor a lease of a worker no longer live.
func TestScriptListRunning(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		for i := range 300 {
			e.pending(fmt.Sprintf("p%03d", i), far)
		}
		e.live("w1", now+lease)
		e.live("w2", now+lease)
		e.live("wd", now-1) // its liveness ran out: its leases are not running
		e.lease("r3", "w1", 2, now-1_000_000, now+lease)
		e.lease("r1", "w1", 1, now-1_000_000, now+2*lease)
		e.lease("r2\x00\xff", "w2", 1, now-2_000_000, now+lease)
		e.lease("ahead", "w1", 1, now+1_000_000, now+1_000_000+lease)
		e.lease("dead-worker's", "wd", 1, now-1_000_000, now+lease)
		ids := func(l store.ListedRunning) (s []string) {
			for _, j := range l.Jobs {
				s = append(s, j.ID)
			}
			return s
		}
		p, err := e.st.ListRunning(e.ctx, e.k, "", false, 2)
		if err != nil || !slices.Equal(ids(p), []string{"r1", "r2\x00\xff"}) || p.Next != "r2\x00\xff" {
			t.Fatalf("ListRunning page 1 = %+v, %v", p, err)
		}
		if j := p.Jobs[0]; j.Score != now+2*lease || j.Run.Worker != "w1" || j.Blob != "k\x00p-r1" {
			t.Errorf("ListRunning r1 = %+v", j)
		}
		// A renewal moves r3's lease's end to before r1's: the next page
		// still starts after r2's ID.
		e.due("r3", now+lease/2)
		p, err = e.st.ListRunning(e.ctx, e.k, p.Next, true, 2)
		if err != nil || !slices.Equal(ids(p), []string{"r3"}) || p.Next != "" {
			t.Fatalf("ListRunning page 2 = %+v, %v", p, err)
		}
	})
}
