// Command example runs a shop's order timeouts on three replica
// processes: every order is cancelled a while after it is created unless
// it is paid first. Payment cancels the job; an unpaid order's job runs
// on one replica, which cancels the order. Half way, one replica is
// killed with SIGKILL; the jobs it was running run again on the others
// once their lease ends, and the handler, idempotent, finds them done;
// those it had leased ahead of their due times run there too, once.
//
//	go run ./durable/example            # from the repository root
//	go run ./durable/example -after 30s # an order's timeout of 30 s
//
// It starts a redis-server of the machine's for the run (Debian, Ubuntu:
// apt-get install -y redis-server), or uses the one at REDIS_ADDR. It
// prints what ran where, how late, and that each order was handled once.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

var (
	orders  = flag.Int("orders", 400, "orders to create")
	over    = flag.Duration("over", 4*time.Second, "the time over which the orders are created")
	after   = flag.Duration("after", 4*time.Second, "how long after its creation an unpaid order is cancelled")
	replica = flag.String("replica", "", "run as the replica of this name (the example starts them)")
	addr    = flag.String("addr", "", "the Redis of a replica")
	name    = flag.String("name", "", "the queue name of a replica")
)

// The keys of the shop, beside the queue's.
const (
	statusKey  = "shop:status"  // order -> unpaid, paid, cancelled
	handledKey = "shop:handled" // a record per handler run: order|replica|attempt|lateness µs|outcome
)

func main() {
	flag.Parse()
	if *replica != "" {
		runReplica()
		return
	}
	a := os.Getenv("REDIS_ADDR")
	if a == "" {
		dir, err := os.MkdirTemp("", "durable-example")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		srv, err := redisserver.Start(dir, redisserver.AOFEverySec...)
		if err != nil {
			log.Fatal(err)
		}
		defer srv.Stop()
		a = srv.Addr
	}
	if err := shop(a); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

// shop starts the replicas, creates the orders, pays some, kills replica
// b half way, and reports.
func shop(addr string) error {
	ctx := context.Background()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{addr}})
	defer rdb.Close()
	qname := fmt.Sprintf("shop-%d", time.Now().UnixNano())
	q := durable.New(rdb, durable.WithName(qname), durable.WithKinds("cancel-unpaid"))
	defer q.Close(ctx)

	var reps []*exec.Cmd
	var stdins []io.WriteCloser
	for _, r := range []string{"a", "b", "c"} {
		cmd, stdin, err := startReplica(r, addr, qname)
		if err != nil {
			return err
		}
		defer cmd.Process.Kill()
		reps, stdins = append(reps, cmd), append(stdins, stdin)
	}
	start := time.Now()
	fmt.Printf("3 replicas up; %d orders over %v, each cancelled %v after creation unless paid\n", *orders, *over, *after)

	w := timewheel.New()
	defer w.Close()
	paid := 0
	kill := w.NewTimer(*over/2 + *after)
	defer kill.Stop()
	killed := false
	for i := range *orders {
		time.Sleep(time.Until(start.Add(time.Duration(i) * *over / time.Duration(*orders))))
		id := fmt.Sprintf("order-%04d", i)
		rdb.HSet(ctx, statusKey, id, "unpaid")
		if _, err := q.ScheduleAfter(ctx, id, "cancel-unpaid", *after, []byte(id)); err != nil {
			return err
		}
		if rand.IntN(2) == 0 { // paid before the timeout: payment cancels the job
			paid++
			w.AfterFunc(time.Duration(rand.Int64N(int64(*after*9/10))), func() {
				rdb.HSet(ctx, statusKey, id, "paid")
				q.Cancel(ctx, id)
			})
		}
		select {
		case <-kill.C:
			killReplica(ctx, rdb, qname, reps[1], start)
			killed = true
		default:
		}
	}
	if !killed {
		<-kill.C
		killReplica(ctx, rdb, qname, reps[1], start)
	}
	for {
		n, _ := rdb.HLen(ctx, "{"+qname+"}:job").Result()
		if n == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, i := range []int{0, 2} {
		stdins[i].Close()
		reps[i].Wait()
	}
	fmt.Printf("all jobs done %v after the start\n", time.Since(start).Round(time.Millisecond))
	return report(ctx, rdb, paid)
}

// killReplica kills replica b with SIGKILL and says what it held: jobs
// running, and jobs leased ahead of their due times (a :run value of
// "attempt|worker|due").
func killReplica(ctx context.Context, rdb redis.UniversalClient, qname string, b *exec.Cmd, start time.Time) {
	running, ahead := 0, 0
	for wait := time.Now(); running+ahead == 0 && time.Since(wait) < 2*time.Second; time.Sleep(5 * time.Millisecond) {
		now := time.Now().UnixMicro()
		for _, v := range rdb.HGetAll(ctx, "{"+qname+"}:run").Val() {
			if f := strings.Split(v, "|"); len(f) == 3 && f[1] == "b" {
				if due, _ := strconv.ParseInt(f[2], 10, 64); due > now {
					ahead++
				} else {
					running++
				}
			}
		}
	}
	b.Process.Kill()
	b.Wait()
	fmt.Printf("+%v: replica b killed (SIGKILL) while running about %d jobs and holding %d ahead of their due times\n",
		time.Since(start).Round(time.Millisecond), running, ahead)
}

// report prints what ran where and checks that each order was handled
// once.
func report(ctx context.Context, rdb redis.UniversalClient, paid int) error {
	status := rdb.HGetAll(ctx, statusKey).Val()
	runs := map[string][]string{}
	perReplica := map[string]int{}
	var late []time.Duration
	for _, rec := range rdb.LRange(ctx, handledKey, 0, -1).Val() {
		f := strings.Split(rec, "|")
		runs[f[0]] = append(runs[f[0]], rec)
		perReplica[f[1]]++
		us, _ := strconv.ParseInt(f[3], 10, 64)
		if f[2] == "1" {
			late = append(late, time.Duration(us)*time.Microsecond)
		}
		if f[2] != "1" {
			fmt.Printf("  taken again after the kill: %s (order, replica, attempt, µs late after the lease ended, outcome)\n", rec)
		}
	}
	slices.Sort(late)
	q := func(p float64) time.Duration { return late[int(p*float64(len(late)-1))] }
	fmt.Printf("handler runs per replica: %v\n", perReplica)
	if len(late) > 0 {
		early := "none early"
		if late[0] < 0 {
			early = fmt.Sprintf("some early, by up to %v", -late[0])
		}
		fmt.Printf("first attempts late by p50 %v, p99 %v, max %v; %s\n", q(0.5), q(0.99), late[len(late)-1], early)
	}
	cancelled, wrong := 0, 0
	for id, s := range status {
		switch {
		case s == "cancelled":
			cancelled++
			if n := cancels(runs[id]); n != 1 {
				wrong++
				fmt.Printf("  %s cancelled %d times\n", id, n)
			}
		case s == "paid" && cancels(runs[id]) > 0:
			wrong++
			fmt.Printf("  %s paid and cancelled\n", id)
		case s == "unpaid":
			wrong++
			fmt.Printf("  %s still unpaid\n", id)
		}
	}
	fmt.Printf("%d orders: %d paid, %d cancelled unpaid", len(status), len(status)-cancelled, cancelled)
	if wrong > 0 {
		return fmt.Errorf("; %d orders handled wrongly", wrong)
	}
	fmt.Println("; each order handled once")
	return nil
}

// cancels counts the runs that cancelled the order.
func cancels(recs []string) int {
	n := 0
	for _, r := range recs {
		if strings.HasSuffix(r, "|cancelled") {
			n++
		}
	}
	return n
}

// startReplica starts this program again as replica r, and waits until
// it is ready.
func startReplica(r, addr, qname string) (*exec.Cmd, io.WriteCloser, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(exe, "-replica", r, "-addr", addr, "-name", qname)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "ready" {
		cmd.Process.Kill()
		return nil, nil, fmt.Errorf("replica %s did not start: %v", r, sc.Err())
	}
	return cmd, stdin, nil
}

// cancelScript cancels an unpaid order and records the run, at once: it
// sets the order's status to cancelled if it was unpaid, and pushes
// "ARGV[2]|outcome" to the records. Run again on the same order, it
// cancels nothing: the handler is idempotent.
var cancelScript = redis.NewScript(`
local s = redis.call('HGET', KEYS[1], ARGV[1])
local outcome = 'was ' .. tostring(s)
if s == 'unpaid' then redis.call('HSET', KEYS[1], ARGV[1], 'cancelled'); outcome = 'cancelled' end
redis.call('RPUSH', KEYS[2], ARGV[2] .. '|' .. outcome)
return outcome
`)

// runReplica is a replica: a worker that cancels unpaid orders, until its
// stdin closes.
func runReplica() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{*addr}})
	defer rdb.Close()
	q := durable.New(rdb, durable.WithName(*name), durable.WithWorkerID(*replica), durable.WithLease(time.Second),
		durable.WithHandler("cancel-unpaid", func(ctx context.Context, j durable.Job) error {
			late := time.Since(j.Due)
			rec := fmt.Sprintf("%s|%s|%d|%d", j.ID, *replica, j.Attempt, late.Microseconds())
			if err := cancelScript.Run(ctx, rdb, []string{statusKey, handledKey}, j.ID, rec).Err(); err != nil {
				return err
			}
			time.Sleep(200 * time.Millisecond) // release the stock, mail the customer
			return nil
		}))
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	q.Close(context.Background())
}
