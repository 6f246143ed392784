package durable_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// The environment of a worker process: the test binary runs as one when
// workerSys is set.
const (
	workerSys  = "BENCH_DURABLE_WORKER" // durable or asynq
	workerAddr = "BENCH_DURABLE_ADDR"
	workerID   = "BENCH_DURABLE_ID"
	workerOut  = "BENCH_DURABLE_OUT" // the file its handler starts go to
)

// handlers is each worker's concurrency, in both systems.
const handlers = 64

func TestMain(m *testing.M) {
	if os.Getenv(workerSys) != "" {
		runWorker()
		return
	}
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

// quiet drops go-redis's log lines.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// silent drops asynq's log lines.
type silent struct{}

func (silent) Debug(...any) {}
func (silent) Info(...any)  {}
func (silent) Warn(...any)  {}
func (silent) Error(...any) {}
func (silent) Fatal(...any) {}

// A start is a handler start: the job's index and the wall clock.
type start struct {
	i  uint32
	at int64 // UnixNano
}

// runWorker is a worker process: it runs jobs of kind "k" until its stdin
// closes, prints how many it started every 50ms, and then writes each
// start to its file.
func runWorker() {
	redis.SetLogger(quiet{})
	var mu sync.Mutex
	starts := make([]start, 0, 1<<16)
	var n atomic.Int64
	handle := func(p []byte) {
		now := time.Now().UnixNano()
		mu.Lock()
		starts = append(starts, start{binary.LittleEndian.Uint32(p[8:]), now})
		mu.Unlock()
		n.Add(1)
	}
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{os.Getenv(workerAddr)}})
	var stop func()
	switch os.Getenv(workerSys) {
	case "durable":
		q := durable.New(rdb, durable.WithWorkerID(os.Getenv(workerID)), durable.WithConcurrency(handlers),
			durable.WithHandler("k", func(_ context.Context, j durable.Job) error {
				handle(j.Payload)
				return nil
			}))
		stop = func() { q.Close(context.Background()) }
	case "asynq":
		srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{Concurrency: handlers, Logger: silent{}, LogLevel: asynq.FatalLevel})
		if err := srv.Start(asynq.HandlerFunc(func(_ context.Context, t *asynq.Task) error {
			handle(t.Payload())
			return nil
		})); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		stop = srv.Shutdown
	}
	fmt.Println("ready")
	done := make(chan struct{})
	go func() {
		last := int64(-1)
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if c := n.Load(); c != last {
				fmt.Println(c)
				last = c
			}
		}
	}()
	io.Copy(io.Discard, os.Stdin)
	close(done)
	stop()
	rdb.Close()
	mu.Lock()
	defer mu.Unlock()
	buf := make([]byte, 0, 12*len(starts))
	for _, s := range starts {
		buf = binary.LittleEndian.AppendUint32(buf, s.i)
		buf = binary.LittleEndian.AppendUint64(buf, uint64(s.at))
	}
	if err := os.WriteFile(os.Getenv(workerOut), buf, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// workers are the worker processes of one run.
type workers struct {
	cmds   []*exec.Cmd
	stdins []io.WriteCloser
	counts []atomic.Int64
	outs   []string
}

// startWorkers starts n worker processes of sys on addr and waits until
// each is ready.
func startWorkers(b *testing.B, sys, addr string, n int) *workers {
	b.Helper()
	dir := b.TempDir()
	ws := &workers{counts: make([]atomic.Int64, n)}
	for i := range n {
		out := filepath.Join(dir, fmt.Sprint("starts-", i))
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerSys+"="+sys, workerAddr+"="+addr, workerID+"="+fmt.Sprint("w", i), workerOut+"="+out)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		ws.cmds, ws.stdins, ws.outs = append(ws.cmds, cmd), append(ws.stdins, stdin), append(ws.outs, out)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() && sc.Text() != "ready" {
		}
		go func(c *atomic.Int64) {
			for sc.Scan() {
				if v, err := strconv.ParseInt(sc.Text(), 10, 64); err == nil {
					c.Store(v)
				}
			}
		}(&ws.counts[i])
	}
	return ws
}

// started returns the handler starts the workers reported.
func (ws *workers) started() int64 {
	var n int64
	for i := range ws.counts {
		n += ws.counts[i].Load()
	}
	return n
}

// cpu returns the CPU time of the worker processes, from /proc.
func (ws *workers) cpu(b *testing.B) time.Duration {
	var d time.Duration
	for _, c := range ws.cmds {
		d += procCPU(b, c.Process.Pid)
	}
	return d
}

// stop closes the workers and returns every start they made.
func (ws *workers) stop(b *testing.B) []start {
	var all []start
	for i, c := range ws.cmds {
		ws.stdins[i].Close()
		if err := c.Wait(); err != nil {
			b.Fatalf("worker %d: %v", i, err)
		}
		buf, err := os.ReadFile(ws.outs[i])
		if err != nil {
			b.Fatal(err)
		}
		for ; len(buf) >= 12; buf = buf[12:] {
			all = append(all, start{binary.LittleEndian.Uint32(buf), int64(binary.LittleEndian.Uint64(buf[4:]))})
		}
	}
	return all
}

// procCPU returns a process's user and system CPU time, all its threads,
// from /proc/pid/stat (clock ticks of 10ms).
func procCPU(b *testing.B, pid int) time.Duration {
	buf, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(buf[strings.LastIndexByte(string(buf), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// selfCPU returns this process's CPU time.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisCPU returns redis-server's CPU time, from INFO cpu.
func redisCPU(b *testing.B, rdb redis.UniversalClient) time.Duration {
	return time.Duration((infoField(b, rdb, "cpu", "used_cpu_sys") + infoField(b, rdb, "cpu", "used_cpu_user")) * 1e9)
}

func infoField(b *testing.B, rdb redis.UniversalClient, section, field string) float64 {
	info, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatal(err)
			}
			return f
		}
	}
	b.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// commandCalls returns the calls of cmd since the last CONFIG RESETSTAT.
func commandCalls(b *testing.B, rdb redis.UniversalClient, cmd string) float64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	_, rest, ok := strings.Cut(info, "cmdstat_"+cmd+":calls=")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseFloat(rest[:strings.IndexByte(rest, ',')], 64)
	return n
}

// A scheduler adds jobs of kind "k" from the benchmark's process.
type scheduler struct {
	schedule func(i int, due time.Time) error
	close    func()
}

// payload holds the job's due time (UnixNano) and index.
func payload(i int, due time.Time) []byte {
	p := binary.LittleEndian.AppendUint64(make([]byte, 0, 12), uint64(due.UnixNano()))
	return binary.LittleEndian.AppendUint32(p, uint32(i))
}

func newScheduler(sys, addr string) scheduler {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{addr}, PoolSize: 32})
	ctx := context.Background()
	switch sys {
	case "durable":
		q := durable.New(rdb, durable.WithKinds("k"))
		return scheduler{
			schedule: func(i int, due time.Time) error {
				_, err := q.Schedule(ctx, "job-"+strconv.Itoa(i), "k", due, payload(i, due))
				return err
			},
			close: func() { q.Close(ctx); rdb.Close() },
		}
	default:
		c := asynq.NewClientFromRedisClient(rdb)
		return scheduler{
			schedule: func(i int, due time.Time) error {
				_, err := c.Enqueue(asynq.NewTask("k", payload(i, due)), asynq.ProcessAt(due))
				return err
			},
			close: func() { c.Close(); rdb.Close() },
		}
	}
}

// BenchmarkProcesses runs durable (at its defaults) and asynq v0.26.0
// (at its defaults) the way a team runs them: worker processes of 64
// handlers each (this test binary, run again) and one redis-server with
// AOF everysec; the benchmark's process schedules. Each run starts on an
// empty Redis. Two scenarios:
//
//   - sparse: 1,000 jobs a second for 10 s, each scheduled 5 s before
//     its due time (one due every millisecond), with 1, 3 and 10 worker
//     processes;
//   - dense: 1e5 jobs due over 10 s, and burst: 1e5 jobs due within one
//     second, each scheduled 20 s ahead from 16 goroutines, with 3 worker
//     processes.
//
// It reports, per run:
//
//	cpu-µs/job     CPU of the worker processes and redis-server, from before the first
//	               Schedule to all jobs started, per job (/proc/pid/stat, INFO cpu)
//	redis-µs/job   redis-server's part of it
//	client-µs/job  the scheduling process's CPU, per job
//	p50-ms p99-ms max-ms  handler start minus due time, first runs
//	early          first runs that started before their due time
//	last-ms        the last first run's start minus the last due time
//	jobs/s         jobs over the time from the first due time to the last start
//	B/job          Redis used_memory per pending job, after scheduling (dense, burst)
//	runs/job       handler runs per job
//	scripts/job    Lua script calls (EVALSHA, EVAL) per job, scheduling included
func BenchmarkProcesses(b *testing.B) {
	srv := redisserver.ForTest(b, redisserver.AOFEverySec...)
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr}})
	defer rdb.Close()
	for _, replicas := range []int{1, 3, 10} {
		for _, sys := range []string{"durable", "asynq"} {
			b.Run(fmt.Sprintf("sparse/%s/replicas=%d", sys, replicas), func(b *testing.B) {
				for range b.N {
					runJobs(b, rdb, srv.Addr, sys, replicas, 10_000, 5*time.Second, 10*time.Second, 1)
				}
			})
		}
	}
	for _, sys := range []string{"durable", "asynq"} {
		b.Run(fmt.Sprintf("dense/%s/replicas=3", sys), func(b *testing.B) {
			for range b.N {
				runJobs(b, rdb, srv.Addr, sys, 3, 100_000, 20*time.Second, 10*time.Second, 16)
			}
		})
	}
	for _, sys := range []string{"durable", "asynq"} {
		b.Run(fmt.Sprintf("burst/%s/replicas=3", sys), func(b *testing.B) {
			for range b.N {
				runJobs(b, rdb, srv.Addr, sys, 3, 100_000, 20*time.Second, time.Second, 16)
			}
		})
	}
}

// runJobs runs n jobs due uniformly over window, each scheduled ahead of
// its due time (paced, with one scheduler; all at once, with several),
// on replicas worker processes of sys, and reports.
func runJobs(b *testing.B, rdb redis.UniversalClient, addr, sys string, replicas, n int, ahead, window time.Duration, schedulers int) {
	ctx := context.Background()
	b.StopTimer()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	ws := startWorkers(b, sys, addr, replicas)
	sc := newScheduler(sys, addr)
	defer sc.close()
	time.Sleep(time.Second) // the workers settle: their first claims and polls
	mem0 := infoField(b, rdb, "memory", "used_memory")
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	self0, work0, red0 := selfCPU(b), ws.cpu(b), redisCPU(b, rdb)
	b.StartTimer()
	first := time.Now().Add(ahead)
	due := func(i int) time.Time { return first.Add(time.Duration(int64(window) * int64(i) / int64(n))) }
	var wg sync.WaitGroup
	for g := range schedulers {
		wg.Go(func() {
			for i := g; i < n; i += schedulers {
				if schedulers == 1 {
					time.Sleep(time.Until(due(i).Add(-ahead)))
				}
				if err := sc.schedule(i, due(i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	mem1 := infoField(b, rdb, "memory", "used_memory")
	deadline := time.Now().Add(ahead + window + 5*time.Minute)
	for ws.started() < int64(n) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d jobs started", ws.started(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the last acks
	self1, work1, red1 := selfCPU(b), ws.cpu(b), redisCPU(b, rdb)
	b.StopTimer()
	scripts := commandCalls(b, rdb, "evalsha") + commandCalls(b, rdb, "eval")
	starts := ws.stop(b)

	firstRun := make([]int64, n)
	for _, s := range starts {
		if firstRun[s.i] == 0 || s.at < firstRun[s.i] {
			firstRun[s.i] = s.at
		}
	}
	late := make([]time.Duration, n)
	early, last := 0, int64(0)
	for i, at := range firstRun {
		late[i] = time.Duration(at - due(i).UnixNano())
		if late[i] < 0 {
			early++
		}
		last = max(last, at)
	}
	slices.Sort(late)
	q := func(p float64) float64 { return float64(late[int(p*float64(n-1))]) / 1e6 }
	per := func(d time.Duration) float64 { return float64(d) / 1e3 / float64(n) }
	b.ReportMetric(per(work1-work0+red1-red0), "cpu-µs/job")
	b.ReportMetric(per(red1-red0), "redis-µs/job")
	b.ReportMetric(per(self1-self0), "client-µs/job")
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(q(1), "max-ms")
	b.ReportMetric(float64(early), "early")
	b.ReportMetric(float64(time.Duration(last-due(n-1).UnixNano()))/1e6, "last-ms")
	b.ReportMetric(float64(n)/time.Duration(last-first.UnixNano()).Seconds(), "jobs/s")
	if schedulers > 1 {
		b.ReportMetric((mem1-mem0)/float64(n), "B/job")
	}
	b.ReportMetric(float64(len(starts))/float64(n), "runs/job")
	b.ReportMetric(scripts/float64(n), "scripts/job")
	b.ReportMetric(0, "ns/op")
}
