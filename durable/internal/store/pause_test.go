package store_test

import (
	"fmt"
	"slices"
	"testing"
)

// pause: a kind added to :paused (true the first time, false after),
// every worker told on the queue's channel.
func TestScriptPause(t *testing.T) {
	servers(t, func(e *env) {
		ps := e.rdb.SSubscribe(e.ctx, e.k.Ev())
		defer ps.Close()
		if _, err := ps.Receive(e.ctx); err != nil {
			t.Fatal(err)
		}
		first, err := e.st.Pause(e.ctx, e.k, "p")
		check(t, "Pause p", first, err, true)
		first, err = e.st.Pause(e.ctx, e.k, "p")
		check(t, "Pause p again", first, err, false)
		if m, err := ps.ReceiveMessage(e.ctx); err != nil || m.Payload != "pp" {
			t.Errorf("the queue's channel got %v, %v; want pp", m, err)
		}
		e.keysAre("after Pause", "paused: p")
	})
}

// resume: the kind off :paused, its parked jobs moved back to :due n at
// a time (how many it left), the kind off :parked once none is left; the
// queue ("") leaves nothing parked to move.
func TestScriptResume(t *testing.T) {
	servers(t, func(e *env) {
		e.do(e.rdb.SAdd(e.ctx, e.k.Paused(), "p", ""))
		e.do(e.rdb.SAdd(e.ctx, e.k.Parked(), "p"))
		for i := range 3 {
			id := fmt.Sprint("j", i)
			e.job(id, "p", "")
			e.zadd(e.k.Park("p"), id, past+int64(i))
		}
		left, err := e.st.Resume(e.ctx, e.k, "p", 2)
		check(t, "Resume p, 2", left, err, 1)
		e.keysAre("after Resume of 2",
			fmt.Sprintf("due: j0=%d j1=%d", past, past+1),
			"job: j0=p| j1=p| j2=p|", `paused: ""`, "parked: p",
			fmt.Sprintf("park:p: j2=%d", past+2))
		left, err = e.st.Resume(e.ctx, e.k, "", 2)
		check(t, `Resume ""`, left, err, 0)
		left, err = e.st.Unpark(e.ctx, e.k, "p", 2)
		check(t, "Unpark p", left, err, 0)
		e.keysAre("after Unpark",
			fmt.Sprintf("due: j0=%d j1=%d j2=%d", past, past+1, past+2),
			"job: j0=p| j1=p| j2=p|")
	})
}

// unpark: nothing moved while the kind is paused again.
func TestScriptUnpark(t *testing.T) {
	servers(t, func(e *env) {
		e.do(e.rdb.SAdd(e.ctx, e.k.Paused(), "p"))
		e.do(e.rdb.SAdd(e.ctx, e.k.Parked(), "p"))
		e.job("j", "p", "")
		e.zadd(e.k.Park("p"), "j", past)
		left, err := e.st.Unpark(e.ctx, e.k, "p", 10)
		check(t, "Unpark of a paused kind", left, err, 0)
		e.keysAre("after Unpark", "job: j=p|", "paused: p", "parked: p", fmt.Sprintf("park:p: j=%d", past))
		e.do(e.rdb.SRem(e.ctx, e.k.Paused(), "p"))
		left, err = e.st.Unpark(e.ctx, e.k, "p", 10)
		check(t, "Unpark once resumed", left, err, 0)
		e.keysAre("after Unpark once resumed", "job: j=p|", fmt.Sprintf("due: j=%d", past))
	})
}

// paused: the members of :paused, "" for the queue.
func TestScriptPaused(t *testing.T) {
	servers(t, func(e *env) {
		kinds, err := e.st.Paused(e.ctx, e.k)
		if err != nil || len(kinds) != 0 {
			t.Fatalf("Paused of none = %q, %v", kinds, err)
		}
		e.do(e.rdb.SAdd(e.ctx, e.k.Paused(), "p", ""))
		kinds, err = e.st.Paused(e.ctx, e.k)
		slices.Sort(kinds)
		if err != nil || !slices.Equal(kinds, []string{"", "p"}) {
			t.Fatalf("Paused = %q, %v", kinds, err)
		}
	})
}
