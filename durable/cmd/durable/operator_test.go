package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/internal/listcursor"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// The command as a Go operator expects it: the tests of this file run
// the built binary against a real redis-server.

// seeded starts a redis-server with queue "cli" holding dead jobs
// dead-0..dead-4 (kind "fail", error "no: ID") and pending jobs, and
// returns its address and a Queue on it (no worker).
func seeded(t *testing.T, pending int) (string, *durable.Queue) {
	t.Helper()
	srv := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	w := durable.New(rdb, durable.WithName("cli"), durable.WithRetry(1, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithHandler("fail", func(_ context.Context, j durable.Job) error { return fmt.Errorf("no: %s", j.ID) }))
	for i := range 5 {
		w.ScheduleAfter(ctx, fmt.Sprint("dead-", i), "fail", 0, []byte("p"))
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := w.Counts(ctx); err == nil && c.Dead == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the jobs did not die")
		}
	}
	w.Close(ctx)
	q := durable.New(rdb, durable.WithName("cli"), durable.WithKinds("idle"))
	t.Cleanup(func() { q.Close(ctx) })
	at := time.Now().Add(time.Hour)
	for i := range pending {
		q.Schedule(ctx, fmt.Sprintf("p%05d", i), "idle", at, nil)
	}
	return srv.Addr, q
}

// Defect 8: a command's flags come before or after its arguments, and
// the global flags after the command too; "--" ends them.
func TestFlagsAfterArguments(t *testing.T) {
	addr, _ := seeded(t, 0)
	out := must(t, addr, "list", "dead", "-limit", "2")
	if n := strings.Count(out, "\ndead-"); n != 2 || !strings.Contains(out, "next page: -cursor ") {
		t.Errorf("list dead -limit 2: %d jobs\n%s", n, out)
	}
	if out := must(t, addr, "inspect", "dead-3", "-payload"); !strings.Contains(out, "p\n") {
		t.Errorf("inspect dead-3 -payload:\n%s", out)
	}
	if code, out, errs := exe(t, "stats", "-addr", addr, "-queue", "cli"); code != 0 || !regexp.MustCompile(`(?m)^dead +5$`).MatchString(out) {
		t.Errorf("stats -addr … -queue cli: exit %d\n%s%s", code, out, errs)
	}
	// After "--", "-x" is an ID: not found, not a flag.
	if code, _, errs := durableCmd(t, addr, "inspect", "--", "-x"); code != exitNotFound || !strings.Contains(errs, "no job -x") {
		t.Errorf("inspect -- -x: exit %d, %q", code, errs)
	}
}

// Defect 2: list running with nothing running, among 2,000 pending jobs,
// says so at once, with no next page.
func TestListRunningNoneRunning(t *testing.T) {
	addr, _ := seeded(t, 2000)
	out := must(t, addr, "list", "running")
	if out != "ID  KIND  LEASE ENDS  ATTEMPT  WORKER\n(no running job)\n" {
		t.Errorf("list running with none running:\n%s", out)
	}
}

// Defect 10: a job named that is not there (for retry and delete: not
// dead) exits 3 in every command, after doing the rest; the queue
// named too.
func TestNotFoundExits3(t *testing.T) {
	addr, _ := seeded(t, 1)
	for _, c := range []struct {
		args []string
		out  string
		err  string
	}{
		{[]string{"retry", "nosuch"}, "retried 0 dead jobs\n", "durable retry: no dead job nosuch\n"},
		{[]string{"delete", "nosuch"}, "deleted 0 dead jobs\n", "durable delete: no dead job nosuch\n"},
		{[]string{"retry", "p00000"}, "retried 0 dead jobs\n", "durable retry: no dead job p00000\n"},
		{[]string{"cancel", "nosuch"}, "", "durable cancel: no job nosuch\n"},
		{[]string{"inspect", "nosuch"}, "", "durable inspect: no job nosuch\n"},
		{[]string{"delete", "dead-1", "nosuch"}, "deleted 1 dead job\n", "durable delete: 1 of 2 IDs named no dead job: nosuch\n"},
		{[]string{"-queue", "clj", "stats"}, "", `durable stats: no queue clj in Redis (no layout record, no job): check -queue, or give -shards to make it` + "\n"},
		{[]string{"-queue", "clj", "pause", "x"}, "", `durable pause: no queue clj in Redis`},
	} {
		code, out, errs := durableCmd(t, addr, c.args...)
		if code != exitNotFound || out != c.out || !strings.HasPrefix(errs, c.err) {
			t.Errorf("durable %s: exit %d, %q, %q; want 3, %q, %q", strings.Join(c.args, " "), code, out, errs, c.out, c.err)
		}
	}
}

// Defect 6: move without -shards is a usage error, found before any
// call; with Redis down it is an error, and prints no count.
func TestMoveWithoutShards(t *testing.T) {
	code, out, errs := exe(t, "-addr", "127.0.0.1:1", "move")
	if code != exitUsage || out != "" || !strings.Contains(errs, "move needs -shards k") {
		t.Errorf("move without -shards: exit %d, %q, %q", code, out, errs)
	}
	code, out, errs = exe(t, "-addr", "127.0.0.1:1", "-timeout", "300ms", "-shards", "3", "move")
	if code != exitError || out != "" || !strings.Contains(errs, "cannot connect to Redis at 127.0.0.1:1") {
		t.Errorf("move -shards 3 with Redis down: exit %d, %q, %q", code, out, errs)
	}
}

// -h exits 0 with the usage on stdout, the command's own after one; the
// -addr line says its default once.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"list", "-h"}, {"-queue", "x", "retry", "-h"}} {
		code, out, errs := exe(t, args...)
		if code != 0 || errs != "" || !strings.Contains(out, "usage: durable") || !strings.Contains(out, "exit status: 0 done") {
			t.Errorf("durable %s: exit %d, stderr %q\n%s", strings.Join(args, " "), code, errs, out)
		}
	}
	_, out, _ := exe(t, "list", "-h")
	if !strings.Contains(out, "flags of list:\n  -cursor") {
		t.Errorf("list -h: no flags of list\n%s", out)
	}
	i := strings.Index(out, "  -addr")
	line := out[i : i+strings.Index(out[i:], "\n  -cluster")]
	if n := strings.Count(line, "default"); n != 1 {
		t.Errorf("-addr's help says default %d times:\n%s", n, line)
	}
}

// -o json writes stats, list and inspect as JSON; an ID that is not
// UTF-8 comes as base64, so that a script gets it back whole.
func TestJSON(t *testing.T) {
	addr, q := seeded(t, 3)
	q.Schedule(context.Background(), "bin\xff", "idle", time.Now().Add(2*time.Hour), []byte{0, 1})
	var st statsJSON
	if err := json.Unmarshal([]byte(must(t, addr, "-o", "json", "stats")), &st); err != nil || st.Queue != "cli" || st.Dead != 5 || st.Pending != 4 || st.Paused == nil {
		t.Errorf("stats -o json = %+v, %v", st, err)
	}
	var l listJSON
	if err := json.Unmarshal([]byte(must(t, addr, "list", "pending", "-limit", "3", "-o", "json")), &l); err != nil || len(l.Jobs) != 3 || l.Next == "" || l.Jobs[0].ID != "p00000" || l.Jobs[0].Due == "" {
		t.Fatalf("list -o json = %+v, %v", l, err)
	}
	if err := json.Unmarshal([]byte(must(t, addr, "list", "pending", "-payload", "-cursor", l.Next, "-o", "json")), &l); err != nil || len(l.Jobs) != 1 || l.Jobs[0].IDBase64 != "Ymlu/w==" || l.Jobs[0].PayloadBase64 != "" || l.Jobs[0].Payload != "\x00\x01" || l.Next != "" {
		t.Errorf("list -o json, page 2 = %+v, %v", l, err)
	}
	var j jobJSON
	if err := json.Unmarshal([]byte(must(t, addr, "-o", "json", "inspect", "dead-2")), &j); err != nil || j.State != "dead" || j.Error != "no: dead-2" || j.Attempts != 1 || j.PayloadBytes != 1 || j.Payload != "" {
		t.Errorf("inspect -o json = %+v, %v", j, err)
	}
}

// The command's cursor is the dashboard's (package listcursor): the one
// it prints is List's, encoded; a cursor that is not one is a usage
// error.
func TestCursorShared(t *testing.T) {
	addr, q := seeded(t, 5)
	_, next, err := q.List(context.Background(), durable.Pending, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	out := must(t, addr, "list", "-limit", "2", "pending")
	if !strings.HasSuffix(out, "next page: -cursor "+listcursor.Encode(next)+"\n") {
		t.Errorf("list pending printed\n%s\nwant the cursor %s", out, listcursor.Encode(next))
	}
	for _, c := range []string{"!!", listcursor.Encode("zz"), listcursor.Encode(next)} {
		code, _, errs := durableCmd(t, addr, "list", "-cursor", c, "dead")
		if code != exitUsage || !strings.Contains(errs, "cursor") {
			t.Errorf("list -cursor %s dead: exit %d, %q; want a usage error", c, code, errs)
		}
	}
}
