// Command durable looks at and steers a durable queue in Redis: its
// figures, its jobs by state, one job, and the dead jobs retried or
// deleted; a job cancelled; a queue or a kind paused and resumed.
//
//	go run ./durable/cmd/durable [-addr host:port | -addr redis://...] [-cluster] [-queue name] [-shards k] [-lease d] command [args]
//
//	stats                          the queue's figures: pending, due, running, dead, the oldest due job's lateness, paused kinds
//	list [-limit n] [-cursor c] [-payload] pending|running|dead
//	                               jobs in a state, a page at a time; prints the next page's cursor
//	inspect [-payload] ID          one job: state, kind, due time, attempts, last error
//	retry ID... | retry -all [-kind k]
//	                               dead jobs due again now, their attempts forgotten
//	delete ID... | delete -all [-kind k]
//	                               dead jobs deleted (only dead ones)
//	cancel ID...                   jobs deleted, whatever their state; a running attempt's context is cancelled
//	pause [kind]                   no more claims of the kind's jobs (of any job without a kind)
//	resume [kind]                  claims again
//	move                           with -shards k: the jobs of shard 0 moved to their shards (durable.Queue.MoveToShards),
//	                               and k written as the queue's shard count
//	workers [-limit n]             the workers' heartbeats (durable.Queue.Workers): live, closed or gone, with their jobs
//	history [-kind k] [-hourly] [-last n] [-all]
//	                               the figures by minute or hour (durable.Queue.History): attempts, outcomes, lateness
//	kinds                          the jobs by kind and state (durable.Queue.KindCounts)
//
// -addr is host:port or a redis:// (rediss:// for TLS) URL with a
// password and database; it defaults to $DURABLE_REDIS, or
// 127.0.0.1:6379. With -cluster, Redis is a Redis Cluster and -addr its
// seed nodes, host:port,host:port, or a redis:// URL with addr= for each
// further seed. -queue is the Queue's WithName (default "durable");
// -lease, the workers' WithLease (default 5s; stats counts the running
// jobs exactly whatever it is); -shards, the queue's WithShards (default: the
// count the queue's layout in Redis holds; a -shards that disagrees with
// it is an error naming both). -timeout bounds the command's time with
// Redis, each call included, also on a Redis that is connected but
// stalled; a Redis that cannot be reached is reported as a connection
// error.
// What a job holds (IDs, kinds, payloads, errors) is printed quoted when
// it is not plain printable text, so that no job can write terminal
// escapes. The command starts no worker: it claims and runs nothing.
package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
)

func main() {
	redis.SetLogger(quiet{}) // run reports each error itself
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// quiet drops go-redis's log lines.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// errUsage is a usage error: run prints the usage and exits 2.
var errUsage = errors.New("usage")

const usage = `usage: durable [-addr host:port|redis://...] [-cluster] [-queue name] [-shards k] [-lease d] [-timeout d] command [args]

commands:
  stats                                  the queue's figures
  list [-limit n] [-cursor c] [-payload] pending|running|dead
  inspect [-payload] ID                  one job
  retry ID... | retry -all [-kind k]     dead jobs due again now
  delete ID... | delete -all [-kind k]   dead jobs deleted
  cancel ID...                           jobs deleted, whatever their state
  pause [kind]                           the queue (or the kind) claims no more jobs
  resume [kind]                          it claims again
  move                                   with -shards k: shard 0's jobs moved to their shards
  workers [-limit n]                     the workers' heartbeats: live, closed or gone, with the jobs they run
  history [-kind k] [-hourly] [-last n] [-all]
                                         started, succeeded, failed, retried, died and lateness by minute (hour)
  kinds                                  the jobs by kind and state
`

// run runs the command line args, writing its output to stdout and its
// errors to stderr, and returns the exit status: 0, 1 on an error, 2 on
// a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("durable", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage, "\nflags:\n"); fs.PrintDefaults() }
	def := os.Getenv("DURABLE_REDIS")
	if def == "" {
		def = "127.0.0.1:6379"
	}
	addr := fs.String("addr", def, "Redis: host:port, or a redis:// or rediss:// URL (default $DURABLE_REDIS)")
	name := fs.String("queue", "durable", "the queue's name (durable.WithName)")
	timeout := fs.Duration("timeout", 10*time.Second, "the most the command waits for Redis")
	lease := fs.Duration("lease", 5*time.Second, "the workers' lease (durable.WithLease)")
	shards := fs.Int("shards", 0, "the queue's shards (durable.WithShards); default: as the queue's layout in Redis says")
	cluster := fs.Bool("cluster", false, "Redis is a Redis Cluster: -addr is its seed nodes, host:port,host:port, or a redis:// URL with addr= for each further seed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if *name == "" || strings.ContainsAny(*name, "{}") {
		fmt.Fprintf(stderr, "durable: -queue %q is empty or holds a brace\n", *name)
		return 2
	}
	if *shards < 0 || *shards > durable.MaxShards {
		fmt.Fprintf(stderr, "durable: -shards %d not in [1, %d]\n", *shards, durable.MaxShards)
		return 2
	}
	if *timeout < 10*time.Millisecond {
		fmt.Fprintf(stderr, "durable: -timeout %v under 10ms\n", *timeout)
		return 2
	}
	if fs.Arg(0) == "move" && *shards == 0 {
		fmt.Fprintf(stderr, "durable move: needs -shards k, the count to move to\n\n%s", usage)
		return 2
	}
	if *lease < 30*time.Millisecond {
		fmt.Fprintf(stderr, "durable: -lease %v under 30ms\n", *lease)
		return 2
	}
	rdb, err := client(*addr, *cluster)
	if err != nil {
		fmt.Fprintln(stderr, "durable:", err)
		return 2
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	c := &cli{rdb: rdb, name: *name, shards: *shards, opts: []durable.Option{durable.WithName(*name), durable.WithLease(*lease), durable.WithCallTimeout(*timeout)}, out: stdout}
	defer c.close()
	switch cmd {
	case "stats":
		err = c.stats(ctx, rest)
	case "list":
		err = c.list(ctx, rest)
	case "inspect":
		err = c.inspect(ctx, rest)
	case "retry":
		err = c.dead(ctx, "retry", rest)
	case "delete":
		err = c.dead(ctx, "delete", rest)
	case "cancel":
		err = c.cancel(ctx, rest)
	case "pause":
		err = c.pause(ctx, true, rest)
	case "resume":
		err = c.pause(ctx, false, rest)
	case "move":
		err = c.move(ctx, rest)
	case "workers", "history", "kinds": // workers.go, history.go
		err = map[string]func(context.Context, []string) error{"workers": c.workers, "history": c.history, "kinds": c.kinds}[cmd](ctx, rest)
	default:
		err = fmt.Errorf("%w: no command %q", errUsage, cmd)
	}
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "durable %s: %v\n\n%s", cmd, err, usage)
		return 2
	case errors.Is(err, flag.ErrHelp):
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "durable %s: %v\n", cmd, connError(err, *addr, *cluster, *timeout))
		return 1
	}
	return 0
}

// connError tells apart, for an error that is a failed dial or the end
// of the command's time, a Redis that cannot be reached (a connection
// error) from one that is reached but does not answer (stalled, or far
// behind): it dials -addr's first node once, within a second.
func connError(err error, addr string, cluster bool, timeout time.Duration) error {
	var op *net.OpError
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &op) && op.Op == "dial") {
		return err
	}
	host := strings.Split(addr, ",")[0]
	if o, perr := redisOptions(host); perr == nil && (!cluster || !strings.Contains(addr, "://")) {
		host = o.Addr
	} else if o, perr := redis.ParseClusterURL(addr); perr == nil && len(o.Addrs) > 0 {
		host = o.Addrs[0]
	}
	conn, derr := net.DialTimeout("tcp", host, time.Second)
	if derr != nil {
		return fmt.Errorf("cannot connect to Redis at %s: connection error: %v", host, derr)
	}
	conn.Close()
	return fmt.Errorf("no reply from Redis at %s within -timeout %v: connected, but it does not answer (stalled, or far behind): %w", host, timeout, err)
}

// client returns the client -addr and -cluster ask for.
func client(addr string, cluster bool) (redis.UniversalClient, error) {
	if !cluster {
		opts, err := redisOptions(addr)
		if err != nil {
			return nil, err
		}
		return redis.NewClient(opts), nil
	}
	if strings.Contains(addr, "://") {
		o, err := redis.ParseClusterURL(addr)
		if err != nil {
			return nil, fmt.Errorf("-addr: %w", err)
		}
		return redis.NewClusterClient(o), nil
	}
	seeds := strings.Split(addr, ",")
	if slices.Contains(seeds, "") {
		return nil, fmt.Errorf("-addr %q: an empty seed node", addr)
	}
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds}), nil
}

// redisOptions parses -addr: a URL if it has a scheme, else host:port.
func redisOptions(addr string) (*redis.Options, error) {
	if strings.Contains(addr, "://") {
		o, err := redis.ParseURL(addr)
		if err != nil {
			return nil, fmt.Errorf("-addr: %w", err)
		}
		return o, nil
	}
	if addr == "" {
		return nil, errors.New("-addr is empty")
	}
	return &redis.Options{Addr: addr}, nil
}

// A cli runs the commands on one queue.
type cli struct {
	rdb    redis.UniversalClient
	name   string
	shards int // -shards; 0: the queue's layout in Redis says
	opts   []durable.Option
	q      *durable.Queue // made by open, once a command's arguments are checked
	out    io.Writer
}

// open makes the Queue, once: with -shards, or the count the queue's
// layout record holds.
func (c *cli) open(ctx context.Context) error {
	if c.q != nil {
		return nil
	}
	k := c.shards
	if k == 0 {
		n, err := durable.Shards(ctx, c.rdb, c.name)
		if err != nil {
			return err
		}
		k = max(n, 1)
	}
	c.q = durable.New(c.rdb, append(c.opts, durable.WithShards(k))...)
	return nil
}

func (c *cli) close() {
	if c.q != nil {
		c.q.Close(context.Background())
	}
}

// flags returns a flag set for command's own flags, whose errors run
// reports as usage errors.
func (c *cli) flags(cmd string) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

func (c *cli) stats(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: stats takes no arguments", errUsage)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	n, err := c.q.Counts(ctx)
	if err != nil {
		return err
	}
	paused, err := c.q.Paused(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "queue\t%s\n", clean(c.q.Name()))
	fmt.Fprintf(tw, "pending\t%d\n", n.Pending)
	fmt.Fprintf(tw, "due\t%d\t(claimable now, not yet claimed)\n", n.Due)
	fmt.Fprintf(tw, "oldest due\t%v\t(how long the earliest claimable job has waited)\n", n.Lateness.Round(time.Millisecond))
	fmt.Fprintf(tw, "running\t%d\n", n.Running)
	fmt.Fprintf(tw, "dead\t%d\n", n.Dead)
	fmt.Fprintf(tw, "paused\t%s\n", pausedText(paused))
	fmt.Fprintf(tw, "redis time\t%s\n", n.At.UTC().Format(time.RFC3339Nano))
	return tw.Flush()
}

// pausedText writes the paused kinds, "" standing for the whole queue.
func pausedText(kinds []string) string {
	if len(kinds) == 0 {
		return "none"
	}
	var b []string
	for _, k := range kinds {
		if k == "" {
			b = append(b, "(the whole queue)")
		} else {
			b = append(b, clean(k))
		}
	}
	return strings.Join(b, ", ")
}

func (c *cli) list(ctx context.Context, args []string) error {
	fs := c.flags("list")
	limit := fs.Int("limit", 20, "jobs a page, at most 1000")
	cursor := fs.String("cursor", "", "the cursor a previous page printed")
	payload := fs.Bool("payload", false, "print the payloads")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: list takes one state: pending, running or dead", errUsage)
	}
	state, err := durable.ParseState(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	raw := ""
	if *cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(*cursor)
		if err != nil {
			return fmt.Errorf("%w: -cursor %q is not one list printed", errUsage, *cursor)
		}
		raw = string(b)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	jobs, next, err := c.q.List(ctx, state, raw, *limit)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	head := "ID\tKIND\tDUE\tATTEMPTS"
	switch state {
	case durable.Running:
		head = "ID\tKIND\tLEASE ENDS\tATTEMPT\tWORKER"
	case durable.Dead:
		head = "ID\tKIND\tATTEMPTS\tERROR"
	}
	if *payload {
		head += "\tPAYLOAD"
	}
	fmt.Fprintln(tw, head)
	for _, j := range jobs {
		var row string
		if state == durable.Dead {
			row = fmt.Sprintf("%s\t%s\t%d\t%s", clean(j.ID), clean(j.Kind), j.Attempt, clean(j.Err))
		} else {
			row = fmt.Sprintf("%s\t%s\t%s\t%d", clean(j.ID), clean(j.Kind), when(j.Due), j.Attempt)
			if state == durable.Running {
				row += "\t" + clean(j.Worker)
			}
		}
		if *payload {
			row += "\t" + clean(string(j.Payload))
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if next != "" {
		fmt.Fprintf(c.out, "next page: -cursor %s\n", base64.RawURLEncoding.EncodeToString([]byte(next)))
	}
	return nil
}

func (c *cli) inspect(ctx context.Context, args []string) error {
	fs := c.flags("inspect")
	payload := fs.Bool("payload", false, "print the payload")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: inspect takes one ID", errUsage)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	info, ok, err := c.q.Lookup(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no job %s", clean(fs.Arg(0)))
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "id\t%s\n", clean(info.ID))
	fmt.Fprintf(tw, "kind\t%s\n", clean(info.Kind))
	fmt.Fprintf(tw, "state\t%v\n", info.State)
	switch info.State {
	case durable.Pending:
		fmt.Fprintf(tw, "due\t%s\n", when(info.Due))
	case durable.Running:
		fmt.Fprintf(tw, "lease ends\t%s\n", when(info.Due))
	}
	fmt.Fprintf(tw, "attempts\t%d\n", info.Attempt)
	if info.Worker != "" {
		fmt.Fprintf(tw, "worker\t%s\n", clean(info.Worker))
	}
	if info.State == durable.Dead {
		fmt.Fprintf(tw, "error\t%s\n", clean(info.Err))
	}
	fmt.Fprintf(tw, "payload\t%d bytes\n", len(info.Payload))
	if *payload {
		fmt.Fprintf(tw, "\t%s\n", clean(string(info.Payload)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return c.attempts(ctx, info) // workers.go
}

// dead retries or deletes dead jobs: those named, or -all of -kind.
func (c *cli) dead(ctx context.Context, verb string, args []string) error {
	fs := c.flags(verb)
	all := fs.Bool("all", false, "every dead job (of -kind)")
	kind := fs.String("kind", "", "with -all: only the dead jobs of this kind")
	if err := parse(fs, args); err != nil {
		return err
	}
	var n int
	var err error
	switch {
	case *all && fs.NArg() > 0, !*all && fs.NArg() == 0:
		return fmt.Errorf("%w: %s takes IDs or -all", errUsage, verb)
	case !*all && *kind != "":
		return fmt.Errorf("%w: -kind goes with -all", errUsage)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	switch {
	case *all && verb == "retry":
		n, err = c.q.RetryAllDead(ctx, *kind)
	case *all:
		n, err = c.q.DeleteAllDead(ctx, *kind)
	default:
		for ids := fs.Args(); len(ids) > 0 && err == nil; {
			batch := ids[:min(len(ids), durable.MaxList)]
			ids = ids[len(batch):]
			var k int
			if verb == "retry" {
				k, err = c.q.RetryDead(ctx, batch...)
			} else {
				k, err = c.q.DeleteDead(ctx, batch...)
			}
			n += k
		}
	}
	past := map[string]string{"retry": "retried", "delete": "deleted"}[verb]
	if err != nil {
		return fmt.Errorf("%s %s, then: %w", past, deadJobs(n), err)
	}
	fmt.Fprintf(c.out, "%s %s\n", past, deadJobs(n))
	return nil
}

func deadJobs(n int) string {
	if n == 1 {
		return "1 dead job"
	}
	return strconv.Itoa(n) + " dead jobs"
}

// move moves the jobs of shard 0 to the shards of -shards, and prints how
// many it moved and left.
func (c *cli) move(ctx context.Context, args []string) error {
	if len(args) != 0 {
		return fmt.Errorf("%w: move takes no arguments", errUsage)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	moved, left, err := c.q.MoveToShards(ctx)
	fmt.Fprintf(c.out, "moved %d, left %d in shard 0 (due within 10 s, leased or parked: run move again later)\n", moved, left)
	return err
}

func (c *cli) cancel(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: cancel takes IDs", errUsage)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	missing := 0
	for _, id := range args {
		ok, err := c.q.Cancel(ctx, id)
		if err != nil {
			return err
		}
		if ok {
			fmt.Fprintf(c.out, "cancelled %s\n", clean(id))
		} else {
			fmt.Fprintf(c.out, "no job %s\n", clean(id))
			missing++
		}
	}
	if missing > 0 {
		return fmt.Errorf("%d of %d IDs named no job", missing, len(args))
	}
	return nil
}

func (c *cli) pause(ctx context.Context, pause bool, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("%w: pause and resume take at most one kind", errUsage)
	}
	kind := ""
	if len(args) == 1 {
		kind = args[0]
		if kind == "" {
			return fmt.Errorf("%w: an empty kind (name none for the whole queue)", errUsage)
		}
	}
	what := "the whole queue"
	if kind != "" {
		what = "kind " + clean(kind)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	if pause {
		if err := c.q.Pause(ctx, kind); err != nil {
			return err
		}
		fmt.Fprintf(c.out, "paused %s\n", what)
		return nil
	}
	if err := c.q.Resume(ctx, kind); err != nil {
		return err
	}
	fmt.Fprintf(c.out, "resumed %s\n", what)
	return nil
}

// when writes a time in UTC with ms, and how far from now it is.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Until(t).Round(time.Millisecond)
	rel := "in " + d.String()
	if d < 0 {
		rel = (-d).String() + " ago"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z") + " (" + rel + ")"
}

// clean returns s as it is if it is plain printable text without tabs
// or newlines, else quoted: a job's data never reaches the terminal as
// control characters.
func clean(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar {
			return strconv.Quote(s)
		}
	}
	if s == "" || s != strings.TrimSpace(s) || strings.HasPrefix(s, `"`) {
		return strconv.Quote(s)
	}
	return s
}
