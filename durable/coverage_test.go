package durable_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/dashboard"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// setFullCoverage sets cluster-require-full-coverage on every node of c.
func setFullCoverage(t *testing.T, c *redisserver.Cluster, v string) {
	t.Helper()
	for _, s := range c.Nodes {
		if _, err := s.Do("CONFIG", "SET", "cluster-require-full-coverage", v); err != nil {
			t.Errorf("node %s: CONFIG SET cluster-require-full-coverage %s: %v", s.Addr, v, err)
		}
	}
}

// RequiresFullCoverage reads the setting of a cluster's primaries, says
// false for a single server, and wraps ErrConfigRefused where CONFIG is
// disabled, as on many managed Redis services.
func TestRequiresFullCoverage(t *testing.T) {
	ctx := context.Background()
	c := redisserver.SharedCluster(t)
	rdb := clusterClient(t, c)
	if full, err := durable.RequiresFullCoverage(ctx, rdb); err != nil || full {
		t.Errorf("the harness's cluster (no): %v, %v; want false, nil", full, err)
	}
	t.Cleanup(func() { setFullCoverage(t, c, "no") })
	ps, err := c.Primaries()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ps[len(ps)-1].Do("CONFIG", "SET", "cluster-require-full-coverage", "yes"); err != nil {
		t.Fatal(err)
	}
	if full, err := durable.RequiresFullCoverage(ctx, rdb); err != nil || !full {
		t.Errorf("one primary yes: %v, %v; want true, nil", full, err)
	}
	if full, err := durable.RequiresFullCoverage(ctx, newClient(t, startRedis(t).Addr)); err != nil || full {
		t.Errorf("a single server: %v, %v; want false, nil", full, err)
	}

	// A cluster of one node, with CONFIG renamed away.
	srv := startRedis(t, slices.Concat(redisserver.NoPersistence, []string{
		"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--rename-command", "CONFIG", ""})...)
	if _, err := srv.Do("CLUSTER", "ADDSLOTSRANGE", "0", "16383"); err != nil {
		t.Fatal(err)
	}
	one := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr}})
	t.Cleanup(func() { one.Close() })
	waitFor(t, 10*time.Second, "the one-node cluster ok", func() bool {
		info, err := srv.Do("CLUSTER", "INFO")
		s, _ := info.(string)
		return err == nil && strings.Contains(s, "cluster_state:ok")
	})
	_, err = durable.RequiresFullCoverage(ctx, one)
	if !errors.Is(err, durable.ErrConfigRefused) {
		t.Errorf("CONFIG renamed away: %v; want an error wrapping ErrConfigRefused", err)
	}
	t.Logf("CONFIG renamed away: %v", err)
}

// What a failover at a full-coverage setting counts, per shard.
type coverageResult struct {
	down            time.Duration // the slot without a primary: kill to promotion
	acked, lost     int
	existed         int // Schedules of a new ID answered false: it exists
	twice, early    int
	failed, downErr []int           // failed Schedules, and those with CLUSTERDOWN, per shard
	ackedDuring     []int           // Schedules acknowledged between the kill and the promotion, per shard
	stalled         []time.Duration // the longest gap between starts of the preloaded jobs, per shard
	killedShards    []bool          // the shards of the killed primary
	probe           string          // what Counts, List and the dashboard answered meanwhile
}

// At Redis's default cluster-require-full-coverage yes, one primary's
// failover stops every shard: once the cluster marks the primary failed,
// every node answers CLUSTERDOWN until its replica is promoted. With no,
// only the killed primary's shard stops. A queue of three shards, one
// on each primary, WithReplicated: two replica processes run 1,200 jobs
// due over 5 s while the test schedules more from 8 goroutines, and the
// primary of one shard is killed (SIGKILL). In both, no acknowledged job
// is lost and none starts early; with no, the other shards answer no
// CLUSTERDOWN and acknowledge Schedules throughout. The CLUSTERDOWN
// counts and the stalls are logged, not asserted.
func TestClusterFailoverCoverage(t *testing.T) {
	c := redisserver.SharedCluster(t)
	for _, full := range []string{"yes", "no"} {
		t.Run("full-coverage="+full, func(t *testing.T) {
			setFullCoverage(t, c, full)
			t.Cleanup(func() { setFullCoverage(t, c, "no") }) // the harness's setting, after Rejoin
			// A name of its own each run (-count): a job of an earlier
			// run's queue left in the store must not collide.
			r := runCoverageFailover(t, c, fmt.Sprintf("c-cov-%s-%d", full, coverageRuns.Add(1)))
			var stalls []string
			for i, d := range r.stalled {
				mark := ""
				if r.killedShards[i] {
					mark = " (killed)"
				}
				stalls = append(stalls, fmt.Sprintf("shard %d%s %v", i, mark, d.Round(10*time.Millisecond)))
			}
			t.Logf("full-coverage %s: no primary for %v; %d Schedules acknowledged; failed per shard %v, CLUSTERDOWN %v; acknowledged during the outage %v; starts stopped: %s; lost %d, early %d, twice %d; %d Schedules of a new ID found it",
				full, r.down.Round(10*time.Millisecond), r.acked, r.failed, r.downErr, r.ackedDuring, strings.Join(stalls, ", "), r.lost, r.early, r.twice, r.existed)
			t.Logf("during the outage: %s", r.probe)
			if r.lost > 0 || r.early > 0 {
				t.Errorf("%d acknowledged jobs lost, %d started early; want 0, 0", r.lost, r.early)
			}
			if full == "no" {
				for i := range r.killedShards {
					if !r.killedShards[i] && (r.downErr[i] > 0 || r.ackedDuring[i] == 0) {
						t.Errorf("shard %d, on a live primary: %d CLUSTERDOWN, %d acknowledged during the outage; want 0 and some", i, r.downErr[i], r.ackedDuring[i])
					}
				}
			}
		})
	}
}

// coverageRuns numbers the runs of TestClusterFailoverCoverage.
var coverageRuns atomic.Int64

// runCoverageFailover runs the failover of TestClusterFailoverCoverage on
// queue name.
func runCoverageFailover(t *testing.T, c *redisserver.Cluster, name string) coverageResult {
	const k = 3
	rdb := clusterClient(t, c)
	runs := &cruns{byID: map[string][]crun{}}
	rs := startClusterReplicas(t, c, name, "replicated,shards=3", 2, runs)
	q := newQueue(t, rdb, durable.WithName(name), durable.WithKinds("work"), durable.WithShards(k), durable.WithReplicated(1, time.Second))
	ctx := context.Background()
	slots := queueSlots(name, k)
	// The last shard's primary dies, so that List reads the live shards
	// first.
	primary, err := c.Primary(slots[k-1])
	if err != nil {
		t.Fatal(err)
	}
	res := coverageResult{failed: make([]int, k), downErr: make([]int, k), ackedDuring: make([]int, k),
		stalled: make([]time.Duration, k), killedShards: make([]bool, k)}
	for i, s := range slots {
		p, err := c.Primary(s)
		if err != nil {
			t.Fatal(err)
		}
		res.killedShards[i] = p == primary
	}

	// The preloaded jobs, whose starts show when each shard stopped.
	const n = 1200
	base := time.Now().Add(1500 * time.Millisecond)
	var acked []string
	var amu sync.Mutex
	// Schedules of a new ID that found it in the store: once, in runs of
	// -count=3, a preloaded ID did; a Schedule retried by go-redis after
	// its first try had added the job would.
	var existed atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < n; i += 8 {
				id := fmt.Sprint("p-", i)
				ok, err := q.Schedule(ctx, id, "work", base.Add(time.Duration(i)*5*time.Second/n), nil)
				if err != nil {
					t.Errorf("Schedule %s: %v", id, err)
					return
				}
				amu.Lock()
				acked = append(acked, id) // ok false: it exists, so it must run too
				if !ok {
					existed.Add(1)
				}
				amu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	var (
		next           atomic.Int64
		mu             sync.Mutex // guards killed, healed and res's counts per shard
		killed, healed time.Time
		stop           = make(chan struct{})
	)
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprint("f-", next.Add(1))
				ok, err := q.Schedule(ctx, id, "work", time.Now().Add(500*time.Millisecond), nil)
				at, sh := time.Now(), shardOf(id, k)
				mu.Lock()
				switch {
				case err == nil:
					amu.Lock()
					acked = append(acked, id)
					amu.Unlock()
					if !ok {
						existed.Add(1)
					}
					if !killed.IsZero() && at.After(killed) && (healed.IsZero() || at.Before(healed)) {
						res.ackedDuring[sh]++
					}
				default:
					res.failed[sh]++
					if redis.IsClusterDownError(err) {
						res.downErr[sh]++
					}
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
	time.Sleep(time.Until(base.Add(time.Second)))
	probeDone := make(chan struct{})
	probe := make(chan string, 1)
	go func() { probe <- probeOutage(q, probeDone) }()
	mu.Lock()
	killed = time.Now()
	mu.Unlock()
	dead, _, down, err := c.KillPrimary(slots[k-1])
	close(probeDone)
	res.probe = <-probe
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Rejoin(dead) }) // should the test end first
	mu.Lock()
	healed = time.Now()
	mu.Unlock()
	res.down = down
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()

	waitEmpty := func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !shardsEmpty(rdb, name, k) {
			if time.Now().After(deadline) {
				t.Fatalf("not within 30s: the store empty; left: %s", storeLeft(rdb, name, k))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitEmpty()
	time.Sleep(clusterLease + 500*time.Millisecond) // a lost ack's or claim's lease, and its job's run again
	waitEmpty()
	if err := c.Rejoin(dead); err != nil {
		t.Fatal(err)
	}
	closeReplicas(t, rs)
	// Once, in a run of -count=3, a job of an earlier run was back in a
	// store found empty twice: say so when it happens.
	if !shardsEmpty(rdb, name, k) {
		for _, tag := range durable.ShardTags(name, k) {
			p := "{" + tag + "}:"
			t.Logf("the store, empty before the replicas closed, holds jobs again: %s due %v, job %v, run %v", tag,
				rdb.ZRangeWithScores(ctx, p+"due", 0, 9).Val(), rdb.HKeys(ctx, p+"job").Val(), rdb.HGetAll(ctx, p+"run").Val())
		}
	}

	res.acked, res.existed = len(acked), int(existed.Load())
	for _, id := range acked {
		if len(runs.get(id)) == 0 {
			res.lost++
		}
	}
	starts := make([][]time.Time, k)
	check := func(id string) {
		rr := runs.get(id)
		if len(rr) > 1 {
			res.twice++
		}
		for _, r := range rr {
			if r.start.Before(r.due) {
				res.early++
				t.Errorf("%s started %v early", id, r.due.Sub(r.start))
			}
		}
		if len(rr) > 0 && strings.HasPrefix(id, "p-") {
			sh := shardOf(id, k)
			starts[sh] = append(starts[sh], rr[0].start)
		}
	}
	for i := range n {
		check(fmt.Sprint("p-", i))
	}
	for i := range next.Load() {
		check(fmt.Sprint("f-", i+1))
	}
	for sh, ss := range starts {
		sort.Slice(ss, func(a, b int) bool { return ss[a].Before(ss[b]) })
		for i := 1; i < len(ss); i++ {
			res.stalled[sh] = max(res.stalled[sh], ss[i].Sub(ss[i-1]))
		}
	}
	return res
}

// probeOutage asks Counts, List (every shard's first page of pending
// jobs) and the dashboard's overview every 100 ms until done is closed,
// and sums up their answers.
func probeOutage(q *durable.Queue, done <-chan struct{}) string {
	h := dashboard.New(dashboard.Options{Timeout: 2 * time.Second}, q)
	var countsOK, countsErr, rounds int
	lists := map[string]int{} // "shards listed before an error" -> rounds
	statuses := map[int]int{} // dashboard status -> rounds
	var countsSample string
	for {
		select {
		case <-done:
			return fmt.Sprintf("%d rounds: Counts ok %d, error %d (%s); List, shards read before an error: %v; dashboard overview status: %v",
				rounds, countsOK, countsErr, countsSample, lists, statuses)
		case <-time.After(100 * time.Millisecond):
		}
		rounds++
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if _, err := q.Counts(ctx); err != nil {
			countsErr++
			if countsSample == "" {
				countsSample = err.Error()
			}
		} else {
			countsOK++
		}
		read, cursor := 0, ""
		for range 100 {
			_, next, err := q.List(ctx, durable.Pending, cursor, durable.MaxList)
			if err != nil {
				lists[fmt.Sprintf("%d then error", read)]++
				break
			}
			if next == "" {
				lists["all"]++
				break
			}
			if strings.HasSuffix(next, "/") { // the next shard's first page
				read++
			}
			cursor = next
		}
		cancel()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		statuses[w.Code]++
	}
}

// storeLeft describes the jobs left in queue name's k shards, at most 5
// a shard: each one's :due score against the shard's clock, and its :run
// value, so that a job the workers never finish says why.
func storeLeft(rdb redis.UniversalClient, name string, k int) string {
	ctx := context.Background()
	var b strings.Builder
	for _, tag := range durable.ShardTags(name, k) {
		p := "{" + tag + "}:"
		due, _ := rdb.ZRangeWithScores(ctx, p+"due", 0, 4).Result()
		jobs, _ := rdb.HLen(ctx, p+"job").Result()
		runs, _ := rdb.HGetAll(ctx, p+"run").Result()
		workers, _ := rdb.ZRangeWithScores(ctx, p+"workers", 0, -1).Result()
		now, _ := rdb.Time(ctx).Result()
		fmt.Fprintf(&b, "[%s: now %d, %d jobs, %d due, %d run; workers %v;", tag, now.UnixMicro(), jobs,
			rdb.ZCard(ctx, p+"due").Val(), len(runs), workers)
		for _, z := range due {
			id := fmt.Sprint(z.Member)
			fmt.Fprintf(&b, " %s due %.0f run %q", id, z.Score, runs[id])
		}
		b.WriteString("] ")
	}
	return b.String()
}
