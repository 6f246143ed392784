package durable_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// The tests on a Redis Cluster share one cluster of six redis-servers
// (three primaries, a replica each; redisserver.SharedCluster), started
// by the first and stopped once all have run: stopCluster wraps the
// tests' run in TestMain.
type stopCluster struct{ m *testing.M }

func (s stopCluster) Run() int {
	code := s.m.Run()
	redisserver.StopSharedCluster()
	if os.Getenv(clusterAddrs) != "" {
		// A replica process: go-redis redials a node it lost once a
		// second, on a goroutine that returns at its next try once the
		// client is closed. Let it, before the leak check.
		time.Sleep(1100 * time.Millisecond)
	}
	return code
}

// clusterClient returns a cluster client of c at go-redis's defaults,
// closed when the test ends.
func clusterClient(tb testing.TB, c *redisserver.Cluster) redis.UniversalClient {
	tb.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	tb.Cleanup(func() { rdb.Close() })
	return rdb
}

// The environment of a cluster replica process: TestClusterReplica runs
// as one when clusterAddrs is set.
const (
	clusterAddrs   = "DURABLE_TEST_CLUSTER_ADDRS"   // the seeds, comma separated
	clusterReplica = "DURABLE_TEST_CLUSTER_REPLICA" // the worker ID
	clusterQueue   = "DURABLE_TEST_CLUSTER_QUEUE"   // the queue's name
	clusterOpts    = "DURABLE_TEST_CLUSTER_OPTS"    // options: "replicated", "shards=k", comma separated
)

// clusterWork is how long a cluster replica's handler takes; clusterLease
// its lease: 2 s, renewed every 667 ms, so that a replica process starved
// of CPU on a loaded machine (six redis-servers, the race detector) keeps
// its leases; with 1 s, one run in a few ran jobs twice.
const (
	clusterWork  = 20 * time.Millisecond
	clusterLease = 2 * time.Second
)

// clusterOptions returns the Queue options opts names.
func clusterOptions(tb testing.TB, opts string) []durable.Option {
	var out []durable.Option
	for o := range strings.SplitSeq(opts, ",") {
		switch {
		case o == "":
		case o == "replicated":
			out = append(out, durable.WithReplicated(1, time.Second))
		case strings.HasPrefix(o, "shards="):
			k, err := strconv.Atoi(strings.TrimPrefix(o, "shards="))
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, durable.WithShards(k))
		default:
			tb.Fatalf("unknown cluster option %q", o)
		}
	}
	return out
}

// TestClusterReplica is a replica process of the cluster tests (the test
// binary run again): a worker on the cluster at $DURABLE_TEST_CLUSTER_ADDRS
// that prints "ready", then a line "run id replica attempt start due" (µs)
// as each handler starts, until its stdin closes; then it closes.
func TestClusterReplica(t *testing.T) {
	addrs := os.Getenv(clusterAddrs)
	if addrs == "" {
		t.Skip("a replica process of the cluster tests")
	}
	name := os.Getenv(clusterReplica)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ",")})
	defer rdb.Close()
	opts := append(clusterOptions(t, os.Getenv(clusterOpts)),
		durable.WithName(os.Getenv(clusterQueue)), durable.WithWorkerID(name),
		durable.WithLease(clusterLease), durable.WithConcurrency(32),
		durable.WithErrorHandler(func(error) {}), // the failover makes many; Stats counts them
		durable.WithHandler("work", func(ctx context.Context, j durable.Job) error {
			fmt.Printf("run %s %s %d %d %d\n", j.ID, name, j.Attempt, time.Now().UnixMicro(), j.Due.UnixMicro())
			select {
			case <-time.After(clusterWork):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}))
	q := durable.New(rdb, opts...)
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	if err := q.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A crun is a handler start a cluster replica printed.
type crun struct {
	replica    string
	attempt    int
	start, due time.Time
}

// cruns gathers the starts the replicas print.
type cruns struct {
	mu   sync.Mutex
	byID map[string][]crun // guarded by mu
	n    int               // guarded by mu
}

func (r *cruns) add(line string) {
	f := strings.Fields(line)
	if len(f) != 6 || f[0] != "run" {
		return
	}
	a, _ := strconv.Atoi(f[3])
	s, _ := strconv.ParseInt(f[4], 10, 64)
	d, _ := strconv.ParseInt(f[5], 10, 64)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[f[1]] = append(r.byID[f[1]], crun{f[2], a, time.UnixMicro(s), time.UnixMicro(d)})
	r.n++
}

func (r *cruns) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func (r *cruns) get(id string) []crun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.byID[id])
}

// A creplica is a cluster replica process.
type creplica struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	read  chan struct{} // closed once its stdout is read to the end
	once  sync.Once
}

// startClusterReplicas starts n replica processes of queue on c, with
// the options opts, which add the runs they print to runs.
func startClusterReplicas(t *testing.T, c *redisserver.Cluster, queue, opts string, n int, runs *cruns) []*creplica {
	t.Helper()
	var rs []*creplica
	for i := range n {
		name := fmt.Sprintf("%s-r%d", queue, i)
		cmd := exec.Command(os.Args[0], "-test.run=^TestClusterReplica$", "-test.count=1")
		cmd.Env = append(os.Environ(), clusterAddrs+"="+strings.Join(c.Addrs(), ","),
			clusterReplica+"="+name, clusterQueue+"="+queue, clusterOpts+"="+opts)
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
		r := &creplica{name: name, cmd: cmd, stdin: stdin, read: make(chan struct{})}
		t.Cleanup(func() { r.kill() })
		ready := make(chan struct{})
		go func() {
			defer close(r.read)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if sc.Text() == "ready" {
					close(ready)
				}
				runs.add(sc.Text())
			}
		}()
		select {
		case <-ready:
		case <-r.read:
			t.Fatalf("replica %s exited before it was ready", name)
		case <-time.After(30 * time.Second):
			t.Fatalf("replica %s not ready in 30s", name)
		}
		rs = append(rs, r)
	}
	return rs
}

// kill kills the replica with SIGKILL, unless it has ended.
func (r *creplica) kill() {
	r.once.Do(func() {
		r.cmd.Process.Kill()
		<-r.read
		r.cmd.Wait()
	})
}

// closeReplicas closes the replicas' stdin, so that they close their
// queues, and waits for them to exit.
func closeReplicas(t *testing.T, rs []*creplica) {
	for _, r := range rs {
		r.stdin.Close()
	}
	for _, r := range rs {
		r.once.Do(func() {
			<-r.read
			if err := r.cmd.Wait(); err != nil {
				t.Errorf("replica %s: %v", r.name, err)
			}
		})
	}
}

// Three replica processes on a cluster run 600 jobs due over 1.5 s, each
// once, none before its due time: a queue of one shard, whose keys live
// on the primary of the slot of {name}, and one of 3 shards, one on each
// primary.
func TestClusterRunsOnce(t *testing.T) {
	c := redisserver.SharedCluster(t)
	for _, k := range []int{1, 3} {
		t.Run(fmt.Sprint("shards=", k), func(t *testing.T) {
			name := fmt.Sprint("c-once-", k)
			rdb := clusterClient(t, c)
			const n = 600
			runs := &cruns{byID: map[string][]crun{}}
			rs := startClusterReplicas(t, c, name, fmt.Sprint("shards=", k), 3, runs)
			q := newQueue(t, rdb, durable.WithName(name), durable.WithKinds("work"), durable.WithShards(k))
			ctx := context.Background()
			start := time.Now().Add(300 * time.Millisecond)
			for i := range n {
				due := start.Add(time.Duration((i*7919)%n) * 1500 * time.Millisecond / n)
				if ok, err := q.Schedule(ctx, fmt.Sprint("job-", i), "work", due, nil); !ok || err != nil {
					t.Fatal(ok, err)
				}
			}
			primaries := map[*redisserver.Server]bool{}
			for _, tag := range durable.ShardTags(name, k) {
				key := "{" + tag + "}:due"
				p, err := c.Primary(redisserver.Slot(key))
				if err != nil {
					t.Fatal(err)
				}
				primaries[p] = true
				if v, err := p.Do("EXISTS", key); err != nil || v != int64(1) {
					t.Errorf("%s not on the primary of its slot, %s: %v, %v", key, p.Addr, v, err)
				}
			}
			if len(primaries) != k {
				t.Errorf("%d shards on %d primaries", k, len(primaries))
			}
			waitFor(t, 20*time.Second, "every job run", func() bool { return runs.total() >= n })
			waitFor(t, 10*time.Second, "the store empty", func() bool { return shardsEmpty(rdb, name, k) })
			closeReplicas(t, rs)
			perReplica := map[string]int{}
			var worst time.Duration
			for i := range n {
				rr := runs.get(fmt.Sprint("job-", i))
				if len(rr) != 1 {
					t.Errorf("job-%d ran %d times: %+v", i, len(rr), rr)
					continue
				}
				perReplica[rr[0].replica]++
				if l := rr[0].start.Sub(rr[0].due); l < 0 {
					t.Errorf("job-%d started %v early", i, -l)
				} else {
					worst = max(worst, l)
				}
			}
			t.Logf("runs per replica %v; latest start %v after its due time", perReplica, worst)
		})
	}
}

// shardsEmpty reports whether the k shards of queue name hold no job.
func shardsEmpty(rdb redis.UniversalClient, name string, k int) bool {
	for _, tag := range durable.ShardTags(name, k) {
		if !empty(rdb, tag) {
			return false
		}
	}
	return true
}

// failoverResult is what a failover run counts.
type failoverResult struct {
	acked, unacked, lost, twice int
	down                        time.Duration
}

// runFailover runs jobs of queue name on c from two replica processes
// while the test schedules jobs of 8 KiB from 8 goroutines, then, in
// turn: stops (SIGSTOP) the replica of the primary that holds the queue
// for 400 ms, as a stall would, kills the primary with SIGKILL while the
// replica is behind, waits for the replica's promotion, and stops
// scheduling 300 ms later; the killed node rejoins once all has run. It
// counts the jobs Schedule acknowledged and those it did not (an error),
// the acknowledged jobs that never ran (lost) and the jobs that ran more
// than once.
func runFailover(t *testing.T, c *redisserver.Cluster, name, opts string, shards int) failoverResult {
	rdb := clusterClient(t, c)
	runs := &cruns{byID: map[string][]crun{}}
	rs := startClusterReplicas(t, c, name, opts, 2, runs)
	q := newQueue(t, rdb, append(clusterOptions(t, opts), durable.WithName(name), durable.WithKinds("work"))...)
	slot := redisserver.Slot("{" + name + "}")
	primary, err := c.Primary(slot)
	if err != nil {
		t.Fatal(err)
	}
	replica, err := c.Replica(primary)
	if err != nil {
		t.Fatal(err)
	}

	var (
		next    atomic.Int64
		mu      sync.Mutex
		acked   []string // guarded by mu
		unacked int      // guarded by mu
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	payload := make([]byte, 8<<10)
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprint("f-", next.Add(1))
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				ok, err := q.Schedule(ctx, id, "work", time.Now().Add(500*time.Millisecond), payload)
				cancel()
				mu.Lock()
				if ok && err == nil {
					acked = append(acked, id)
				} else {
					unacked++
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	replica.Pause()
	time.Sleep(400 * time.Millisecond)
	killed, _, down, err := c.KillPrimary(slot)
	if err != nil {
		replica.Resume()
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Rejoin(killed) }) // should the test end first
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()

	// Every job in the store runs: wait until it is empty, and for the
	// lease of any lost ack or claim to run out and its job to run again.
	for deadline := time.Now().Add(30 * time.Second); !shardsEmpty(rdb, name, shards); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			ctx := context.Background()
			p := "{" + name + "}:"
			t.Fatalf("the store not empty within 30s: due %d job %d run %d; first due %v; runs %v; now %d",
				rdb.ZCard(ctx, p+"due").Val(), rdb.HLen(ctx, p+"job").Val(), rdb.HLen(ctx, p+"run").Val(),
				rdb.ZRangeWithScores(ctx, p+"due", 0, 4).Val(), rdb.HRandFieldWithValues(ctx, p+"run", 5).Val(), time.Now().UnixMicro())
		}
	}
	time.Sleep(clusterLease + 500*time.Millisecond)
	waitFor(t, 30*time.Second, "the store empty", func() bool { return shardsEmpty(rdb, name, shards) })
	// The jobs ran without the killed node; it rejoins, as a replica.
	if err := c.Rejoin(killed); err != nil {
		t.Fatal(err)
	}
	closeReplicas(t, rs)
	res := failoverResult{acked: len(acked), unacked: unacked, down: down}
	for _, id := range acked {
		rr := runs.get(id)
		if len(rr) == 0 {
			res.lost++
		}
	}
	for i := range next.Load() {
		rr := runs.get(fmt.Sprint("f-", i+1))
		if len(rr) > 1 {
			res.twice++
		}
		for _, r := range rr {
			if r.start.Before(r.due) {
				t.Errorf("f-%d started %v early", i+1, r.due.Sub(r.start))
			}
		}
	}
	return res
}

// A primary killed (SIGKILL) while its replica is 400 ms behind, the
// replica promoted: without WithReplicated, Schedule acknowledged jobs
// the replica never got, and they are lost; with it, none is, in a queue
// of one shard and of three (whose other shards go on meanwhile).
func TestClusterFailover(t *testing.T) {
	c := redisserver.SharedCluster(t)
	for _, tc := range []struct {
		name, opts string
		shards     int
	}{
		{"c-fail-async", "", 1},
		{"c-fail-replicated", "replicated", 1},
		{"c-fail-replicated-shards", "replicated,shards=3", 3},
	} {
		t.Run(strings.TrimPrefix(tc.name, "c-fail-"), func(t *testing.T) {
			r := runFailover(t, c, tc.name, tc.opts, tc.shards)
			t.Logf("%s: slot without a primary for %v; %d jobs acknowledged, %d not (an error); %d acknowledged jobs lost; %d jobs ran twice",
				tc.name, r.down.Round(time.Millisecond), r.acked, r.unacked, r.lost, r.twice)
			if tc.opts != "" && r.lost > 0 {
				t.Errorf("WithReplicated: %d acknowledged jobs lost", r.lost)
			}
		})
	}
}

// queueSlots returns the slots of the shards of queue name, k shards.
func queueSlots(name string, k int) []int {
	var slots []int
	for _, tag := range durable.ShardTags(name, k) {
		slots = append(slots, redisserver.Slot("{"+tag+"}"))
	}
	return slots
}

// The slots of a queue moved to other primaries and back (CLUSTER SETSLOT
// and MIGRATE, and redis-cli --cluster reshard, which does the same for
// each slot it moves) while three replica processes run its jobs and the
// test schedules more: every job runs once, none early.
func TestClusterSlotMigration(t *testing.T) {
	t.Run("shards=1", func(t *testing.T) { testSlotMigration(t, "c-mig-1", "", 1) }) // slot 2787: redis-cli moves it back
	t.Run("shards=3", func(t *testing.T) { testSlotMigration(t, "c-move-3", "shards=3", 3) })
}

func testSlotMigration(t *testing.T, name, opts string, shards int) {
	c := redisserver.SharedCluster(t)
	rdb := clusterClient(t, c)
	runs := &cruns{byID: map[string][]crun{}}
	rs := startClusterReplicas(t, c, name, opts, 3, runs)
	q := newQueue(t, rdb, append(clusterOptions(t, opts), durable.WithName(name), durable.WithKinds("work"))...)
	ctx := context.Background()
	const n = 800
	start := time.Now().Add(300 * time.Millisecond)
	var retried atomic.Int64
	schedule := func(i int) {
		id := fmt.Sprint("job-", i)
		due := start.Add(time.Duration(i) * 2 * time.Second / n)
		for {
			_, err := q.Schedule(ctx, id, "work", due, nil)
			if err == nil {
				return
			}
			retried.Add(1)
			time.Sleep(5 * time.Millisecond)
		}
	}
	for i := range n / 2 {
		schedule(i)
	}
	done := make(chan struct{})
	go func() { // the other half while the slots move
		defer close(done)
		for i := n / 2; i < n; i++ {
			schedule(i)
		}
	}()
	slots := queueSlots(name, shards)
	home := map[int]*redisserver.Server{}
	for _, s := range slots {
		p, err := c.Primary(s)
		if err != nil {
			t.Fatal(err)
		}
		home[s] = p
	}
	ps, err := c.Primaries()
	if err != nil {
		t.Fatal(err)
	}
	// Away, each slot to a primary whose slots are all above it if there
	// is one, where it becomes the lowest, and back with redis-cli
	// --cluster reshard of that one slot; the others with MoveSlot.
	byCLI := 0
	time.Sleep(time.Until(start.Add(700 * time.Millisecond)))
	for _, s := range slots {
		to := ps[(slices.Index(ps, home[s])+1)%len(ps)]
		for _, p := range ps {
			if low, err := c.Lowest(p); err == nil && low > s {
				to = p
			}
		}
		if err := c.MoveSlot(s, to); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(start.Add(1400 * time.Millisecond)))
	for _, s := range slots {
		cur, err := c.Primary(s)
		if err != nil {
			t.Fatal(err)
		}
		if low, err := c.Lowest(cur); err == nil && low == s {
			byCLI++
			err = c.Reshard(cur, home[s], 1)
		} else {
			err = c.MoveSlot(s, home[s])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	<-done
	waitFor(t, 20*time.Second, "every job run", func() bool { return runs.total() >= n })
	waitFor(t, 10*time.Second, "the store empty", func() bool { return shardsEmpty(rdb, name, shards) })
	closeReplicas(t, rs)
	var worst time.Duration
	for i := range n {
		rr := runs.get(fmt.Sprint("job-", i))
		if len(rr) != 1 {
			t.Errorf("job-%d ran %d times: %+v", i, len(rr), rr)
			continue
		}
		if l := rr[0].start.Sub(rr[0].due); l < 0 {
			t.Errorf("job-%d started %v early", i, -l)
		} else {
			worst = max(worst, l)
		}
	}
	t.Logf("%d slots moved away and back (%d back by redis-cli --cluster reshard); %d Schedules retried after an error; latest start %v after its due time",
		len(slots), byCLI, retried.Load(), worst)
}
