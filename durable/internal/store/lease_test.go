package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/timewheel/timewheel/durable/internal/store"
)

const (
	lease = 5_000_000 // µs
	hz    = 2_000_000
)

func claimArgs(limit int) store.ClaimArgs {
	return store.ClaimArgs{Limit: limit, Lease: lease, Worker: "w1", Horizon: hz, TTL: 3_000_000}
}

// claim: due jobs leased with their tokens and lease ends, one within
// the horizon leased ahead (in :ahead), a job whose lease ran out taken
// again as attempt n+1, a live lease skipped (the wake at its end), a
// due ID whose job is gone dropped, the batch limit (left), and the
// worker counted live.
func TestScriptClaim(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		e.pending("a", past)
		e.pending("b", past+1)
		e.job("expired", "k", "p-expired")
		e.due("expired", past+2)
		e.run("expired", "2|wd|5")
		e.zadd(e.k.Leases("wd"), "expired", 5)
		e.zadd(e.k.Leases("wd"), "other", 5)
		e.live("wd", past) // dead: its set goes
		e.lease("live", "w2", 1, now-1_000_000, now+60_000_000)
		e.due("gone", past+3) // no :job field
		e.pending("ahead", now+1_000_000)
		e.pending("over", now+1_500_000)
		e.pending("later", far)

		c, err := e.st.Claim(e.ctx, e.k, claimArgs(4))
		if err != nil {
			t.Fatal(err)
		}
		n := c.Now
		if n < now || c.Left != now+1_500_000 || len(c.Paused) != 0 {
			t.Errorf("Claim = now %d left %d paused %q; want now >= %d, left %d", n, c.Left, c.Paused, now, now+1_500_000)
		}
		var got []string
		for _, l := range c.Jobs {
			got = append(got, fmt.Sprintf("%s %s %s", l.ID, l.Token, l.Blob))
		}
		want := []string{
			fmt.Sprintf("a 1|w1|%d k\x00p-a", past),
			fmt.Sprintf("b 1|w1|%d k\x00p-b", past+1),
			fmt.Sprintf("expired 3|w1|%d k\x00p-expired", past+2),
			fmt.Sprintf("ahead 1|w1|%d k\x00p-ahead", now+1_000_000),
		}
		if !slices.Equal(got, want) {
			t.Errorf("Claim leased\n%q\nwant\n%q", got, want)
		}
		e.keysAre("after Claim",
			fmt.Sprintf("due: a=%d b=%d expired=%d ahead=%d live=%d over=%d later=%d", n+lease, n+lease, n+lease, now+1_000_000+lease, now+60_000_000, now+1_500_000, far),
			"job: a=k|p-a b=k|p-b expired=k|p-expired ahead=k|p-ahead live=k|p-live over=k|p-over later=k|p-later",
			fmt.Sprintf("run: a=1|w1|%d b=1|w1|%d expired=3|w1|%d ahead=1|w1|%d live=1|w2|%d", past, past+1, past+2, now+1_000_000, now-1_000_000),
			fmt.Sprintf("lease:w1: a=%d b=%d expired=%d ahead=%d", past, past+1, past+2, now+1_000_000),
			fmt.Sprintf("lease:w2: live=%d", now-1_000_000),
			fmt.Sprintf("workers: w1=%d", n+3_000_000))
	})
}

// claim with the queue paused leases nothing; with a kind paused, its
// due jobs go to the kind's park set; once resumed, a claim moves them
// back and leases them.
func TestScriptClaimPaused(t *testing.T) {
	servers(t, func(e *env) {
		e.pending("a", past)
		e.job("pa", "p", "pp")
		e.due("pa", past+1)
		e.do(e.rdb.SAdd(e.ctx, e.k.Paused(), ""))
		c, err := e.st.Claim(e.ctx, e.k, claimArgs(10))
		if err != nil || len(c.Jobs) != 0 || !slices.Equal(c.Paused, []string{""}) || c.Wake != -1 {
			t.Fatalf("Claim with the queue paused = %+v, %v", c, err)
		}
		e.do(e.rdb.SRem(e.ctx, e.k.Paused(), ""))
		e.do(e.rdb.SAdd(e.ctx, e.k.Paused(), "p"))
		c, err = e.st.Claim(e.ctx, e.k, claimArgs(10))
		if err != nil || len(c.Jobs) != 1 || c.Jobs[0].ID != "a" || !slices.Equal(c.Paused, []string{"p"}) {
			t.Fatalf("Claim with p paused = %+v, %v", c, err)
		}
		e.keysAre("after a claim with p paused",
			fmt.Sprintf("due: a=%d", c.Now+lease),
			"job: a=k|p-a pa=p|pp",
			fmt.Sprintf("run: a=1|w1|%d", past),
			"paused: p", "parked: p",
			fmt.Sprintf("park:p: pa=%d", past+1),
			fmt.Sprintf("lease:w1: a=%d", past),
			fmt.Sprintf("workers: w1=%d", c.Now+3_000_000))
		e.do(e.rdb.SRem(e.ctx, e.k.Paused(), "p"))
		c, err = e.st.Claim(e.ctx, e.k, claimArgs(10))
		if err != nil || len(c.Jobs) != 1 || c.Jobs[0].ID != "pa" {
			t.Fatalf("Claim once p resumed = %+v, %v", c, err)
		}
		if e.rdb.Exists(e.ctx, e.k.Park("p"), e.k.Parked()).Val() != 0 {
			t.Errorf("the park set or :parked left: %s", e.dump())
		}
	})
}

// ack: the jobs whose tokens hold their leases deleted from every key;
// one whose lease another worker took is lost, one cancelled gone.
func TestScriptAck(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		ta := e.lease("a", "w1", 1, now, now+lease)
		tb := e.lease("b", "w1", 1, now+1_000_000, now+1_000_000+lease)
		e.lease("taken", "w2", 2, now, now+lease)
		r, err := e.st.Ack(e.ctx, e.k, "w1", []store.Held{{"a", ta}, {"b", tb}, {"taken", "1|w1|1"}, {"gone", "1|w1|1"}})
		if err != nil || len(r.Lost) != 1 || !r.Lost["taken"] || len(r.Gone) != 1 || !r.Gone["gone"] {
			t.Fatalf("Ack = %+v, %v; want taken lost, gone gone", r, err)
		}
		e.keysAre("after Ack",
			fmt.Sprintf("due: taken=%d", now+lease),
			"job: taken=k|p-taken",
			fmt.Sprintf("run: taken=2|w2|%d", now),
			fmt.Sprintf("lease:w2: taken=%d", now))
	})
}

// renew: held leases moved to now+lease (a later end kept), lost and
// gone reported, the worker counted live, the wake for the first job no
// lease holds; none with the queue paused.
func TestScriptRenew(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		ta := e.lease("a", "w1", 1, now-1_000_000, now+1_000)
		tb := e.lease("b", "w1", 1, far, far+lease)
		e.lease("taken", "w2", 2, now, now+lease)
		e.pending("next", now+hz+1_000_000)
		args := store.RenewArgs{Lease: lease, Worker: "w1", TTL: 3_000_000, Horizon: hz}
		r, err := e.st.Renew(e.ctx, e.k, args, []store.Held{{"a", ta}, {"b", tb}, {"taken", "1|w1|1"}, {"gone", "1|w1|1"}})
		if err != nil || !r.Lost["taken"] || !r.Gone["gone"] || len(r.Lost)+len(r.Gone) != 2 || r.Wake != now+hz+1_000_000-hz/2 {
			t.Fatalf("Renew = %+v, %v; want taken lost, gone gone, wake %d", r, err, now+hz+1_000_000-hz/2)
		}
		a := int64(e.rdb.ZScore(e.ctx, e.k.Due(), "a").Val())
		if a < now+lease || a > e.now()+lease {
			t.Errorf("a's lease ends at %d; want now + lease", a)
		}
		e.keysAre("after Renew",
			fmt.Sprintf("due: a=%d b=%d taken=%d next=%d", a, far+lease, now+lease, now+hz+1_000_000),
			"job: a=k|p-a b=k|p-b taken=k|p-taken next=k|p-next",
			fmt.Sprintf("run: a=%s b=%s taken=2|w2|%d", ta, tb, now),
			fmt.Sprintf("lease:w1: a=%d b=%d", now-1_000_000, far),
			fmt.Sprintf("lease:w2: taken=%d", now),
			fmt.Sprintf("workers: w1=%d", a-lease+3_000_000))
		e.do(e.rdb.SAdd(e.ctx, e.k.Paused(), ""))
		r, err = e.st.Renew(e.ctx, e.k, args, nil)
		if err != nil || r.Wake != -1 {
			t.Errorf("Renew with the queue paused = %+v, %v; want wake -1", r, err)
		}
	})
}

// fail: a retry after the backoff (told to another live worker), the
// last attempt dead with its error, a lost lease, a gone job.
func TestScriptFail(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		e.live("w2", far)
		msg := e.inbox("w2")
		ta := e.lease("a", "w1", 1, now, now+lease)
		f, err := e.st.Fail(e.ctx, e.k, store.FailArgs{ID: "a", Token: ta, Attempts: 3, Backoff: 500_000, Err: "e1", Tell: true, Worker: "w1"})
		if err != nil || f.Retry < now+500_000 || f.Dead || f.Lost || f.Gone {
			t.Fatalf("Fail of attempt 1 of 3 = %+v, %v", f, err)
		}
		if m := msg(); m != fmt.Sprint("n", f.Retry) {
			t.Errorf("w2 was told %q; want n%d", m, f.Retry)
		}
		tb := e.lease("b", "w1", 3, now, now+lease)
		f, err = e.st.Fail(e.ctx, e.k, store.FailArgs{ID: "b", Token: tb, Attempts: 3, Backoff: 500_000, Err: "e3", Worker: "w1"})
		check(t, "Fail of attempt 3 of 3", f, err, store.Failed{Dead: true})
		e.lease("taken", "w2", 2, now, now+lease)
		f, err = e.st.Fail(e.ctx, e.k, store.FailArgs{ID: "taken", Token: "1|w1|1", Attempts: 3, Worker: "w1"})
		check(t, "Fail of a lost lease", f, err, store.Failed{Lost: true})
		f, err = e.st.Fail(e.ctx, e.k, store.FailArgs{ID: "gone", Token: "1|w1|1", Attempts: 3, Worker: "w1"})
		check(t, "Fail of a gone job", f, err, store.Failed{Gone: true})
		e.keysAre("after Fail",
			fmt.Sprintf("due: a=%d taken=%d", f0(e, "a"), now+lease),
			"job: a=k|p-a b=k|p-b taken=k|p-taken",
			fmt.Sprintf("run: a=1 b=3 taken=2|w2|%d", now),
			"dead: b=e3",
			fmt.Sprintf("lease:w2: taken=%d", now),
			fmt.Sprintf("workers: w2=%d", far))
	})
}

// f0 returns id's :due score.
func f0(e *env, id string) int64 { return int64(e.rdb.ZScore(e.ctx, e.k.Due(), id).Val()) }

// release: the leases the tokens hold handed back due at their due
// times, attempts not counted (attempt 1 leaves no :run); another
// worker told; closing takes the worker off the live ones.
func TestScriptRelease(t *testing.T) {
	servers(t, func(e *env) {
		now := e.now()
		e.live("w1", far)
		e.live("w2", far)
		msg := e.inbox("w2")
		soon := now + 1_000_000
		ta := e.lease("a", "w1", 1, soon, soon+lease)
		tb := e.lease("b", "w1", 3, far, far+lease)
		e.lease("taken", "w2", 2, now, now+lease)
		n, err := e.st.Release(e.ctx, e.k, "w1", true, []store.Held{{"a", ta}, {"b", tb}, {"taken", "1|w1|1"}})
		check(t, "Release", n, err, 2)
		if m := msg(); m != fmt.Sprint("n", soon) {
			t.Errorf("w2 was told %q; want n%d", m, soon)
		}
		e.keysAre("after Release",
			fmt.Sprintf("due: a=%d b=%d taken=%d", soon, far, now+lease),
			"job: a=k|p-a b=k|p-b taken=k|p-taken",
			fmt.Sprintf("run: b=2 taken=2|w2|%d", now),
			fmt.Sprintf("lease:w2: taken=%d", now),
			fmt.Sprintf("workers: w2=%d", far))
	})
}
