package durable

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/timewheel/timewheel"
)

// An Option configures a Queue made by New. Options panic on a value
// they cannot take, naming it: they are the program's, not its input's.
type Option func(*config)

type config struct {
	name        string
	handlers    map[string]Handler
	kinds       []string
	concurrency int
	batch       int
	lease       time.Duration
	maxAttempts int
	backoff     func(attempt int) time.Duration
	poll        time.Duration
	wheel       *timewheel.Wheel
	worker      string
	replicated  replication // WithReplicated; replicated.go
	shards      int         // WithShards, 0 meaning 1; shards.go
}

func defaults() config {
	host, _ := os.Hostname()
	return config{
		name:        "durable",
		handlers:    map[string]Handler{},
		concurrency: 64,
		batch:       256,
		lease:       5 * time.Second,
		maxAttempts: 5,
		backoff:     Exponential(time.Second, time.Hour),
		poll:        10 * time.Second,
		worker:      host + ":" + strconv.Itoa(os.Getpid()) + ":" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36),
	}
}

// WithName sets the queue's name (default "durable"), the hash tag of its
// Redis keys: {name}:due, {name}:job, {name}:run, {name}:dead, and the
// channel {name}:ev. Queues of one name share their jobs; on Redis
// Cluster each name lives in one slot. It panics on an empty name or one
// holding a brace.
func WithName(name string) Option {
	if name == "" || strings.ContainsAny(name, "{}") {
		panic(fmt.Sprintf("durable: WithName: name %q is empty or holds a brace", name))
	}
	return func(c *config) { c.name = name }
}

// WithHandler makes the Queue run jobs of kind with h: the Queue starts
// a worker. It panics on an empty kind or a nil h.
func WithHandler(kind string, h Handler) Option {
	if kind == "" {
		panic("durable: WithHandler: empty kind")
	}
	if h == nil {
		panic(fmt.Sprintf("durable: WithHandler: nil handler for kind %q", kind))
	}
	return func(c *config) { c.handlers[kind] = h }
}

// WithKinds names kinds the Queue schedules without running them: once
// a Queue names kinds (here or with WithHandler), Schedule refuses
// others. A Queue that names none schedules any kind.
func WithKinds(kinds ...string) Option {
	for _, k := range kinds {
		if k == "" {
			panic("durable: WithKinds: empty kind")
		}
	}
	return func(c *config) { c.kinds = append(c.kinds, kinds...) }
}

// WithConcurrency sets how many handlers the worker runs at once
// (default 64). It claims no more jobs than it has free handlers, so a
// replica never holds leases on jobs it has not started. It panics if n
// is not positive.
func WithConcurrency(n int) Option {
	if n <= 0 {
		panic(fmt.Sprintf("durable: WithConcurrency: non-positive n %d", n))
	}
	return func(c *config) { c.concurrency = n }
}

// WithBatch sets the most jobs one claim leases (default 256). It panics
// if n is not in [1, 1000] (a claim script's arguments to one command are
// bounded).
func WithBatch(n int) Option {
	if n <= 0 || n > 1000 {
		panic(fmt.Sprintf("durable: WithBatch: n %d not in [1, 1000]", n))
	}
	return func(c *config) { c.batch = n }
}

// WithLease sets the lease of a claim (default 5s): a job whose worker
// died runs again on another replica at most this long after the last
// renewal. The worker renews its leases every third of it. It panics if
// d is under 30ms.
func WithLease(d time.Duration) Option {
	if d < 30*time.Millisecond {
		panic(fmt.Sprintf("durable: WithLease: lease %v under 30ms", d))
	}
	return func(c *config) { c.lease = d }
}

// WithRetry sets how many attempts a job gets (default 5) and the delay
// before attempt n+1 after attempt n failed (default Exponential(1s,
// 1h)). A job whose last attempt fails is kept as dead. It panics if
// attempts is not positive or backoff is nil.
func WithRetry(attempts int, backoff func(attempt int) time.Duration) Option {
	if attempts <= 0 {
		panic(fmt.Sprintf("durable: WithRetry: non-positive attempts %d", attempts))
	}
	if backoff == nil {
		panic("durable: WithRetry: nil backoff")
	}
	return func(c *config) { c.maxAttempts, c.backoff = attempts, backoff }
}

// Exponential returns a backoff of base after the first attempt, doubled
// after each next one, at most limit.
func Exponential(base, limit time.Duration) func(attempt int) time.Duration {
	return func(attempt int) time.Duration {
		d := base
		for i := 1; i < attempt && d < limit; i++ {
			d *= 2
		}
		return min(d, limit)
	}
}

// WithPoll sets how often an idle worker claims without being told to
// (default 10s): the bound on how late a job can start when the worker
// missed the message that announced it (its subscription was down). It
// panics if d is not positive.
func WithPoll(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("durable: WithPoll: non-positive interval %v", d))
	}
	return func(c *config) { c.poll = d }
}

// WithWheel sets the wheel the worker's timers run on (default: a wheel
// of its own, closed by Close). Its clock must be the real one (or keep
// real time): the worker converts Redis's clock to it. It panics if w is
// nil.
func WithWheel(w *timewheel.Wheel) Option {
	if w == nil {
		panic("durable: WithWheel: nil wheel")
	}
	return func(c *config) { c.wheel = w }
}

// WithWorkerID sets the name the worker's leases carry (default
// host:pid:random). It panics on an empty id or one holding '|'.
func WithWorkerID(id string) Option {
	if id == "" || strings.Contains(id, "|") {
		panic(fmt.Sprintf("durable: WithWorkerID: id %q is empty or holds '|'", id))
	}
	return func(c *config) { c.worker = id }
}
