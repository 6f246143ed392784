// Command durable looks at and steers a durable queue in Redis: its
// figures, its jobs by state, one job with its past attempts, its
// workers, its history and its jobs by kind, and the dead jobs retried
// or deleted; a job cancelled; a queue or a kind paused and resumed.
//
//	durable [flags] command [flags] [args]
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
// Flags go before or after the command and its arguments; "--" ends
// them, for an ID that starts with "-". -h prints the usage (of the
// command, after one) and exits 0. -o json writes stats, list,
// inspect, workers, history and kinds as JSON. The exit status is 0 on success, 1 on an error (Redis
// failed or could not be reached), 2 on a usage error, and 3 when a job,
// a dead job or the queue named does not exist; docs/durable.md has the
// rest.
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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

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

// The exit statuses.
const (
	exitOK       = 0
	exitError    = 1 // Redis failed, or could not be reached
	exitUsage    = 2 // the command line is wrong: nothing was done
	exitNotFound = 3 // a job, dead job or queue named does not exist
)

// errUsage is a usage error: run prints the usage and exits 2.
var errUsage = errors.New("usage")

// errNotFound is wrapped by the error of a command that named a job, a
// dead job or a queue that does not exist: run exits 3.
var errNotFound = errors.New("not found")

// notFound is an error that wraps errNotFound without its text.
type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == errNotFound }

func notFoundf(format string, args ...any) error { return notFound(fmt.Sprintf(format, args...)) }

// globals are the flags of every command.
type globals struct {
	addr, name, output string
	timeout, lease     time.Duration
	shards             int
	cluster            bool
}

func (g *globals) define(fs *flag.FlagSet) {
	def := os.Getenv("DURABLE_REDIS")
	if def == "" {
		def = "127.0.0.1:6379"
	}
	fs.StringVar(&g.addr, "addr", def, "Redis: host:port, or a redis:// or rediss:// URL; $DURABLE_REDIS if set")
	fs.StringVar(&g.name, "queue", "durable", "the queue's name (durable.WithName)")
	fs.DurationVar(&g.timeout, "timeout", 10*time.Second, "the most the command waits for Redis, each call included")
	fs.DurationVar(&g.lease, "lease", 5*time.Second, "the workers' lease (durable.WithLease)")
	fs.IntVar(&g.shards, "shards", 0, "the queue's shards (durable.WithShards); 0: as the queue's layout in Redis says")
	fs.BoolVar(&g.cluster, "cluster", false, "Redis is a Redis Cluster: -addr is its seed nodes, host:port,host:port, or a redis:// URL with addr= for each further seed")
	fs.StringVar(&g.output, "o", "text", "the output of stats, list, inspect, workers, history and kinds: text or json")
}

// check returns a usage error for a flag given a bad value.
func (g *globals) check() error {
	switch {
	case g.name == "" || strings.ContainsAny(g.name, "{}"):
		return fmt.Errorf("%w: -queue %q is empty or holds a brace", errUsage, g.name)
	case g.shards < 0 || g.shards > durable.MaxShards:
		return fmt.Errorf("%w: -shards %d not in [1, %d]", errUsage, g.shards, durable.MaxShards)
	case g.timeout < 10*time.Millisecond:
		return fmt.Errorf("%w: -timeout %v under 10ms", errUsage, g.timeout)
	case g.lease < 30*time.Millisecond:
		return fmt.Errorf("%w: -lease %v under 30ms", errUsage, g.lease)
	case g.output != "text" && g.output != "json":
		return fmt.Errorf("%w: -o %q is neither text nor json", errUsage, g.output)
	}
	return nil
}

// run runs the command line args, writing its output to stdout and its
// errors to stderr, and returns the exit status (exitOK, …).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var g globals
	fs := flag.NewFlagSet("durable", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run writes the errors and the usage
	fs.Usage = func() {}
	g.define(fs)
	var cmd *command
	var runCmd runFunc
	var own *flag.FlagSet // the command's own flags, for its usage
	pos, err := parseLine(fs, args, func(name string) error {
		if cmd = find(name); cmd == nil {
			return fmt.Errorf("%w: no command %q", errUsage, name)
		}
		own = flag.NewFlagSet(name, flag.ContinueOnError)
		runCmd = cmd.setup(own)
		own.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, f.Name, f.Usage) })
		return nil
	})
	name := "durable"
	if cmd != nil {
		name += " " + cmd.name
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		help(stdout, cmd, own)
		return exitOK
	case err == nil && cmd == nil:
		err = fmt.Errorf("%w: no command", errUsage)
	case err != nil && !errors.Is(err, errUsage):
		err = fmt.Errorf("%w: %v", errUsage, err) // a flag's error
	}
	if err == nil {
		err = g.check()
	}
	if err == nil {
		err = runOn(ctx, &g, cmd, runCmd, pos[1:], stdout)
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "%s: %s\n\n", name, strings.TrimPrefix(err.Error(), "usage: "))
		shortUsage(stderr, cmd)
		return exitUsage
	case errors.Is(err, errNotFound):
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitNotFound
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, connError(err, g.addr, g.cluster, g.timeout))
	return exitError
}

// parseLine parses args with fs, flags before and after the arguments,
// and returns the arguments: the command's name first. It calls
// onCommand with the first argument, which adds the command's flags to
// fs. Every argument after "--" is an argument.
func parseLine(fs *flag.FlagSet, args []string, onCommand func(string) error) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return pos, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			if len(pos) == 0 && len(rest) > 0 {
				if err := onCommand(rest[0]); err != nil {
					return pos, err
				}
			}
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		if len(pos) == 0 {
			if err := onCommand(rest[0]); err != nil {
				return pos, err
			}
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// runOn connects to Redis and runs the command on args.
func runOn(ctx context.Context, g *globals, cmd *command, f runFunc, args []string, stdout io.Writer) error {
	rdb, err := client(g.addr, g.cluster)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	c := &cli{rdb: rdb, name: g.name, shards: g.shards, json: g.output == "json", out: stdout,
		opts: []durable.Option{durable.WithName(g.name), durable.WithLease(g.lease), durable.WithCallTimeout(g.timeout)}}
	defer c.close()
	return f(ctx, c, args)
}

// A cli runs the commands on one queue.
type cli struct {
	rdb    redis.UniversalClient
	name   string
	shards int // -shards; 0: the queue's layout in Redis says
	opts   []durable.Option
	q      *durable.Queue // made by open, once a command's arguments are checked
	json   bool           // -o json
	out    io.Writer
}

// open makes the Queue, once: with -shards, or the count the queue's
// layout record holds. Without -shards, a name with no record and no job
// is not found: a misspelled -queue is not an empty queue.
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
		if n == 0 {
			return notFoundf("no queue %s in Redis (no layout record, no job): check -queue, or give -shards to make it", clean(c.name))
		}
		k = n
	}
	c.q = durable.New(c.rdb, append(c.opts, durable.WithShards(k))...)
	return nil
}

func (c *cli) close() {
	if c.q != nil {
		c.q.Close(context.Background())
	}
}
