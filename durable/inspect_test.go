package durable_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
)

// listAll pages through the jobs in state, limit at a time, and returns
// their IDs in the order List gave them, and how many pages it took.
func listAll(t *testing.T, q *durable.Queue, state durable.State, limit int) ([]string, []durable.Info) {
	t.Helper()
	var ids []string
	var infos []durable.Info
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatalf("List %v: no end after %d pages", state, pages)
		}
		page, next, err := q.List(context.Background(), state, cursor, limit)
		if err != nil {
			t.Fatalf("List %v %q: %v", state, cursor, err)
		}
		if len(page) > limit {
			t.Fatalf("List %v: %d jobs, over the limit %d", state, len(page), limit)
		}
		for _, in := range page {
			if in.State != state {
				t.Fatalf("List %v gave %s in state %v", state, in.ID, in.State)
			}
			ids = append(ids, in.ID)
			infos = append(infos, in)
		}
		if next == "" {
			return ids, infos
		}
		cursor = next
	}
}

// deadQueue returns a Queue whose "fail" handler fails every job for
// good at its first attempt, with the error "no: ID" ("fail2": "no2:
// ID"), and whose "block" handler runs until release or the test's end;
// its Redis client; and release.
func deadQueue(t *testing.T, name string) (q *durable.Queue, rdb redis.UniversalClient, release func()) {
	t.Helper()
	rdb = newClient(t, startRedis(t).Addr)
	stop := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(stop) }) }
	t.Cleanup(release)
	q = newQueue(t, rdb, durable.WithName(name), durable.WithRetry(1, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithKinds("idle"),
		durable.WithHandler("fail", func(_ context.Context, j durable.Job) error { return errors.New("no: " + j.ID) }),
		durable.WithHandler("fail2", func(_ context.Context, j durable.Job) error { return errors.New("no2: " + j.ID) }),
		durable.WithHandler("block", func(ctx context.Context, j durable.Job) error {
			select {
			case <-stop:
			case <-ctx.Done():
			}
			return nil
		}))
	t.Cleanup(func() { release(); q.Close(context.Background()) })
	return q, rdb, release
}

// counts reads q's Counts, failing the test on an error.
func counts(t *testing.T, q *durable.Queue) durable.Counts {
	t.Helper()
	c, err := q.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Counts, List, and the bulk retry and delete of dead jobs, on one queue
// holding jobs in every state.
func TestCountsListRetryDelete(t *testing.T) {
	q, rdb, release := deadQueue(t, "inspect")
	ctx := context.Background()
	if c := counts(t, q); c.Pending != 0 || c.Due != 0 || c.Running != 0 || c.Dead != 0 || c.Lateness != 0 ||
		time.Since(c.At).Abs() > time.Minute {
		t.Fatalf("Counts of an empty queue = %+v", c)
	}
	// 300 dead (200 of "fail", 100 of "fail2": over a listpack's 128, so
	// :dead is a hash table), 3 running, 50 pending an hour ahead (30 of
	// them at one due time); and on a queue of another name with no
	// worker, 2 jobs overdue.
	for i := range 300 {
		kind := "fail"
		if i%3 == 2 {
			kind = "fail2"
		}
		if _, err := q.ScheduleAfter(ctx, fmt.Sprintf("dead-%03d", i), kind, 0, []byte("<b>x</b>")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		q.ScheduleAfter(ctx, fmt.Sprint("run-", i), "block", 0, nil)
	}
	hour := time.Now().Add(time.Hour)
	for i := range 50 {
		at := hour
		if i >= 30 {
			at = hour.Add(time.Duration(i) * time.Second)
		}
		q.Schedule(ctx, fmt.Sprintf("later-%02d", i), "idle", at, []byte(fmt.Sprint(i)))
	}
	idle := newQueue(t, rdb, durable.WithName("inspect-idle"))
	idle.Schedule(ctx, "late-b", "idle", time.Now().Add(-time.Second), nil)
	idle.Schedule(ctx, "late-a", "idle", time.Now().Add(-2*time.Second), nil)
	waitFor(t, 20*time.Second, "300 dead and 3 running", func() bool {
		c := counts(t, q)
		return c.Dead == 300 && c.Running == 3
	})
	if c := counts(t, q); c.Pending != 50 || c.Due != 0 || c.Lateness != 0 {
		t.Errorf("Counts = %+v; want 50 pending, 3 running, 300 dead, none due", c)
	}
	if c := counts(t, idle); c.Pending != 2 || c.Due != 2 || c.Running != 0 || c.Dead != 0 ||
		c.Lateness < 2*time.Second || c.Lateness > time.Minute {
		t.Errorf("Counts of the queue without worker = %+v; want 2 pending, 2 due, 2 s late", c)
	}
	if ids, _ := listAll(t, idle, durable.Pending, 1); !slices.Equal(ids, []string{"late-a", "late-b"}) {
		t.Errorf("List pending of the queue without worker = %v; want late-a, late-b", ids)
	}

	// Pending: by due time, then ID; every job once, whatever the page.
	var wantPending []string
	for i := range 50 {
		wantPending = append(wantPending, fmt.Sprintf("later-%02d", i))
	}
	for _, limit := range []int{1, 7, 1000} {
		ids, infos := listAll(t, q, durable.Pending, limit)
		if !slices.Equal(ids, wantPending) {
			t.Errorf("List pending, %d a page = %v; want %v", limit, ids, wantPending)
		}
		if in := infos[0]; in.Kind != "idle" || string(in.Payload) != "0" || in.Due.Before(hour.Add(-time.Microsecond)) || in.Attempt != 0 {
			t.Errorf("List pending: %+v", in)
		}
	}
	ids, _ := listAll(t, q, durable.Running, 2)
	if slices.Sort(ids); !slices.Equal(ids, []string{"run-0", "run-1", "run-2"}) {
		t.Errorf("List running = %v", ids)
	}
	ids, infos := listAll(t, q, durable.Dead, 50)
	if len(ids) != 300 {
		t.Fatalf("List dead: %d jobs, want 300", len(ids))
	}
	seen := map[string]bool{}
	for _, in := range infos {
		if seen[in.ID] || !strings.HasSuffix(in.Err, ": "+in.ID) || in.Attempt != 1 || string(in.Payload) != "<b>x</b>" {
			t.Fatalf("List dead: %+v (seen before: %v)", in, seen[in.ID])
		}
		seen[in.ID] = true
	}

	// A cursor whose job has gone since: the walk goes on after its place.
	page, next, err := q.List(ctx, durable.Pending, "", 5)
	if err != nil || len(page) != 5 {
		t.Fatal(len(page), err)
	}
	q.Cancel(ctx, page[4].ID) // later-04, of the 30 at one due time
	rest, _, err := q.List(ctx, durable.Pending, next, 3)
	if err != nil || len(rest) != 3 || rest[0].ID != "later-05" {
		t.Errorf("List after a cancelled cursor = %v, %v; want later-05 first", rest, err)
	}

	// RetryDead of one: its attempts forgotten, it runs (and dies) again;
	// a second retry of the same ID, not dead now, does nothing.
	n, err := q.RetryDead(ctx, "dead-000", "dead-000", "run-0", "nope")
	if n != 1 || err != nil {
		t.Fatalf("RetryDead = %d, %v; want 1", n, err)
	}
	if in, _, _ := q.Lookup(ctx, "dead-000"); in.State == durable.Dead && in.Err == "" {
		t.Errorf("after RetryDead: %+v", in)
	}
	waitFor(t, 10*time.Second, "dead-000 dead again", func() bool {
		in, ok, _ := q.Lookup(ctx, "dead-000")
		return ok && in.State == durable.Dead && in.Attempt == 1
	})

	// DeleteDead of two, one not dead.
	if n, err := q.DeleteDead(ctx, "dead-001", "later-00"); n != 1 || err != nil {
		t.Fatalf("DeleteDead = %d, %v; want 1", n, err)
	}
	if _, ok, _ := q.Lookup(ctx, "dead-001"); ok {
		t.Error("dead-001 still there after DeleteDead")
	}
	if _, ok, _ := q.Lookup(ctx, "later-00"); !ok {
		t.Error("DeleteDead deleted a pending job")
	}

	// DeleteAllDead of one kind; RetryAllDead of the rest, which die
	// again.
	if n, err := q.DeleteAllDead(ctx, "fail2"); n != 100 || err != nil {
		t.Fatalf(`DeleteAllDead("fail2") = %d, %v; want 100`, n, err)
	}
	if c := counts(t, q); c.Dead != 199 {
		t.Fatalf("Dead = %d after deleting 100 of 299, want 199", c.Dead)
	}
	if n, err := q.RetryAllDead(ctx, ""); n != 199 || err != nil {
		t.Fatalf("RetryAllDead = %d, %v; want 199", n, err)
	}
	waitFor(t, 20*time.Second, "199 dead again", func() bool { return counts(t, q).Dead == 199 })
	if n, err := q.DeleteAllDead(ctx, ""); n != 199 || err != nil {
		t.Fatalf("DeleteAllDead = %d, %v; want 199", n, err)
	}
	release()
	waitFor(t, 10*time.Second, "the running jobs done", func() bool { return counts(t, q).Running == 0 })
	if c := counts(t, q); c.Dead != 0 || c.Pending != 49 {
		t.Errorf("Counts at the end = %+v; want 49 pending", c)
	}
}

// List of the running jobs reads the live leases, not the pending jobs:
// with none running among 2,000 pending, one call answers no job and no
// cursor. Pending jobs sharing one due time page in ID order.
func TestListRunningReadsLeases(t *testing.T) {
	q, _, _ := deadQueue(t, "walk")
	ctx := context.Background()
	at := time.Now().Add(time.Hour)
	for i := range 2000 {
		q.Schedule(ctx, fmt.Sprintf("p%04d", i), "idle", at, nil)
	}
	page, next, err := q.List(ctx, durable.Running, "", 1)
	if err != nil || len(page) != 0 || next != "" {
		t.Errorf("List running over 2000 pending jobs = %d jobs, next %q, %v; want none and no next page", len(page), next, err)
	}
	ids, _ := listAll(t, q, durable.Pending, 333)
	if len(ids) != 2000 || !slices.IsSorted(ids) {
		t.Errorf("List pending: %d jobs, sorted %v", len(ids), slices.IsSorted(ids))
	}
}

// Paging the running jobs while their handlers renew their leases gives
// each once, in ID order: a renewal moves a lease's end, not its ID.
func TestListRunningWhileRenewing(t *testing.T) {
	q, _, release := deadQueue(t, "renew")
	ctx := context.Background()
	for i := range 12 {
		q.ScheduleAfter(ctx, fmt.Sprintf("run-%02d", i), "block", 0, nil)
	}
	waitFor(t, 10*time.Second, "12 running", func() bool { return counts(t, q).Running == 12 })
	first, next, err := q.List(ctx, durable.Running, "", 5)
	if err != nil || len(first) != 5 || next == "" {
		t.Fatalf("List running page 1 = %d jobs, %q, %v", len(first), next, err)
	}
	// A renewal (every third of the 5 s lease) moves the first page's
	// leases' ends on.
	waitFor(t, 10*time.Second, "a renewal", func() bool {
		in, ok, _ := q.Lookup(ctx, first[0].ID)
		return ok && in.Due.After(first[0].Due)
	})
	ids, _ := listAll(t, q, durable.Running, 5)
	seen := map[string]int{}
	for _, id := range ids {
		seen[id]++
	}
	for _, in := range first {
		if seen[in.ID] != 1 {
			t.Errorf("%s seen %d times in a walk from the start", in.ID, seen[in.ID])
		}
	}
	rest, _, err := q.List(ctx, durable.Running, next, 1000)
	if err != nil || len(rest) != 7 || slices.ContainsFunc(rest, func(in durable.Info) bool { return in.ID <= first[4].ID }) {
		t.Errorf("List running after page 1 = %v, %v; want the 7 after %s", rest, err, first[4].ID)
	}
	if len(ids) != 12 || !slices.IsSorted(ids) {
		t.Errorf("List running: %v; want 12 by ID", ids)
	}
	release()
}

// Bad input to the calls of this file is an error naming the call.
func TestInspectBadInput(t *testing.T) {
	rdb := newClient(t, "127.0.0.1:1")
	q := newQueue(t, rdb)
	ctx := context.Background()
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(q.List(ctx, durable.Pending, "", 0)), "durable: List: limit 0 not in [1, 1000]"},
		{second(q.List(ctx, durable.Dead, "", 1001)), "durable: List: limit 1001 not in [1, 1000]"},
		{second(q.List(ctx, durable.State(9), "", 1)), "durable: List: no such state State(9)"},
		{second(q.List(ctx, durable.Pending, "12", 1)), `durable: List: bad cursor "12" for state pending`},
		{second(q.List(ctx, durable.Dead, "x:1", 1)), `durable: List: bad cursor "x:1" for state dead`},
		{second(q.List(ctx, durable.Running, "12", 1)), `durable: List: bad cursor "12" for state running`},
		{second1(q.RetryDead(ctx, "a", "")), "durable: RetryDead: empty ID"},
		{second1(q.DeleteDead(ctx, strings.Repeat("x", durable.MaxIDLen+1))), "durable: DeleteDead: ID"},
		{second1(q.RetryDead(ctx, make([]string, durable.MaxList+1)...)), "durable: RetryDead: 1001 IDs, over MaxList (1000) a call"},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), c.want) {
			t.Errorf("error %v; want one that starts with %q", c.err, c.want)
		}
	}
	if _, _, err := q.List(ctx, durable.Running, "id:zz", 1); !errors.Is(err, durable.ErrCursor) {
		t.Errorf("List with a bad cursor: %v; want one wrapping ErrCursor", err)
	}
	if n, err := q.RetryDead(ctx); n != 0 || err != nil {
		t.Errorf("RetryDead of no ID = %d, %v", n, err)
	}
	if _, err := durable.ParseState("done"); err == nil || err.Error() != `durable: no state "done" (pending, running, dead)` {
		t.Errorf("ParseState: %v", err)
	}
	for _, s := range []durable.State{durable.Pending, durable.Running, durable.Dead} {
		if got, err := durable.ParseState(s.String()); got != s || err != nil {
			t.Errorf("ParseState(%q) = %v, %v", s, got, err)
		}
	}
	q.Close(ctx)
	if _, err := q.Counts(ctx); !errors.Is(err, durable.ErrClosed) {
		t.Errorf("Counts after Close: %v", err)
	}
	var zero durable.Queue
	mustPanic(t, "durable: Counts on a Queue not made by New", func() { zero.Counts(ctx) })
	mustPanic(t, "durable: Name on a Queue not made by New", func() { zero.Name() })
	if got := durable.New(rdb, durable.WithName("n")).Name(); got != "n" {
		t.Errorf("Name = %q", got)
	}
}

func second[A, B any](_ A, _ B, err error) error { return err }
func second1[A any](_ A, err error) error        { return err }

// Jobs a paused kind parked are pending and due: Counts counts them, and
// List gives them after the jobs in :due, kind by kind, a cursor
// crossing from one set to the next.
func TestListParked(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r := newRuns()
	q := newQueue(t, rdb, durable.WithName("parked"), durable.WithHandler("a", r.handler),
		durable.WithHandler("b", r.handler), durable.WithHandler("c", r.handler))
	ctx := context.Background()
	for _, k := range []string{"b", "a"} {
		if err := q.Pause(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	q.Schedule(ctx, "a-2", "a", now.Add(-time.Second), nil)
	q.Schedule(ctx, "a-1", "a", now.Add(-2*time.Second), nil)
	q.Schedule(ctx, "b-1", "b", now.Add(-3*time.Second), nil)
	q.Schedule(ctx, "c-later", "c", now.Add(time.Hour), nil)
	want := []string{"c-later", "a-1", "a-2", "b-1"}
	waitFor(t, 10*time.Second, "the paused kinds' jobs parked", func() bool {
		ids, _ := listAll(t, q, durable.Pending, 1)
		return slices.Equal(ids, want)
	})
	for _, limit := range []int{2, 3, 100} {
		if ids, _ := listAll(t, q, durable.Pending, limit); !slices.Equal(ids, want) {
			t.Errorf("List pending, %d a page = %v; want %v", limit, ids, want)
		}
	}
	if ids, _ := listAll(t, q, durable.Running, 1); len(ids) != 0 {
		t.Errorf("List running = %v; want none", ids)
	}
	c := counts(t, q)
	if c.Pending != 4 || c.Due != 3 || c.Running != 0 || c.Lateness < 3*time.Second || c.Lateness > time.Minute {
		t.Errorf("Counts = %+v; want 4 pending, 3 due, 3 s late", c)
	}
	if err := q.Resume(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "a-1 and a-2 run", func() bool { return r.count("a-1") == 1 && r.count("a-2") == 1 })
	if ids, _ := listAll(t, q, durable.Pending, 1); !slices.Equal(ids, []string{"c-later", "b-1"}) {
		t.Errorf("List pending after Resume(a) = %v", ids)
	}
	if r.count("b-1") != 0 {
		t.Error("b-1 ran while its kind was paused")
	}
}

// A job a worker leased ahead of its due time is pending, not running,
// until its handler starts.
func TestLeasedAheadIsPending(t *testing.T) {
	q, _, release := deadQueue(t, "ahead")
	ctx := context.Background()
	q.ScheduleAfter(ctx, "soon", "block", 1500*time.Millisecond, nil)
	waitFor(t, 5*time.Second, "soon leased ahead", func() bool {
		in, ok, _ := q.Lookup(ctx, "soon")
		return ok && in.Worker != "" && in.State == durable.Pending
	})
	if c := counts(t, q); c.Running != 0 || c.Pending != 1 || c.Due != 0 {
		t.Errorf("Counts with soon leased ahead = %+v; want 1 pending, none due or running", c)
	}
	if _, infos := listAll(t, q, durable.Pending, 10); len(infos) != 1 || infos[0].Worker == "" {
		t.Errorf("List pending = %+v; want soon, with its worker", infos)
	}
	waitFor(t, 5*time.Second, "soon running", func() bool { return counts(t, q).Running == 1 })
	if ids, _ := listAll(t, q, durable.Running, 10); !slices.Equal(ids, []string{"soon"}) {
		t.Errorf("List running = %v; want soon", ids)
	}
	release()
	waitFor(t, 5*time.Second, "soon done", func() bool { c := counts(t, q); return c.Running == 0 && c.Pending == 0 })
}

// Counts, List and the bulk delete see every shard of a queue made
// WithShards, where a Queue of one shard on the same name sees only its
// first.
func TestInspectShards(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	ctx := context.Background()
	q := newQueue(t, rdb, durable.WithName("inspect-shards"), durable.WithShards(3), durable.WithKinds("idle", "fail"))
	hour := time.Now().Add(time.Hour)
	for i := range 60 {
		if _, err := q.Schedule(ctx, fmt.Sprintf("later-%02d", i), "idle", hour, nil); err != nil {
			t.Fatal(err)
		}
	}
	// 30 dead jobs, each in its shard as a failed last attempt leaves it:
	// in :dead with its error, in no sorted set (the layout is in the
	// store's keys.go).
	tags := durable.ShardTags("inspect-shards", 3)
	for i := range 30 {
		id := fmt.Sprintf("dead-%02d", i)
		if _, err := q.Schedule(ctx, id, "fail", hour, nil); err != nil {
			t.Fatal(err)
		}
		h := fnv.New32a()
		h.Write([]byte(id))
		prefix := "{" + tags[h.Sum32()%3] + "}:"
		for _, err := range []error{
			rdb.ZRem(ctx, prefix+"due", id).Err(),
			rdb.HSet(ctx, prefix+"run", id, "1").Err(),
			rdb.HSet(ctx, prefix+"dead", id, "no: "+id).Err(),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if c := counts(t, q); c.Pending != 60 || c.Running != 0 || c.Dead != 30 {
		t.Fatalf("Counts = %+v; want 60 pending, 30 dead", c)
	}
	if n := rdb.HLen(ctx, "{inspect-shards}:job").Val(); n >= 90 {
		t.Fatalf("shard 0 alone holds %d of the 90 jobs: the jobs were not spread", n)
	}
	for _, tc := range []struct {
		state durable.State
		limit int
		want  int
	}{{durable.Pending, 7, 60}, {durable.Dead, 4, 30}} {
		ids, _ := listAll(t, q, tc.state, tc.limit)
		slices.Sort(ids)
		if ids = slices.Compact(ids); len(ids) != tc.want {
			t.Errorf("List %v: %d jobs, want %d", tc.state, len(ids), tc.want)
		}
	}
	if _, _, err := q.List(ctx, durable.Pending, "3/", 10); err == nil {
		t.Error("List took a cursor naming a fourth shard of three")
	}
	if n, err := q.DeleteAllDead(ctx, "fail"); err != nil || n != 30 {
		t.Fatalf("DeleteAllDead = %d, %v; want 30", n, err)
	}
	if c := counts(t, q); c.Dead != 0 || c.Pending != 60 {
		t.Fatalf("after DeleteAllDead, Counts = %+v; want 60 pending, none dead", c)
	}
}

// Lookup reads a job whose worker died, its lease run out, as pending, as
// List and Counts do and as the layout in the store's keys.go says: claimable
// again. It read running.
func TestLookupLeaseRanOut(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	ctx := context.Background()
	q := newQueue(t, rdb, durable.WithName("lease-out"), durable.WithKinds("idle"))
	if _, err := q.ScheduleAfter(ctx, "a", "idle", time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute).UnixMicro()
	// A lease of a worker gone: due and lease end a minute ago.
	if err := rdb.HSet(ctx, "{lease-out}:run", "a", fmt.Sprintf("1|gone|%d", past)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, "{lease-out}:due", redis.Z{Score: float64(past), Member: "a"}).Err(); err != nil {
		t.Fatal(err)
	}
	info, ok, err := q.Lookup(ctx, "a")
	if err != nil || !ok {
		t.Fatalf("Lookup = %v, %v", ok, err)
	}
	if info.State != durable.Pending {
		t.Errorf("Lookup of a job whose lease ran out: %v, want pending", info.State)
	}
	if c := counts(t, q); c.Due != 1 || c.Running != 0 {
		t.Errorf("Counts = %+v, want it due and not running", c)
	}
}
