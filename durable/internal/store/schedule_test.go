package store_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// The tests of the schedule scripts (schedule.go) seed the schedules'
// keys beside the queue's, and read both back: a schedEnv names the
// schedules a test uses, deletes their keys before and after it, and
// dumps them.
type schedEnv struct {
	*env
	names []string
	since int64 // the server's µs as the test began
}

// scheds returns e with the schedules names.
func scheds(e *env, names ...string) *schedEnv {
	s := &schedEnv{env: e, names: names}
	del := func() { e.rdb.Del(e.ctx, s.schedKeys()...) }
	del()
	e.t.Cleanup(del)
	s.since = e.now()
	return s
}

// The keys of schedules: {name}:sched, each schedule's hash and wait
// list, and {name}:sched:waiting.
func (s *schedEnv) zkey() string            { return s.k.Prefix + "sched" }
func (s *schedEnv) hkey(name string) string { return s.k.Prefix + "sched:" + name }
func (s *schedEnv) wkey(name string) string { return s.hkey(name) + ":wait" }
func (s *schedEnv) waiting() string         { return s.k.Prefix + "sched:waiting" }

func (s *schedEnv) schedKeys() []string {
	keys := []string{s.zkey()}
	for _, n := range s.names {
		keys = append(keys, s.hkey(n), s.wkey(n))
	}
	return append(keys, s.waiting())
}

// sched seeds schedule name's hash with fields (field, value, ...) and,
// if they hold a head, puts it in {name}:sched at its head.
func (s *schedEnv) sched(name string, fields ...string) {
	s.t.Helper()
	args := make([]any, len(fields))
	for i, f := range fields {
		args[i] = f
		if i%2 == 1 && fields[i-1] == "head" {
			us, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				s.t.Fatal(err)
			}
			s.zadd(s.zkey(), name, us)
		}
	}
	s.do(s.rdb.HSet(s.ctx, s.hkey(name), args...))
}

// wait seeds name's wait list with ids, and {name}:sched:waiting with
// name.
func (s *schedEnv) wait(name string, ids ...string) {
	s.t.Helper()
	if len(ids) > 0 {
		s.do(s.rdb.RPush(s.ctx, s.wkey(name), strs(ids)...))
	}
	s.do(s.rdb.SAdd(s.ctx, s.waiting(), name))
}

func strs(v []string) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

// schedDump returns the schedules' keys as text, as env.dump does the
// queue's: "sched: a=100" (by score), "sched:a: def=d1 ..." (a hash,
// NUL shown as |; a lastAt the server's clock wrote during the test, as
// "lastAt=NOW"), "sched:a:wait: x y" (a list, in its order),
// "sched:waiting: a".
func (s *schedEnv) schedDump() string {
	s.t.Helper()
	var lines []string
	hi := s.now()
	for _, key := range s.schedKeys() {
		short := strings.TrimPrefix(key, s.k.Prefix)
		var items []string
		switch typ := s.rdb.Type(s.ctx, key).Val(); typ {
		case "none":
			continue
		case "zset":
			for _, z := range s.rdb.ZRangeWithScores(s.ctx, key, 0, -1).Val() {
				items = append(items, fmt.Sprintf("%s=%d", z.Member, int64(z.Score)))
			}
			slices.Sort(items)
		case "hash":
			for f, v := range s.rdb.HGetAll(s.ctx, key).Val() {
				if f == "lastAt" {
					if at, err := strconv.ParseInt(v, 10, 64); err == nil && at >= s.since && at <= hi {
						v = "NOW"
					}
				}
				items = append(items, f+"="+strings.ReplaceAll(v, "\x00", "|"))
			}
			slices.Sort(items)
		case "list":
			items = s.rdb.LRange(s.ctx, key, 0, -1).Val()
		case "set":
			items = s.rdb.SMembers(s.ctx, key).Val()
			slices.Sort(items)
		default:
			s.t.Fatalf("%s: type %s", key, typ)
		}
		lines = append(lines, short+": "+strings.Join(items, " "))
	}
	return strings.Join(lines, "\n")
}

// schedAre fails the test unless schedDump is want: lines in any order,
// the items of each in any order but a wait list's.
func (s *schedEnv) schedAre(step string, want ...string) {
	s.t.Helper()
	order := map[string]int{}
	for i, k := range s.schedKeys() {
		order[strings.TrimPrefix(k, s.k.Prefix)] = i
	}
	want = slices.Clone(want)
	for i, w := range want {
		k, items, _ := strings.Cut(w, ": ")
		if _, ok := order[k]; !ok {
			s.t.Fatalf("%s: want names the key %q, not one of the test's", step, k)
		}
		f := strings.Fields(items)
		if !strings.HasSuffix(k, ":wait") {
			slices.Sort(f)
		}
		want[i] = k + ": " + strings.Join(f, " ")
	}
	slices.SortFunc(want, func(a, b string) int {
		ka, _, _ := strings.Cut(a, ": ")
		kb, _, _ := strings.Cut(b, ": ")
		return order[ka] - order[kb]
	})
	if got, w := s.schedDump(), strings.Join(want, "\n"); got != w {
		s.t.Errorf("%s: the schedules' keys hold\n%s\nwant\n%s", step, got, w)
	}
}

// score returns id's :due score, checked to be the server's clock of
// the test: a run made "now" by a script.
func (s *schedEnv) score(id string) int64 {
	s.t.Helper()
	sc, err := s.rdb.ZScore(s.ctx, s.k.Due(), id).Result()
	if err != nil || int64(sc) < s.since || int64(sc) > s.now() {
		s.t.Fatalf("%s's :due score = %d, %v; want the server's clock since %d", id, int64(sc), err, s.since)
	}
	return int64(sc)
}

func d(us int64) string { return strconv.FormatInt(us, 10) }

// sched-upsert: a new schedule added (1) with its head's job, told to a
// live worker; the same def and blob again changes nothing (0), not even
// the head; a change (2) bumps the version and makes the new head's job,
// dropping the old head (parked: its park set too) and the runs made
// ahead that no worker holds (one leased ahead taken back from its
// worker, who is told), keeping one running; a head that is dead is kept,
// and a new head whose job exists already is not made again; a paused
// schedule's change makes no job.
func TestScriptSchedUpsert(t *testing.T) {
	servers(t, func(e *env) {
		s := scheds(e, "a", "b", "c", "p")
		now := s.since
		e.live("w1", far)
		msg1 := e.inbox("w1")
		ta := now + 1_000_000
		up, err := e.st.UpsertSched(e.ctx, e.k, "a", "d1", []byte("k\x00pa"), ta, "a1", nil)
		check(t, "UpsertSched of a new schedule", up, err, store.Added)
		if m := msg1(); m != "n"+d(ta) {
			t.Errorf("w1 was told %q; want n%d", m, ta)
		}
		up, err = e.st.UpsertSched(e.ctx, e.k, "a", "d1", []byte("k\x00pa"), far, "a9", nil)
		check(t, "UpsertSched of the same def and blob", up, err, store.Unchanged)

		// b: b1 running on w1, b2 leased ahead by w2, its head b3 parked.
		e.live("w2", far)
		msg2 := e.inbox("w2")
		tb := now - 1_000_000
		e.lease("b1", "w1", 1, tb, tb+lease)
		e.lease("b2", "w2", 1, now+1_500_000, now+1_500_000+lease)
		e.job("b3", "k", "p-b3")
		e.zadd(e.k.Park("k"), "b3", now+3_000_000)
		s.sched("b", "def", "d1", "blob", "k\x00p-b", "ver", "3", "head", d(now+3_000_000), "headID", "b3", "lastID", "b1", "last", d(tb))
		up, err = e.st.UpsertSched(e.ctx, e.k, "b", "d2", []byte("k\x00pb2"), far, "b9", []store.Run{{tb, "b1"}, {now + 1_500_000, "b2"}, {now + 3_000_000, "b3"}})
		check(t, "UpsertSched of a changed def", up, err, store.Changed)
		if m := msg2(); m != "cb2" {
			t.Errorf("w2 was told %q; want cb2", m)
		}

		// c: its head c1 dead; the new blob's head is c1 again.
		e.job("c1", "k", "p-c1")
		e.dead("c1", "boom")
		s.sched("c", "def", "d1", "blob", "k\x00p-c", "ver", "1", "head", d(past), "headID", "c1")
		up, err = e.st.UpsertSched(e.ctx, e.k, "c", "d1", []byte("k\x00pc2"), past+1, "c1", nil)
		check(t, "UpsertSched of a changed blob", up, err, store.Changed)

		// p: paused, its head dropped by the pause.
		s.sched("p", "def", "d1", "blob", "k\x00p-p", "ver", "5", "paused", "1", "head", d(now), "headID", "p1")
		up, err = e.st.UpsertSched(e.ctx, e.k, "p", "d2", []byte("k\x00p-p"), far, "p2", nil)
		check(t, "UpsertSched of a paused schedule", up, err, store.Changed)

		e.keysAre("after UpsertSched",
			fmt.Sprintf("due: a1=%d b1=%d b9=%d", ta, tb+lease, far),
			"job: a1=k|pa b1=k|p-b1 b9=k|pb2 c1=k|p-c1",
			fmt.Sprintf("run: b1=1|w1|%d", tb),
			"dead: c1=boom",
			fmt.Sprintf("workers: w1=%d w2=%d", far, far),
			fmt.Sprintf("lease:w1: b1=%d", tb))
		s.schedAre("after UpsertSched",
			fmt.Sprintf("sched: a=%d b=%d c=%d p=%d", ta, far, past+1, far),
			fmt.Sprintf("sched:a: def=d1 blob=k|pa ver=1 head=%d headID=a1", ta),
			fmt.Sprintf("sched:b: def=d2 blob=k|pb2 ver=4 head=%d headID=b9 lastID=b1 last=%d", far, tb),
			fmt.Sprintf("sched:c: def=d1 blob=k|pc2 ver=2 head=%d headID=c1", past+1),
			fmt.Sprintf("sched:p: def=d2 blob=k|p-p ver=6 paused=1 head=%d headID=p2", far))
	})
}

// sched-advance: no such schedule (-1); a version not the schedule's
// (-2), checked before the pause, so a resume of a changed schedule
// leaves it paused; paused (-3); the head moved on already (0, the
// compare-and-set lost); moved on (1) with the new head's job and the
// instants missed counted (none: no count); resuming unpauses it, and
// makes no job that exists already; resuming a head that moved on
// unpauses it and moves nothing.
func TestScriptSchedAdvance(t *testing.T) {
	servers(t, func(e *env) {
		s := scheds(e, "a", "p", "r", "m")
		t1, t2 := far, far+60_000_000
		e.pending("a1", t1)
		s.sched("a", "def", "d", "blob", "k\x00pa", "ver", "2", "head", d(t1), "headID", "a1", "missed", "1")
		s.sched("p", "def", "d", "blob", "k\x00pp", "ver", "1", "head", d(t1), "headID", "p1", "paused", "1")
		e.pending("r1", t1)
		s.sched("r", "def", "d", "blob", "k\x00pr", "ver", "1", "head", d(t1), "headID", "r1", "paused", "1")
		s.sched("m", "def", "d", "blob", "k\x00pm", "ver", "1", "head", d(t1), "headID", "m2", "paused", "1")
		adv := func(step string, a store.AdvanceArgs, want store.Advanced) {
			t.Helper()
			r, err := e.st.AdvanceSched(e.ctx, e.k, a)
			check(t, step, r, err, want)
		}
		adv("AdvanceSched of no schedule", store.AdvanceArgs{Name: "x", From: "x1", To: t2, ToID: "x2", Ver: 1}, store.NoSched)
		adv("AdvanceSched at an old version", store.AdvanceArgs{Name: "a", From: "a1", To: t2, ToID: "a2", Ver: 1}, store.StaleVer)
		adv("AdvanceSched resuming at an old version", store.AdvanceArgs{Name: "p", From: "p1", To: t2, ToID: "p2", Ver: 0, Resuming: true}, store.StaleVer)
		adv("AdvanceSched of a paused schedule", store.AdvanceArgs{Name: "p", From: "p1", To: t2, ToID: "p2", Ver: 1}, store.SchedPaused)
		adv("AdvanceSched from a head moved on", store.AdvanceArgs{Name: "a", From: "a0", To: t1, ToID: "a1", Ver: 2}, store.HeadMoved)
		e.keysAre("after the refused AdvanceScheds", fmt.Sprintf("due: a1=%d r1=%d", t1, t1), "job: a1=k|p-a1 r1=k|p-r1")
		s.schedAre("after the refused AdvanceScheds",
			fmt.Sprintf("sched: a=%d p=%d r=%d m=%d", t1, t1, t1, t1),
			fmt.Sprintf("sched:a: def=d blob=k|pa ver=2 head=%d headID=a1 missed=1", t1),
			fmt.Sprintf("sched:p: def=d blob=k|pp ver=1 head=%d headID=p1 paused=1", t1),
			fmt.Sprintf("sched:r: def=d blob=k|pr ver=1 head=%d headID=r1 paused=1", t1),
			fmt.Sprintf("sched:m: def=d blob=k|pm ver=1 head=%d headID=m2 paused=1", t1))

		adv("AdvanceSched", store.AdvanceArgs{Name: "a", From: "a1", To: t2, ToID: "a2", Missed: 3, Ver: 2}, store.AdvancedOn)
		adv("AdvanceSched resuming", store.AdvanceArgs{Name: "p", From: "p1", To: t2, ToID: "p2", Ver: 1, Resuming: true}, store.AdvancedOn)
		adv("AdvanceSched resuming to the head", store.AdvanceArgs{Name: "r", From: "r1", To: t2, ToID: "r1", Ver: 1, Resuming: true}, store.AdvancedOn)
		adv("AdvanceSched resuming from a head moved on", store.AdvanceArgs{Name: "m", From: "m1", To: t2, ToID: "m3", Ver: 1, Resuming: true}, store.HeadMoved)
		e.keysAre("after AdvanceSched",
			fmt.Sprintf("due: a1=%d a2=%d p2=%d r1=%d", t1, t2, t2, t1),
			"job: a1=k|p-a1 a2=k|pa p2=k|pp r1=k|p-r1")
		s.schedAre("after AdvanceSched",
			fmt.Sprintf("sched: a=%d p=%d r=%d m=%d", t2, t2, t2, t1),
			fmt.Sprintf("sched:a: def=d blob=k|pa ver=2 head=%d headID=a2 missed=4", t2),
			fmt.Sprintf("sched:p: def=d blob=k|pp ver=1 head=%d headID=p2", t2),
			fmt.Sprintf("sched:r: def=d blob=k|pr ver=1 head=%d headID=r1", t2),
			fmt.Sprintf("sched:m: def=d blob=k|pm ver=1 head=%d headID=m2", t1))
	})
}

// sched-fire, a case a schedule: the action, the head and version it
// returns, and what it leaves in the schedule's keys.
func TestScriptSchedFire(t *testing.T) {
	type fireCase struct {
		name    string   // the schedule's, and the case's
		fields  []string // its hash beside ver=1 and headID=h (none: no schedule)
		prev    string   // the state of the job of its lastID "p": "pending", "dead", "" (none)
		id      string   // the run's ID; "r" if ""
		at      int64    // its instant, µs before now (late past 1 s of grace if over it)
		attempt int
		next    int64 // the instant after, µs after now
		missed  byte
		overlap byte
		act     store.Fired
		want    string // the hash after, less ver=1 headID=h
		wait    string // the wait list after
	}
	const sec = 1_000_000
	cases := []fireCase{
		{name: "gone", act: store.FireGone},
		{name: "paused", fields: []string{"paused", "1"}, act: store.FirePaused, want: "paused=1 missed=1"},
		// A retry runs whatever else holds: even paused, and behind a live
		// run; a later last is kept.
		{name: "retry", fields: []string{"paused", "1", "last", "+5", "lastID", "p"}, prev: "pending", attempt: 2, overlap: 's',
			act: store.FireRun, want: "paused=1 last=+5 lastID=p runs=1"},
		// A run let go: recorded as the last even if a later one is.
		{name: "letgo", fields: []string{"rel", "r0+d", "last", "+5", "lastID", "p"}, prev: "pending", id: "r0+d", overlap: 's',
			act: store.FireRun, want: "last=+0 lastID=r0+d lastAt=NOW runs=1"},
		{name: "ontime", missed: 's', act: store.FireRun, want: "last=+0 lastID=r lastAt=NOW runs=1"},
		{name: "late-skip", at: 10 * sec, missed: 's', act: store.FireMissed, want: "missed=1"},
		{name: "late-last-later", at: 10 * sec, next: -9 * sec, missed: 'l', act: store.FireMissed, want: "missed=1"},
		{name: "late-last", at: 10 * sec, next: 60 * sec, missed: 'l', act: store.FireRun, want: "last=+0 lastID=r lastAt=NOW runs=1"},
		{name: "late-all", at: 10 * sec, next: -9 * sec, missed: 'a', act: store.FireRun, want: "last=+0 lastID=r lastAt=NOW runs=1"},
		// The previous run p still runs.
		{name: "overlap-allow", fields: []string{"last", "-5", "lastID", "p"}, prev: "pending", overlap: 'a',
			act: store.FireRun, want: "last=+0 lastID=r lastAt=NOW runs=1"},
		{name: "overlap-skip", fields: []string{"last", "-5", "lastID", "p", "skipped", "2"}, prev: "pending", overlap: 's',
			act: store.FireSkipped, want: "last=-5 lastID=p skipped=3"},
		{name: "overlap-delay", fields: []string{"last", "-5", "lastID", "p"}, prev: "pending", overlap: 'd',
			act: store.FireDelayed, want: "last=-5 lastID=p delayed=1", wait: "r"},
		// Late under run-all, a run skipped by the overlap is delayed.
		{name: "overlap-skip-late-all", fields: []string{"last", "-15", "lastID", "p"}, prev: "pending", at: 10 * sec, next: -9 * sec, missed: 'a', overlap: 's',
			act: store.FireDelayed, want: "last=-15 lastID=p delayed=1", wait: "r"},
		// The previous run is no overlap: ended, dead, gone, this run
		// itself, or later than this one.
		{name: "prev-ended", fields: []string{"last", "-5", "lastID", "p", "ended", "p"}, prev: "pending", overlap: 's',
			act: store.FireRun, want: "last=+0 lastID=r lastAt=NOW ended=p runs=1"},
		{name: "prev-dead", fields: []string{"last", "-5", "lastID", "p"}, prev: "dead", overlap: 's',
			act: store.FireRun, want: "last=+0 lastID=r lastAt=NOW runs=1"},
		{name: "prev-gone", fields: []string{"last", "-5", "lastID", "p"}, overlap: 's',
			act: store.FireRun, want: "last=+0 lastID=r lastAt=NOW runs=1"},
		{name: "prev-self", fields: []string{"last", "+0", "lastID", "r", "runs", "1"}, prev: "pending", id: "r", overlap: 's',
			act: store.FireRun, want: "last=+0 lastID=r lastAt=NOW runs=2"},
		{name: "prev-later", fields: []string{"last", "+5", "lastID", "p"}, prev: "pending", overlap: 's',
			act: store.FireRun, want: "last=+5 lastID=p runs=1"},
	}
	servers(t, func(e *env) {
		var names []string
		for _, c := range cases {
			names = append(names, c.name)
		}
		s := scheds(e, names...)
		now := s.since
		var dues, jobs, deads, waiting []string
		for _, c := range cases {
			at := now - c.at
			// val returns a field's value as the hash holds it: an ID
			// prefixed by the schedule's name, "+n" and "-n" the µs n s
			// after and before at.
			val := func(k, v string) string {
				switch k {
				case "lastID", "rel", "ended":
					return c.name + ":" + v
				}
				if n, err := strconv.ParseInt(v, 10, 64); err == nil && (v[0] == '+' || v[0] == '-') {
					return d(at + n*sec)
				}
				return v
			}
			id := c.id
			if id == "" {
				id = "r"
			}
			var pid string
			if c.act != store.FireGone {
				fields := []string{"ver", "1", "headID", "h"}
				for i := 0; i+1 < len(c.fields); i += 2 {
					fields = append(fields, c.fields[i], val(c.fields[i], c.fields[i+1]))
					if c.fields[i] == "lastID" {
						pid = val("lastID", c.fields[i+1])
					}
				}
				s.sched(c.name, fields...)
			}
			switch c.prev {
			case "pending":
				e.pending(pid, far)
				dues = append(dues, fmt.Sprintf("%s=%d", pid, far))
				jobs = append(jobs, pid+"=k|p-"+pid)
			case "dead":
				e.job(pid, "k", "p-"+pid)
				e.dead(pid, "boom")
				jobs = append(jobs, pid+"=k|p-"+pid)
				deads = append(deads, pid+"=boom")
			}
			next := now + c.next
			if c.next == 0 {
				next = at + 60*sec
			}
			act, head, ver, err := e.st.FireSched(e.ctx, e.k, store.FireArgs{Name: c.name, At: at, ID: c.name + ":" + id,
				Attempt: max(c.attempt, 1), Next: next, Grace: sec, Missed: or(c.missed, 'a'), Overlap: or(c.overlap, 'a')})
			wantHead, wantVer := "h", int64(1)
			if c.act == store.FireGone {
				wantHead, wantVer = "", 0
			}
			if err != nil || act != c.act || head != wantHead || ver != wantVer {
				t.Errorf("%s: FireSched = %d, %q, %d, %v; want %d, %q, %d", c.name, act, head, ver, err, c.act, wantHead, wantVer)
			}
			var want []string
			if c.act != store.FireGone {
				fs := []string{"ver=1", "headID=h"}
				for _, f := range strings.Fields(c.want) {
					k, v, _ := strings.Cut(f, "=")
					fs = append(fs, k+"="+val(k, v))
				}
				want = append(want, "sched:"+c.name+": "+strings.Join(fs, " "))
			}
			if c.wait != "" {
				want = append(want, "sched:"+c.name+":wait: "+c.name+":"+c.wait)
				waiting = append(waiting, c.name)
			}
			if waiting != nil {
				want = append(want, "sched:waiting: "+strings.Join(waiting, " "))
			}
			s.names = []string{c.name}
			s.schedAre(c.name, want...)
		}
		e.keysAre("after FireSched: the jobs as seeded",
			"due: "+strings.Join(dues, " "), "job: "+strings.Join(jobs, " "), "dead: "+strings.Join(deads, " "))
	})
}

// or returns b, or def if b is 0.
func or(b, def byte) byte {
	if b == 0 {
		return def
	}
	return b
}

// sched-done: a run not the schedule's last (or of no schedule) changes
// nothing (false); the last ends, and the first run delayed behind it
// is let go, a new job of its ID + "+d" due now, told to a live worker;
// the wait list emptied takes the schedule off :sched:waiting; with none
// left it lets none go.
func TestScriptSchedDone(t *testing.T) {
	servers(t, func(e *env) {
		s := scheds(e, "a", "b")
		e.live("w1", far)
		msg := e.inbox("w1")
		e.pending("a2", far)
		s.sched("a", "blob", "k\x00pa", "ver", "1", "head", d(far), "headID", "a9", "last", d(past), "lastID", "a2")
		s.wait("a", "a3", "a4")
		s.sched("b", "blob", "k\x00pb", "ver", "1", "head", d(far), "headID", "b9", "lastID", "b1")
		s.wait("b")
		done := func(step, name, id string, want bool) {
			t.Helper()
			ok, err := e.st.DoneSched(e.ctx, e.k, name, id)
			check(t, step, ok, err, want)
		}
		done("DoneSched of no schedule", "x", "x1", false)
		done("DoneSched of a run not the last", "a", "a1", false)
		s.schedAre("after DoneSched of a run not the last",
			fmt.Sprintf("sched: a=%d b=%d", far, far),
			fmt.Sprintf("sched:a: blob=k|pa ver=1 head=%d headID=a9 last=%d lastID=a2", far, past),
			"sched:a:wait: a3 a4",
			fmt.Sprintf("sched:b: blob=k|pb ver=1 head=%d headID=b9 lastID=b1", far),
			"sched:waiting: a b")

		done("DoneSched", "a", "a2", true)
		t3 := s.score("a3+d")
		if m := msg(); m != "n"+d(t3) {
			t.Errorf("w1 was told %q; want n%d", m, t3)
		}
		s.schedAre("after DoneSched",
			fmt.Sprintf("sched: a=%d b=%d", far, far),
			fmt.Sprintf("sched:a: blob=k|pa ver=1 head=%d headID=a9 last=%d lastID=a2 ended=a2 rel=a3+d", far, past),
			"sched:a:wait: a4",
			fmt.Sprintf("sched:b: blob=k|pb ver=1 head=%d headID=b9 lastID=b1", far),
			"sched:waiting: a b")
		done("DoneSched again", "a", "a2", true)
		t4 := s.score("a4+d")
		done("DoneSched with no run delayed", "b", "b1", false)
		done("DoneSched with no run delayed left", "a", "a2", false)
		e.keysAre("after DoneSched",
			fmt.Sprintf("due: a2=%d a3+d=%d a4+d=%d", far, t3, t4),
			"job: a2=k|p-a2 a3+d=k|pa a4+d=k|pa",
			fmt.Sprintf("workers: w1=%d", far))
		s.schedAre("after DoneSched of every run",
			fmt.Sprintf("sched: a=%d b=%d", far, far),
			fmt.Sprintf("sched:a: blob=k|pa ver=1 head=%d headID=a9 last=%d lastID=a2 ended=a2 rel=a4+d", far, past),
			fmt.Sprintf("sched:b: blob=k|pb ver=1 head=%d headID=b9 lastID=b1 ended=b1", far))
	})
}

// sched-tend: of the schedules that wait, one whose last run is live
// keeps its runs delayed, one whose last is dead (or gone) lets the
// first go, one with none left leaves :sched:waiting; it returns the
// schedules whose head has passed with no live job (none, or dead), by
// their heads, up to n, not one paused, one whose head's job is pending,
// or one whose head is to come.
func TestScriptSchedTend(t *testing.T) {
	servers(t, func(e *env) {
		s := scheds(e, "live", "dead", "gone", "empty", "none", "deadhead", "ok", "paused", "later")
		now := s.since
		e.pending("live1", far)
		s.sched("live", "blob", "k\x00pl", "ver", "1", "head", d(far), "headID", "live9", "lastID", "live1")
		s.wait("live", "live2")
		e.job("dead1", "k", "p-dead1")
		e.dead("dead1", "boom")
		s.sched("dead", "blob", "k\x00pd", "ver", "1", "head", d(far), "headID", "dead9", "lastID", "dead1")
		s.wait("dead", "dead2", "dead3")
		s.sched("gone", "blob", "k\x00pg", "ver", "1", "head", d(far), "headID", "gone9", "lastID", "gone1")
		s.wait("gone", "gone2")
		s.sched("empty", "blob", "k\x00pe", "ver", "1", "head", d(far), "headID", "empty9", "lastID", "empty1")
		s.wait("empty")
		// The chains: broken (none, deadhead) and not.
		s.sched("none", "def", "d", "blob", "k\x00pn", "ver", "2", "head", d(past), "headID", "none1", "runs", "7")
		e.job("deadhead1", "k", "p-deadhead1")
		e.dead("deadhead1", "boom")
		s.sched("deadhead", "def", "d", "blob", "k\x00ph", "ver", "1", "head", d(past+1), "headID", "deadhead1")
		e.pending("ok1", past+2)
		s.sched("ok", "def", "d", "blob", "k\x00po", "ver", "1", "head", d(past+2), "headID", "ok1")
		s.sched("paused", "def", "d", "blob", "k\x00pp", "ver", "1", "head", d(past+3), "headID", "paused1", "paused", "1")
		s.sched("later", "def", "d", "blob", "k\x00pt", "ver", "1", "head", d(now+60_000_000), "headID", "later1")

		got, at, err := e.st.TendScheds(e.ctx, e.k, 4)
		if err != nil || at < now {
			t.Fatalf("TendScheds = %v, %d, %v", got, at, err)
		}
		want := []store.Sched{
			{Name: "none", Def: "d", Blob: "k\x00pn", Ver: 2, Head: past, HeadID: "none1", Runs: 7},
			{Name: "deadhead", Def: "d", Blob: "k\x00ph", Ver: 1, Head: past + 1, HeadID: "deadhead1"},
		}
		if !slices.Equal(got, want) {
			t.Errorf("TendScheds returned\n%+v\nwant\n%+v", got, want)
		}
		t2, t3 := s.score("dead2+d"), s.score("gone2+d")
		e.keysAre("after TendScheds",
			fmt.Sprintf("due: live1=%d ok1=%d dead2+d=%d gone2+d=%d", far, past+2, t2, t3),
			"job: live1=k|p-live1 dead1=k|p-dead1 deadhead1=k|p-deadhead1 ok1=k|p-ok1 dead2+d=k|pd gone2+d=k|pg",
			"dead: dead1=boom deadhead1=boom")
		s.schedAre("after TendScheds",
			fmt.Sprintf("sched: live=%d dead=%d gone=%d empty=%d none=%d deadhead=%d ok=%d paused=%d later=%d", far, far, far, far, past, past+1, past+2, past+3, now+60_000_000),
			fmt.Sprintf("sched:live: blob=k|pl ver=1 head=%d headID=live9 lastID=live1", far),
			"sched:live:wait: live2",
			fmt.Sprintf("sched:dead: blob=k|pd ver=1 head=%d headID=dead9 lastID=dead1 rel=dead2+d", far),
			"sched:dead:wait: dead3",
			fmt.Sprintf("sched:gone: blob=k|pg ver=1 head=%d headID=gone9 lastID=gone1 rel=gone2+d", far),
			fmt.Sprintf("sched:empty: blob=k|pe ver=1 head=%d headID=empty9 lastID=empty1", far),
			fmt.Sprintf("sched:none: def=d blob=k|pn ver=2 head=%d headID=none1 runs=7", past),
			fmt.Sprintf("sched:deadhead: def=d blob=k|ph ver=1 head=%d headID=deadhead1", past+1),
			fmt.Sprintf("sched:ok: def=d blob=k|po ver=1 head=%d headID=ok1", past+2),
			fmt.Sprintf("sched:paused: def=d blob=k|pp ver=1 head=%d headID=paused1 paused=1", past+3),
			fmt.Sprintf("sched:later: def=d blob=k|pt ver=1 head=%d headID=later1", now+60_000_000),
			"sched:waiting: live dead")

		got, _, err = e.st.TendScheds(e.ctx, e.k, 1)
		if err != nil || len(got) != 1 || got[0].Name != "none" {
			t.Errorf("TendScheds of 1 = %+v, %v; want none", got, err)
		}
	})
}

// sched-list: the schedules by their heads from a rank, each with its
// record: its head's job live or not (pending; dead, gone), its runs
// waiting; the server's clock.
func TestScriptSchedList(t *testing.T) {
	servers(t, func(e *env) {
		s := scheds(e, "a", "b", "c")
		now := s.since
		e.pending("b1", now+1_000)
		s.sched("b", "def", "db", "blob", "k\x00pb", "ver", "3", "head", d(now+1_000), "headID", "b1",
			"last", d(now-1_000), "lastID", "b0", "lastAt", "17", "runs", "4", "missed", "5", "skipped", "6", "delayed", "7")
		s.wait("b", "b01", "b02")
		e.job("a1", "k", "p-a1")
		e.dead("a1", "boom")
		s.sched("a", "def", "da", "blob", "k\x00pa", "ver", "1", "head", d(now+2_000), "headID", "a1", "paused", "1")
		s.sched("c", "def", "dc", "blob", "k\x00pc", "ver", "1", "head", d(now+3_000), "headID", "c1")
		b := store.Sched{Name: "b", Def: "db", Blob: "k\x00pb", Ver: 3, Head: now + 1_000, HeadID: "b1", HeadExists: true,
			Last: now - 1_000, LastID: "b0", LastAt: 17, Runs: 4, Missed: 5, Skipped: 6, Delayed: 7, Waiting: 2}
		a := store.Sched{Name: "a", Def: "da", Blob: "k\x00pa", Ver: 1, Paused: true, Head: now + 2_000, HeadID: "a1"}
		c := store.Sched{Name: "c", Def: "dc", Blob: "k\x00pc", Ver: 1, Head: now + 3_000, HeadID: "c1"}
		for _, q := range []struct {
			from, limit int
			want        []store.Sched
		}{{0, 2, []store.Sched{b, a}}, {1, 10, []store.Sched{a, c}}, {3, 10, nil}} {
			got, at, err := e.st.ListScheds(e.ctx, e.k, q.from, q.limit)
			if err != nil || at < now || !slices.Equal(got, q.want) {
				t.Errorf("ListScheds(%d, %d) = %+v, %d, %v; want %+v", q.from, q.limit, got, at, err, q.want)
			}
		}
	})
}

// sched-pause: no schedule (0); a head past the runs given (2, nothing
// done); paused (1), its pending head dropped and kept as the head; the
// runs made ahead that no worker holds dropped (one leased ahead taken
// back from its worker, who is told), the earliest dropped the new head,
// one running kept; a head running kept, the schedule paused.
func TestScriptSchedPause(t *testing.T) {
	servers(t, func(e *env) {
		s := scheds(e, "a", "b", "c")
		now := s.since
		e.live("w2", far)
		msg := e.inbox("w2")
		e.pending("a1", now+60_000_000)
		s.sched("a", "ver", "1", "head", d(now+60_000_000), "headID", "a1")
		tb := now - 1_000_000
		e.lease("b1", "w1", 1, tb, tb+lease)
		e.lease("b2", "w2", 1, now+1_500_000, now+1_500_000+lease)
		e.pending("b3", now+3_000_000)
		s.sched("b", "ver", "1", "head", d(now+3_000_000), "headID", "b3", "last", d(tb), "lastID", "b1")
		e.lease("c1", "w1", 1, tb-1, tb-1+lease)
		s.sched("c", "ver", "1", "head", d(tb-1), "headID", "c1")
		pause := func(step, name string, ahead []store.Run, upto int64, want store.Dropped) {
			t.Helper()
			r, err := e.st.PauseSched(e.ctx, e.k, name, ahead, upto)
			check(t, step, r, err, want)
		}
		pause("PauseSched of no schedule", "x", nil, far, store.NoSchedToDrop)
		pause("PauseSched of runs the head is past", "a", []store.Run{{now + 30_000_000, "a0"}}, now+30_000_000, store.HeadPast)
		s.schedAre("after PauseSched refused",
			fmt.Sprintf("sched: a=%d b=%d c=%d", now+60_000_000, now+3_000_000, tb-1),
			fmt.Sprintf("sched:a: ver=1 head=%d headID=a1", now+60_000_000),
			fmt.Sprintf("sched:b: ver=1 head=%d headID=b3 last=%d lastID=b1", now+3_000_000, tb),
			fmt.Sprintf("sched:c: ver=1 head=%d headID=c1", tb-1))

		pause("PauseSched of a pending head", "a", []store.Run{{now + 60_000_000, "a1"}}, now+60_000_000, store.DroppedAhead)
		pause("PauseSched of runs made ahead", "b", []store.Run{{tb, "b1"}, {now + 1_500_000, "b2"}, {now + 3_000_000, "b3"}}, now+4_000_000, store.DroppedAhead)
		if m := msg(); m != "cb2" {
			t.Errorf("w2 was told %q; want cb2", m)
		}
		pause("PauseSched of a running head", "c", []store.Run{{tb - 1, "c1"}}, tb, store.DroppedAhead)
		e.keysAre("after PauseSched",
			fmt.Sprintf("due: b1=%d c1=%d", tb+lease, tb-1+lease),
			"job: b1=k|p-b1 c1=k|p-c1",
			fmt.Sprintf("run: b1=1|w1|%d c1=1|w1|%d", tb, tb-1),
			fmt.Sprintf("lease:w1: b1=%d c1=%d", tb, tb-1),
			fmt.Sprintf("workers: w2=%d", far))
		s.schedAre("after PauseSched",
			fmt.Sprintf("sched: a=%d b=%d c=%d", now+60_000_000, now+1_500_000, tb-1),
			fmt.Sprintf("sched:a: ver=1 head=%d headID=a1 paused=1", now+60_000_000),
			fmt.Sprintf("sched:b: ver=1 head=%d headID=b2 last=%d lastID=b1 paused=1", now+1_500_000, tb),
			fmt.Sprintf("sched:c: ver=1 head=%d headID=c1 paused=1", tb-1))
	})
}

// sched-remove: no schedule (0); a head past the runs given (2, nothing
// done); removed (1): its hash, wait list and entries in :sched and
// :sched:waiting, its pending head and the runs made ahead that no
// worker holds, one leased ahead taken back (its worker told); a run
// running kept; another schedule untouched.
func TestScriptSchedRemove(t *testing.T) {
	servers(t, func(e *env) {
		s := scheds(e, "a", "o")
		now := s.since
		e.live("w2", far)
		msg := e.inbox("w2")
		ta := now - 1_000_000
		e.lease("a1", "w1", 1, ta, ta+lease)
		e.lease("a2", "w2", 1, now+1_500_000, now+1_500_000+lease)
		e.pending("a3", now+3_000_000)
		s.sched("a", "ver", "1", "head", d(now+3_000_000), "headID", "a3", "last", d(ta), "lastID", "a1")
		s.wait("a", "a0")
		e.pending("o1", far)
		s.sched("o", "ver", "1", "head", d(far), "headID", "o1")
		s.wait("o", "o0")
		ahead := []store.Run{{ta, "a1"}, {now + 1_500_000, "a2"}, {now + 3_000_000, "a3"}}
		r, err := e.st.RemoveSched(e.ctx, e.k, "x", nil, far)
		check(t, "RemoveSched of no schedule", r, err, store.NoSchedToDrop)
		r, err = e.st.RemoveSched(e.ctx, e.k, "a", ahead[:2], now+2_000_000)
		check(t, "RemoveSched of runs the head is past", r, err, store.HeadPast)
		others := []string{
			fmt.Sprintf("sched:o: ver=1 head=%d headID=o1", far),
			"sched:o:wait: o0",
		}
		s.schedAre("after RemoveSched refused", append(others,
			fmt.Sprintf("sched: a=%d o=%d", now+3_000_000, far),
			fmt.Sprintf("sched:a: ver=1 head=%d headID=a3 last=%d lastID=a1", now+3_000_000, ta),
			"sched:a:wait: a0",
			"sched:waiting: a o")...)

		r, err = e.st.RemoveSched(e.ctx, e.k, "a", ahead, now+4_000_000)
		check(t, "RemoveSched", r, err, store.DroppedAhead)
		if m := msg(); m != "ca2" {
			t.Errorf("w2 was told %q; want ca2", m)
		}
		e.keysAre("after RemoveSched",
			fmt.Sprintf("due: a1=%d o1=%d", ta+lease, far),
			"job: a1=k|p-a1 o1=k|p-o1",
			fmt.Sprintf("run: a1=1|w1|%d", ta),
			fmt.Sprintf("lease:w1: a1=%d", ta),
			fmt.Sprintf("workers: w2=%d", far))
		s.schedAre("after RemoveSched", append(others,
			fmt.Sprintf("sched: o=%d", far),
			"sched:waiting: o")...)
	})
}

// sched-get: a schedule's record, every field, its head's job live
// (pending) or not (dead, gone), its runs waiting; no schedule; the
// server's clock.
func TestScriptSchedGet(t *testing.T) {
	servers(t, func(e *env) {
		s := scheds(e, "a", "dead", "gone")
		now := s.since
		e.pending("a1", far)
		s.sched("a", "def", "da", "blob", "k\x00pa", "ver", "3", "paused", "1", "head", d(far), "headID", "a1",
			"last", d(now-1_000), "lastID", "a0", "lastAt", "17", "runs", "4", "missed", "5", "skipped", "6", "delayed", "7", "ended", "a0", "rel", "x")
		s.wait("a", "a01", "a02", "a03")
		e.job("dead1", "k", "p-dead1")
		e.dead("dead1", "boom")
		s.sched("dead", "def", "dd", "blob", "k\x00pd", "ver", "1", "head", d(past), "headID", "dead1")
		s.sched("gone", "def", "dg", "blob", "k\x00pg", "ver", "1", "head", d(past), "headID", "gone1")
		for _, c := range []struct {
			name   string
			exists bool
			want   store.Sched
		}{
			{"a", true, store.Sched{Name: "a", Def: "da", Blob: "k\x00pa", Ver: 3, Paused: true, Head: far, HeadID: "a1", HeadExists: true,
				Last: now - 1_000, LastID: "a0", LastAt: 17, Runs: 4, Missed: 5, Skipped: 6, Delayed: 7, Waiting: 3}},
			{"dead", true, store.Sched{Name: "dead", Def: "dd", Blob: "k\x00pd", Ver: 1, Head: past, HeadID: "dead1"}},
			{"gone", true, store.Sched{Name: "gone", Def: "dg", Blob: "k\x00pg", Ver: 1, Head: past, HeadID: "gone1"}},
			{"x", false, store.Sched{Name: "x"}},
		} {
			got, ok, at, err := e.st.GetSched(e.ctx, e.k, c.name)
			if err != nil || ok != c.exists || got != c.want || at < now {
				t.Errorf("GetSched(%q) = %+v, %v, %d, %v; want %+v, %v, now", c.name, got, ok, at, err, c.want, c.exists)
			}
		}
	})
}
