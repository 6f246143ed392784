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
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/cron/redisclaim"
	"github.com/timewheel/timewheel/durable"
)

// The schedules of TestSchedulesSIGKILL, run by durable's schedules and
// by cron.Schedulers with redisclaim's claimer alike: "@every 1s" and two
// calendar specs with seconds, in two zones (Kolkata's offset is half an
// hour).
var replicaScheds = []struct{ name, spec, zone string }{
	{"every", "@every 1s", ""},
	{"ny", "*/5 * * * * *", "America/New_York"},
	{"kolkata", "2-59/5 * * * * *", "Asia/Kolkata"},
}

// schedLong is the environment variable that makes TestSchedulesSIGKILL
// run 5 minutes, a kill every 30 s; without it, 30 s, a kill every 10 s.
const schedLong = "DURABLE_SCHED_LONG"

// schedWork is how long each run takes: a kill 150ms after an instant
// lands in its run.
const schedWork = 300 * time.Millisecond

// TestSchedReplica is a replica process of TestSchedulesSIGKILL: a
// durable worker that upserts the schedules, and a cron.Scheduler with
// redisclaim's claimer that runs the same, on the Redis at
// $DURABLE_TEST_REPLICA_ADDR. It prints "ready", then a line for each
// start ("d id attempt µs" or "c name instant-µs µs"), until its stdin
// closes.
func TestSchedReplica(t *testing.T) {
	addr, name := os.Getenv(replicaAddr), os.Getenv(replicaName)
	if addr == "" || os.Getenv("DURABLE_TEST_SCHED") == "" {
		t.Skip("a replica process of TestSchedulesSIGKILL")
	}
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{addr}})
	defer rdb.Close()
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		fmt.Printf(format+"\n", args...)
		out.Unlock()
	}
	q := durable.New(rdb, durable.WithWorkerID(name), durable.WithLease(replicaLease),
		durable.WithHandler("tick", func(ctx context.Context, j durable.Job) error {
			say("d %s %d %d", j.ID, j.Attempt, time.Now().UnixMicro())
			time.Sleep(schedWork)
			say("D %s", j.ID)
			return nil
		}))
	ctx := context.Background()
	s := cron.New(cron.WithClaimer(redisclaim.New(rdb, redisclaim.WithOwner(name))))
	for _, sc := range replicaScheds {
		p := durable.Periodic{Name: sc.name, Spec: sc.spec, Zone: sc.zone, Kind: "tick",
			Missed: durable.MissedRunAll, Overlap: durable.OverlapAllow}
		for {
			if _, err := q.Schedules().Upsert(ctx, p); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond) // Redis restarting
		}
		job := sc.name
		var opts []cron.JobOption
		if sc.zone != "" {
			opts = append(opts, cron.InZone(sc.zone))
		}
		if _, err := s.Add(job, sc.spec, func(ctx context.Context, at time.Time) {
			say("c %s %d %d", job, at.UnixMicro(), time.Now().UnixMicro())
			time.Sleep(schedWork)
			say("C %s %d", job, at.UnixMicro())
		}, opts...); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	s.Stop(ctx)
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// schedReplica is a replica process of TestSchedulesSIGKILL, whose lines
// go to lines.
type schedReplica struct {
	*replica
	read sync.WaitGroup
}

func startSchedReplica(t *testing.T, addr, name string, lines chan<- string) *schedReplica {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSchedReplica$", "-test.count=1")
	cmd.Env = append(os.Environ(), replicaAddr+"="+addr, replicaName+"="+name, "DURABLE_TEST_SCHED=1")
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
	r := &schedReplica{replica: &replica{name: name, cmd: cmd, stdin: stdin}}
	t.Cleanup(func() { r.kill() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "ready" {
	}
	r.read.Add(1)
	go func() {
		defer r.read.Done()
		for sc.Scan() {
			lines <- name + " " + sc.Text()
		}
	}()
	return r
}

// A start of a run, as a replica printed it.
type schedStart struct {
	replica string
	attempt int
	at      time.Time
}

// Three replica processes, each a durable worker and a cron.Scheduler
// with redisclaim's claimer, run three schedules on a redis-server with
// AOF; one replica is killed with SIGKILL every 10 s (30 s with
// DURABLE_SCHED_LONG=1, for 5 minutes) and started again a second later,
// and Redis restarts once in the middle. Every instant's durable run
// starts, twice only as attempt 2 after a kill or the restart; none
// early. cron+redisclaim loses the runs the killed replica had claimed.
func TestSchedulesSIGKILL(t *testing.T) {
	dur, every := 30*time.Second, 10*time.Second
	if os.Getenv(schedLong) != "" {
		dur, every = 5*time.Minute, 30*time.Second
	}
	srv := startRedis(t, "--appendonly", "yes", "--appendfsync", "everysec")
	lines := make(chan string, 1<<16)
	var mu sync.Mutex
	var all []string
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for l := range lines {
			mu.Lock()
			all = append(all, l)
			mu.Unlock()
		}
	}()
	// runner returns the replica whose cron run of "every" for the
	// instant at started, or -1.
	runner := func(at time.Time) int {
		mu.Lock()
		defer mu.Unlock()
		want := fmt.Sprintf(" c every %d ", at.UnixMicro())
		for i := len(all) - 1; i >= 0 && i >= len(all)-200; i-- {
			if strings.Contains(all[i], want) {
				n, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(strings.Fields(all[i])[0], "-", 2)[0], "r"))
				return n
			}
		}
		return -1
	}
	var rs []*schedReplica
	for i := range 3 {
		rs = append(rs, startSchedReplica(t, srv.Addr, fmt.Sprint("r", i), lines))
	}
	begin := time.Now()
	var kills, outages [][2]time.Time // when each was, and when it was over
	for n := 0; time.Since(begin) < dur; n++ {
		next := begin.Add(time.Duration(n+1) * every / 2)
		time.Sleep(time.Until(next))
		switch {
		case n%2 == 0 && time.Since(begin) < dur-every/2: // a kill, in a run
			at := time.Now().Truncate(time.Second).Add(time.Second)
			time.Sleep(time.Until(at.Add(150 * time.Millisecond)))
			i := runner(at)
			if i < 0 {
				i = (n / 2) % 3
			}
			k := time.Now()
			rs[i].kill()
			time.Sleep(time.Second)
			rs[i] = startSchedReplica(t, srv.Addr, fmt.Sprint("r", i, "-", n), lines)
			kills = append(kills, [2]time.Time{k, time.Now().Add(replicaLease + time.Second)})
		case n == 3: // the Redis restart, in the middle
			k := time.Now()
			srv.Stop() // SIGKILL: AOF everysec keeps what it had written
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			outages = append(outages, [2]time.Time{k, time.Now().Add(2 * time.Second)})
		}
	}
	end := time.Now()
	time.Sleep(3 * time.Second) // the last runs and their catch-ups
	for _, r := range rs {
		r.close(t)
		r.read.Wait()
	}
	close(lines)
	<-collected

	runs, crons, done := map[string][]schedStart{}, map[string]int{}, map[string]bool{}
	for _, l := range all {
		f := strings.Fields(l)
		switch f[1] {
		case "D":
			done[f[2]] = true
		case "C":
			at, _ := strconv.ParseInt(f[3], 10, 64)
			done["c "+durable.RunID(f[2], time.UnixMicro(at))] = true
		case "d":
			a, _ := strconv.Atoi(f[3])
			us, _ := strconv.ParseInt(f[4], 10, 64)
			runs[f[2]] = append(runs[f[2]], schedStart{f[0], a, time.UnixMicro(us)})
		case "c":
			at, _ := strconv.ParseInt(f[3], 10, 64)
			crons[durable.RunID(f[2], time.UnixMicro(at))]++
		}
	}
	near := func(at time.Time, spans [][2]time.Time) bool {
		for _, s := range spans {
			if !at.Before(s[0].Add(-3*time.Second)) && at.Before(s[1]) {
				return true
			}
		}
		return false
	}
	var late []time.Duration
	for _, sc := range replicaScheds {
		c, err := compileForTest(sc.spec, sc.zone)
		if err != nil {
			t.Fatal(err)
		}
		var instants, missing, twice, twiceOK, early, cronMissing, cronTwice int
		for at := c.Next(begin.Add(3 * time.Second)); at.Before(end); at = c.Next(at) {
			instants++
			id := durable.RunID(sc.name, at)
			ss := runs[id]
			ss = append(ss, runs[id+"+d"]...)
			switch n := crons[id]; {
			case n == 0 || !done["c "+id]:
				cronMissing++
			case n > 1:
				cronTwice++
			}
			if len(ss) == 0 || !done[id] && !done[id+"+d"] {
				missing++
				t.Errorf("%s: instant %v never ran to its end: %+v", sc.name, at.UTC(), ss)
				continue
			}
			for _, s := range ss {
				if s.at.Before(at) {
					early++
					t.Errorf("%s: instant %v started early, at %v", sc.name, at.UTC(), s.at.UTC())
				}
			}
			if len(ss) > 1 {
				twice++
				// The failure table's first rows: a replica killed while it
				// runs a run (or before its ack), or Redis restarted: the
				// run again is attempt 2 or later.
				if ss[len(ss)-1].attempt > 1 && (near(at, kills) || near(at, outages)) {
					twiceOK++
				} else {
					t.Errorf("%s: instant %v started %+v", sc.name, at.UTC(), ss)
				}
			}
			if !near(at, kills) && !near(at, outages) {
				late = append(late, ss[0].at.Sub(at))
			}
		}
		t.Logf("%-8s %-30s instants %3d | durable: not run to its end %d, started twice %d (%d after a kill or the restart), early %d | cron+redisclaim: not run to its end %d, twice %d",
			sc.name, sc.spec+" "+sc.zone, instants, missing, twice, twiceOK, early, cronMissing, cronTwice)
	}
	slices.Sort(late)
	if len(late) > 0 {
		q := func(p float64) time.Duration { return late[int(p*float64(len(late)-1))] }
		t.Logf("lateness outside the kills and the restart, %d starts: p50 %v, p99 %v, max %v; %d kills, 1 Redis restart, over %v",
			len(late), q(0.5), q(0.99), late[len(late)-1], len(kills), end.Sub(begin).Round(time.Second))
		if q(0.99) > 200*time.Millisecond { // a bound on a stall under -race on a loaded machine; docs/durable.md has the figures
			t.Errorf("lateness p99 %v, want within 200ms", q(0.99))
		}
	}
}

// compileForTest returns the schedule of spec in zone, as durable runs it.
func compileForTest(spec, zone string) (cron.Schedule, error) {
	loc := time.UTC
	if zone != "" {
		var err error
		if loc, err = time.LoadLocation(zone); err != nil {
			return nil, err
		}
	}
	s, err := cron.Parse(spec, loc)
	return cron.OnEpochGrid(s), err
}
