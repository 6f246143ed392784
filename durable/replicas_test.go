package durable_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
)

// The environment of a replica process: TestReplica runs as one when
// replicaAddr is set.
const (
	replicaAddr = "DURABLE_TEST_REPLICA_ADDR"
	replicaName = "DURABLE_TEST_REPLICA_NAME"
)

// The replicas' settings: a lease of 2s (renewed every 667ms, so that a
// replica starved of CPU on a loaded machine keeps its leases), 16
// handlers each, and jobs that take 100ms. Each start is pushed to the list runsKey as
// "id|replica|attempt|µs".
const (
	replicaLease = 2 * time.Second
	replicaWork  = 100 * time.Millisecond
	runsKey      = "test:runs"
)

// TestReplica is a replica process of TestReplicasSIGKILL (the test binary
// run again): a worker on the Redis at $DURABLE_TEST_REPLICA_ADDR that
// prints "ready", runs jobs until its stdin closes, and closes.
func TestReplica(t *testing.T) {
	addr, name := os.Getenv(replicaAddr), os.Getenv(replicaName)
	if addr == "" {
		t.Skip("a replica process of TestReplicasSIGKILL")
	}
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{addr}})
	defer rdb.Close()
	q := durable.New(rdb, durable.WithWorkerID(name), durable.WithLease(replicaLease), durable.WithConcurrency(16),
		durable.WithHandler("work", func(ctx context.Context, j durable.Job) error {
			rec := fmt.Sprintf("%s|%s|%d|%d", j.ID, name, j.Attempt, time.Now().UnixMicro())
			if err := rdb.RPush(ctx, runsKey, rec).Err(); err != nil {
				return err
			}
			select {
			case <-time.After(replicaWork):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}))
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	if err := q.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// replica is a replica process.
type replica struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  bool
}

// startReplica starts a replica process and waits until it is ready.
func startReplica(t *testing.T, addr, name string) *replica {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplica$", "-test.count=1")
	cmd.Env = append(os.Environ(), replicaAddr+"="+addr, replicaName+"="+name)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, cmd: cmd, stdin: stdin}
	t.Cleanup(func() { r.kill() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "ready" {
	}
	if sc.Err() != nil {
		t.Fatalf("replica %s: %v", name, sc.Err())
	}
	return r
}

// kill kills the replica with SIGKILL, unless it has ended.
func (r *replica) kill() {
	if r.done {
		return
	}
	r.done = true
	r.cmd.Process.Kill()
	r.cmd.Wait()
}

// close closes the replica's stdin, so that it closes its queue, and
// waits for it to exit.
func (r *replica) close(t *testing.T) {
	r.done = true
	r.stdin.Close()
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("replica %s: %v", r.name, err)
	}
}

// A run, as a replica pushed it.
type run struct {
	replica string
	attempt int
	at      time.Time
}

// Three replica processes run 600 jobs due over three seconds; one is
// killed with SIGKILL half way, while it runs jobs. No job is lost; a job
// runs twice only if it was running on the killed replica (or had just
// finished there, its ack not sent), and runs again within 10 seconds of
// the kill; every other job runs once, those the killed replica held
// ahead of their due times included.
func TestReplicasSIGKILL(t *testing.T) {
	srv := startRedis(t)
	rdb := newClient(t, srv.Addr)
	ctx := context.Background()
	var rs []*replica
	for i := range 3 {
		rs = append(rs, startReplica(t, srv.Addr, fmt.Sprint("r", i)))
	}
	q := newQueue(t, rdb, durable.WithKinds("work"))
	const n = 600
	start := time.Now().Add(300 * time.Millisecond)
	for i := range n {
		if ok, err := q.Schedule(ctx, fmt.Sprint("job-", i), "work", start.Add(time.Duration(i)*3*time.Second/n), nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	time.Sleep(time.Until(start.Add(1500 * time.Millisecond)))
	waitFor(t, 10*time.Second, "r0 running a job", func() bool {
		now := time.Now()
		for _, v := range rdb.HGetAll(ctx, "{durable}:run").Val() {
			// "attempt|worker|due": a job due 10 to 80ms ago runs now
			// (for 100ms, from its due time).
			f := strings.Split(v, "|")
			if len(f) == 3 && f[1] == "r0" {
				due, _ := strconv.ParseInt(f[2], 10, 64)
				if d := now.Sub(time.UnixMicro(due)); d >= 10*time.Millisecond && d <= 80*time.Millisecond {
					return true
				}
			}
		}
		return false
	})
	killed := time.Now()
	rs[0].kill()
	dead := time.Now() // r0 started nothing after this
	waitFor(t, 30*time.Second, "every job run and acked", func() bool { return empty(rdb, "durable") })
	for _, r := range rs[1:] {
		r.close(t)
	}

	runs := map[string][]run{}
	for _, rec := range rdb.LRange(ctx, runsKey, 0, -1).Val() {
		f := strings.Split(rec, "|")
		a, _ := strconv.Atoi(f[2])
		us, _ := strconv.ParseInt(f[3], 10, 64)
		runs[f[0]] = append(runs[f[0]], run{f[1], a, time.UnixMicro(us)})
	}
	twice, perReplica := 0, map[string]int{}
	var slowest time.Duration
	for i := range n {
		id := fmt.Sprint("job-", i)
		rr := runs[id]
		if len(rr) == 0 {
			t.Errorf("%s never ran", id)
			continue
		}
		for _, r := range rr {
			perReplica[r.replica]++
		}
		if len(rr) == 1 {
			continue
		}
		twice++
		for _, r := range rr[:len(rr)-1] {
			if r.replica != "r0" || r.at.After(dead) {
				t.Errorf("%s ran %+v: a run before the last not on the killed replica before the kill", id, rr)
			}
		}
		last := rr[len(rr)-1]
		if last.replica == "r0" || last.attempt != len(rr) {
			t.Errorf("%s ran %+v: the last run on the killed replica, or not the last attempt", id, rr)
		}
		slowest = max(slowest, last.at.Sub(killed))
	}
	t.Logf("runs per replica %v; %d jobs ran twice, the last of them %v after the kill", perReplica, twice, slowest)
	// r0 runs 16 at once; a few more may have returned without their ack
	// reaching Redis (acks wait up to 10ms to share a call). The jobs it
	// held ahead of their due times (up to 80 here) run once, elsewhere.
	if twice == 0 || twice > 32 {
		t.Errorf("%d jobs ran twice; want those running on the killed replica, or finished there but not acked, 1 to 32", twice)
	}
	if slowest > 10*time.Second {
		t.Errorf("a job ran again %v after the kill, want within 10s", slowest)
	}
}
