package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// bin is the command, built by TestMain: the tests run it as an
// operator does.
var bin string

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	dir, err := os.MkdirTemp("", "durable-cmd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "durable")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	redisserver.StopSharedCluster()
	os.RemoveAll(dir)
	os.Exit(code)
}

// exe runs the built command with args, and returns its exit status,
// stdout and stderr.
func exe(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DURABLE_REDIS=")
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// durableCmd runs the command line against addr, on queue "cli", and
// returns its exit status, stdout and stderr.
func durableCmd(t *testing.T, addr string, args ...string) (int, string, string) {
	t.Helper()
	return exe(t, append([]string{"-addr", addr, "-queue", "cli"}, args...)...)
}

// must runs the command line and fails the test unless it exits 0.
func must(t *testing.T, addr string, args ...string) string {
	t.Helper()
	code, out, errs := durableCmd(t, addr, args...)
	if code != 0 {
		t.Fatalf("durable %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// A queue with dead, running and pending jobs, seen and steered from the
// command line.
func TestCommands(t *testing.T) {
	srv := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()
	release := make(chan struct{})
	q := durable.New(rdb, durable.WithName("cli"), durable.WithRetry(1, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithHandler("fail", func(_ context.Context, j durable.Job) error {
			return fmt.Errorf("refused \x1b[31m%s", j.ID) // a terminal escape in the error
		}),
		durable.WithHandler("block", func(ctx context.Context, _ durable.Job) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}))
	defer q.Close(ctx)
	defer close(release)
	for i := range 5 {
		q.ScheduleAfter(ctx, fmt.Sprint("dead-", i), "fail", 0, []byte("p"))
	}
	q.ScheduleAfter(ctx, "run-1", "block", 0, nil)
	q.ScheduleAfter(ctx, "later-1", "fail", time.Hour, []byte("secret\x07"))
	q.ScheduleAfter(ctx, "later 2", "fail", 2*time.Hour, nil)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := q.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Dead == 5 && c.Running == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Counts = %+v; want 5 dead, 1 running", c)
		}
		time.Sleep(10 * time.Millisecond)
	}

	out := must(t, srv.Addr, "stats")
	for _, re := range []string{`(?m)^queue +cli$`, `(?m)^pending +2$`, `(?m)^due +0 `, `(?m)^running +1$`, `(?m)^dead +5$`, `(?m)^paused +none$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("stats: no line %s in\n%s", re, out)
		}
	}

	// list: pages, the cursor printed and taken back; quoted data.
	out = must(t, srv.Addr, "list", "-limit", "1", "-payload", "pending")
	m := regexp.MustCompile(`next page: -cursor (\S+)`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "later-1") || !strings.Contains(out, `"secret\a"`) {
		t.Fatalf("list pending, first page:\n%s", out)
	}
	out = must(t, srv.Addr, "list", "-limit", "1", "-cursor", m[1], "pending")
	if !strings.Contains(out, "later 2 ") || strings.Contains(out, "later-1") || strings.Contains(out, "next page") {
		t.Errorf("list pending, second page:\n%s", out)
	}
	out = must(t, srv.Addr, "list", "dead")
	if strings.Count(out, "\ndead-") != 5 || strings.Contains(out, "\x1b") || !strings.Contains(out, `"refused \x1b[31mdead-0"`) {
		t.Errorf("list dead:\n%q", out)
	}
	if out = must(t, srv.Addr, "list", "running"); !strings.Contains(out, "run-1") {
		t.Errorf("list running:\n%s", out)
	}

	// inspect
	out = must(t, srv.Addr, "inspect", "-payload", "dead-3")
	for _, want := range []string{"state     dead", "attempts  1", `"refused \x1b[31mdead-3"`, "payload   1 bytes", "p\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect: no %q in\n%s", want, out)
		}
	}
	if code, _, errs := durableCmd(t, srv.Addr, "inspect", "nope"); code != exitNotFound || !strings.Contains(errs, "no job nope") {
		t.Errorf("inspect nope: exit %d, %s", code, errs)
	}

	// retry one, delete one, retry the rest, delete them all.
	code, out, errs := durableCmd(t, srv.Addr, "retry", "dead-0", "later-1")
	if code != exitNotFound || out != "retried 1 dead job\n" || !strings.Contains(errs, "1 of 2 IDs named no dead job: later-1") {
		t.Errorf("retry of a dead job and a pending one: exit %d, %q, %q", code, out, errs)
	}
	if out = must(t, srv.Addr, "delete", "dead-1"); out != "deleted 1 dead job\n" {
		t.Errorf("delete: %q", out)
	}
	if _, ok, _ := q.Lookup(ctx, "dead-1"); ok {
		t.Error("dead-1 still there")
	}
	out = must(t, srv.Addr, "retry", "-all", "-kind", "fail")
	if !regexp.MustCompile(`^retried [34] dead jobs\n$`).MatchString(out) { // dead-0 may have died again
		t.Errorf("retry -all: %q", out)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, _ := q.Counts(ctx); c.Dead == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the retried jobs did not die again")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if out = must(t, srv.Addr, "delete", "-all"); out != "deleted 4 dead jobs\n" {
		t.Errorf("delete -all: %q", out)
	}

	// pause and resume, a kind and the whole queue, seen by stats.
	if out = must(t, srv.Addr, "pause", "fail"); out != "paused kind fail\n" {
		t.Errorf("pause fail: %q", out)
	}
	if out = must(t, srv.Addr, "pause"); out != "paused the whole queue\n" {
		t.Errorf("pause: %q", out)
	}
	if out = must(t, srv.Addr, "stats"); !regexp.MustCompile(`(?m)^paused +\(the whole queue\), fail$`).MatchString(out) {
		t.Errorf("stats while paused:\n%s", out)
	}
	if paused, _ := q.Paused(ctx); !slices.Equal(paused, []string{"", "fail"}) {
		t.Errorf("Paused = %q", paused)
	}
	must(t, srv.Addr, "resume")
	if out = must(t, srv.Addr, "resume", "fail"); out != "resumed kind fail\n" {
		t.Errorf("resume fail: %q", out)
	}
	if paused, _ := q.Paused(ctx); len(paused) != 0 {
		t.Errorf("Paused after resume = %q", paused)
	}
	// A misspelled kind is not paused, unless -force says so; a kind not
	// paused is not resumed.
	if code, out, errs := durableCmd(t, srv.Addr, "pause", "fial"); code != exitNotFound || out != "" ||
		!strings.Contains(errs, "no worker handles kind fial and no job has it") {
		t.Errorf("pause fial: exit %d, %q, %q; want 3 and no worker handles it", code, out, errs)
	}
	if paused, _ := q.Paused(ctx); len(paused) != 0 {
		t.Errorf("Paused after pause fial = %q", paused)
	}
	if out = must(t, srv.Addr, "pause", "-force", "fial"); out != "paused kind fial\n" {
		t.Errorf("pause -force fial: %q", out)
	}
	must(t, srv.Addr, "resume", "fial")
	if code, _, errs := durableCmd(t, srv.Addr, "resume", "fail"); code != exitNotFound || !strings.Contains(errs, "kind fail is not paused") {
		t.Errorf("resume of a kind not paused: exit %d, %q", code, errs)
	}

	// cancel: one job and one that is not.
	code, out, errs = durableCmd(t, srv.Addr, "cancel", "later 2", "nope")
	if code != exitNotFound || out != "cancelled later 2\n" || !strings.Contains(errs, "1 of 2 IDs named no job: nope") {
		t.Errorf("cancel: exit %d, %q, %q", code, out, errs)
	}
}

// Usage errors exit 2 with the usage; a Redis that cannot be reached
// exits 1 within -timeout.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"list"},
		{"list", "done"},
		{"list", "-cursor", "!!", "dead"},
		{"list", "-limit", "0", "dead"},
		{"list", "dead", "-limit", "1001"},
		{"-o", "yaml", "stats"},
		{"list", "-bogus", "dead"},
		{"stats", "x"},
		{"inspect"},
		{"retry"},
		{"retry", "-all", "a"},
		{"delete", "-kind", "k", "a"},
		{"cancel"},
		{"pause", "a", "b"},
		{"move", "x"},
		{"move"},
		{"-timeout", "1ms", "stats"},
		{"-queue", "a{b}", "stats"},
		{"-lease", "1ms", "stats"},
		{"-addr", "redis://127.0.0.1:1/db", "stats"},
	} {
		// No Redis: a usage error is found before any call.
		code, out, errs := exe(t, append([]string{"-addr", "127.0.0.1:1"}, args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errs, "usage: durable") {
			t.Errorf("durable %q: exit %d, stdout %q, stderr %q; want 2 and the usage", args, code, out, errs)
		}
	}
	start := time.Now()
	code, _, errs := exe(t, "-addr", "127.0.0.1:1", "-timeout", "300ms", "stats")
	if code != exitError || !strings.Contains(errs, "durable stats: cannot connect to Redis at 127.0.0.1:1: connection error: ") || time.Since(start) > 5*time.Second {
		t.Errorf("stats of no Redis: exit %d, %q after %v", code, errs, time.Since(start))
	}
	if got := clean("ok id"); got != "ok id" {
		t.Errorf("clean(%q) = %q", "ok id", got)
	}
	for _, s := range []string{"", " x", "a\tb", "\x1b[2J", "\xff", `"q`} {
		if got := clean(s); !strings.HasPrefix(got, `"`) {
			t.Errorf("clean(%q) = %q; want it quoted", s, got)
		}
	}
}

// move, with -shards 3, moves a queue of one shard's jobs due later to
// their shards: Lookup on the new layout finds each.
func TestMove(t *testing.T) {
	srv := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()
	old := durable.New(rdb, durable.WithName("cli"), durable.WithKinds("k"))
	defer old.Close(ctx)
	at := time.Now().Add(time.Hour)
	for i := range 30 {
		if ok, err := old.Schedule(ctx, fmt.Sprint("j", i), "k", at, nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	out := must(t, srv.Addr, "-shards", "3", "move")
	if !regexp.MustCompile(`^moved [1-9]\d*, left 0 in shard 0 `).MatchString(out) {
		t.Errorf("move: %q", out)
	}
	q := durable.New(rdb, durable.WithName("cli"), durable.WithShards(3))
	defer q.Close(ctx)
	for i := range 30 {
		if _, ok, err := q.Lookup(ctx, fmt.Sprint("j", i)); !ok || err != nil {
			t.Errorf("Lookup j%d after move: %v, %v", i, ok, err)
		}
	}
	if out := must(t, srv.Addr, "-shards", "3", "move"); !strings.HasPrefix(out, "moved 0, left 0 ") {
		t.Errorf("move again: %q", out)
	}
	// Without -shards, stats reads the count move wrote, and sees every
	// job.
	if out := must(t, srv.Addr, "stats"); !regexp.MustCompile(`(?m)^pending +30$`).MatchString(out) {
		t.Errorf("stats after move: %q", out)
	}
}

// A -shards that disagrees with the count the queue's layout in Redis
// holds is an error naming both counts.
func TestShardsDisagree(t *testing.T) {
	srv := redisserver.ForTest(t)
	must(t, srv.Addr, "-shards", "3", "stats") // the first use: the record says 3
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-shards", "2", "stats"}, `durable stats: durable: Counts: durable: shard count disagrees with the queue's layout in Redis: queue "cli" has 3 shards in Redis, this Queue WithShards(2)`},
		{[]string{"-shards", "1", "inspect", "x"}, `queue "cli" has 3 shards in Redis, this Queue WithShards(1)`},
		{[]string{"-shards", "2", "move"}, `durable: MoveToShards: durable: shard count disagrees with the queue's layout in Redis: queue "cli" has 3 shards in Redis, this Queue WithShards(2)`},
	} {
		code, _, errs := durableCmd(t, srv.Addr, c.args...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("durable %q: exit %d, %q; want 1 and %q", c.args, code, errs, c.want)
		}
	}
	if out := must(t, srv.Addr, "stats"); !strings.Contains(out, "pending") {
		t.Errorf("stats without -shards: %q", out)
	}
}

// On a Redis that is connected but stalled (CLIENT PAUSE), a command
// returns within -timeout and a margin, its error saying no reply came.
func TestTimeoutOnStalledRedis(t *testing.T) {
	srv := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()
	must(t, srv.Addr, "-shards", "1", "stats") // the layout record written
	if err := rdb.Do(ctx, "CLIENT", "PAUSE", 2000, "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, _, errs := durableCmd(t, srv.Addr, "-timeout", "300ms", "inspect", "x")
	// 1.5 s is generous against 300ms, and under the pause's 2 s.
	if took := time.Since(start); code != 1 || took > 1500*time.Millisecond || !strings.Contains(errs, "no reply from Redis at "+srv.Addr+" within -timeout 300ms: connected, but it does not answer") {
		t.Errorf("inspect on a paused Redis: exit %d, %q after %v", code, errs, took)
	}
	if err := rdb.Ping(ctx).Err(); err != nil { // returns once the pause ends
		t.Fatal(err)
	}
}

// With -cluster the command talks to a Redis Cluster through its seed
// nodes: a queue of one shard moved to three, spread over the primaries,
// then seen by stats and list.
func TestCluster(t *testing.T) {
	c := redisserver.SharedCluster(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer cc.Close()
	ctx := context.Background()
	name := fmt.Sprint("cli-cluster-", time.Now().UnixNano())
	old := durable.New(cc, durable.WithName(name), durable.WithKinds("k"))
	defer old.Close(ctx)
	at := time.Now().Add(time.Hour)
	for i := range 30 {
		if ok, err := old.Schedule(ctx, fmt.Sprint("j", i), "k", at, nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	seeds := strings.Join(c.Addrs(), ",")
	cmd := func(args ...string) string {
		t.Helper()
		code, out, errs := exe(t, append([]string{"-cluster", "-addr", seeds, "-queue", name, "-shards", "3"}, args...)...)
		if code != 0 {
			t.Fatalf("durable %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		return out
	}
	if out := cmd("move"); !regexp.MustCompile(`^moved [1-9]\d*, left 0 in shard 0 `).MatchString(out) {
		t.Errorf("move: %q", out)
	}
	if out := cmd("stats"); !regexp.MustCompile(`(?m)^pending +30$`).MatchString(out) {
		t.Errorf("stats: no line pending 30 in\n%s", out)
	}
	listed, args := 0, []string{"list", "-limit", "100", "pending"}
	for page := 0; page < 10; page++ { // a page a shard at most, here
		out := cmd(args...)
		listed += strings.Count(out, "\nj")
		m := regexp.MustCompile(`next page: -cursor (\S+)`).FindStringSubmatch(out)
		if m == nil {
			break
		}
		args = []string{"list", "-limit", "100", "-cursor", m[1], "pending"}
	}
	if listed != 30 {
		t.Errorf("list pending, every page: %d jobs, want 30", listed)
	}
	q := durable.New(cc, durable.WithName(name), durable.WithShards(3))
	defer q.Close(ctx)
	for i := range 30 {
		if _, ok, err := q.Lookup(ctx, fmt.Sprint("j", i)); !ok || err != nil {
			t.Errorf("Lookup j%d after move: %v, %v", i, ok, err)
		}
	}
	if code, _, errs := exe(t, "-cluster", "-addr", seeds+",", "stats"); code != exitUsage || !strings.Contains(errs, "empty seed node") {
		t.Errorf("-addr with an empty seed: exit %d, %q", code, errs)
	}
}
