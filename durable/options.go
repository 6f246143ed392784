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
	perKind     map[string]kindConfig
	kinds       []string
	concurrency int
	batch       int
	lease       time.Duration
	maxAttempts int
	backoff     func(attempt int) time.Duration
	timeout     time.Duration
	poll        time.Duration
	callTimeout time.Duration
	wheel       *timewheel.Wheel
	worker      string
	onError     func(error)
	onPanic     func(j Job, p any, stack []byte)
	replicated  replication // WithReplicated; replicated.go
	shards      int         // WithShards, 0 meaning 1; shards.go
}

func defaults() config {
	host, _ := os.Hostname()
	return config{
		name:        "durable",
		handlers:    map[string]Handler{},
		perKind:     map[string]kindConfig{},
		concurrency: 64,
		batch:       256,
		lease:       5 * time.Second,
		maxAttempts: 5,
		backoff:     Exponential(time.Second, time.Hour),
		poll:        5 * time.Second,
		callTimeout: time.Second,
		worker:      host + ":" + strconv.Itoa(os.Getpid()) + ":" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36),
	}
}

// kindConfig is what a kind's KindOptions set; zero fields take the
// Queue's.
type kindConfig struct {
	timeout     time.Duration
	maxAttempts int
	backoff     func(attempt int) time.Duration
}

// policy returns the timeout and retry policy of kind.
func (c *config) policy(kind string) (timeout time.Duration, attempts int, backoff func(int) time.Duration) {
	timeout, attempts, backoff = c.timeout, c.maxAttempts, c.backoff
	if k, ok := c.perKind[kind]; ok {
		if k.timeout > 0 {
			timeout = k.timeout
		}
		if k.maxAttempts > 0 {
			attempts, backoff = k.maxAttempts, k.backoff
		}
	}
	return timeout, attempts, backoff
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
// a worker. opts set the kind's own timeout and retry policy (Timeout,
// Retry), in place of the Queue's. It panics on an empty kind, a nil h or
// a nil option.
func WithHandler(kind string, h Handler, opts ...KindOption) Option {
	if kind == "" {
		panic("durable: WithHandler: empty kind")
	}
	if h == nil {
		panic(fmt.Sprintf("durable: WithHandler: nil handler for kind %q", kind))
	}
	var k kindConfig
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("durable: WithHandler: option %d of kind %q is nil", i, kind))
		}
		o(&k)
	}
	return func(c *config) {
		c.handlers[kind] = h
		c.perKind[kind] = k
	}
}

// A KindOption sets how the jobs of one kind run, in WithHandler.
type KindOption func(*kindConfig)

// Timeout bounds each attempt of the kind's jobs to d (in place of
// WithTimeout's): the handler's context ends d after it starts (its
// cause an error that says so), and the attempt fails then, whether or
// not the handler returns: the job is retried or dead as after an error,
// and its lease is no longer renewed. A handler that ignores its context
// keeps its slot (WithConcurrency) until it returns. It panics if d is
// not positive.
func Timeout(d time.Duration) KindOption {
	if d <= 0 {
		panic(fmt.Sprintf("durable: Timeout: non-positive timeout %v", d))
	}
	return func(k *kindConfig) { k.timeout = d }
}

// Retry sets the kind's attempts and backoff (in place of WithRetry's).
// It panics if attempts is not positive or backoff is nil.
func Retry(attempts int, backoff func(attempt int) time.Duration) KindOption {
	if attempts <= 0 {
		panic(fmt.Sprintf("durable: Retry: non-positive attempts %d", attempts))
	}
	if backoff == nil {
		panic("durable: Retry: nil backoff")
	}
	return func(k *kindConfig) { k.maxAttempts, k.backoff = attempts, backoff }
}

// WithTimeout bounds each attempt to d, for the kinds that set no Timeout
// of their own (default: no bound). See Timeout. It panics if d is not
// positive.
func WithTimeout(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("durable: WithTimeout: non-positive timeout %v", d))
	}
	return func(c *config) { c.timeout = d }
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
// (default 64). With every handler busy it claims nothing; otherwise it
// holds ahead of their due times as many jobs as its handlers start
// within half the horizon, at their mean run time (at least n, at most
// twice WithBatch). It panics if n is not positive.
func WithConcurrency(n int) Option {
	if n <= 0 {
		panic(fmt.Sprintf("durable: WithConcurrency: non-positive n %d", n))
	}
	return func(c *config) { c.concurrency = n }
}

// WithBatch sets the most jobs one claim leases (default 256); a worker
// holds at most twice as many ahead of their due times. It panics
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
// renewal, or after its due time if the worker died holding it ahead of
// it. The worker renews its leases every third of it, and leases jobs at
// most half of it (and at most 2 s) ahead of their due time. It panics if
// d is under 30ms.
func WithLease(d time.Duration) Option {
	if d < 30*time.Millisecond {
		panic(fmt.Sprintf("durable: WithLease: lease %v under 30ms", d))
	}
	return func(c *config) { c.lease = d }
}

// WithRetry sets how many attempts a job gets (default 5) and the delay
// before attempt n+1 after attempt n failed (default Exponential(1s,
// 1h)), for the kinds that set no Retry of their own. A job whose last
// attempt fails is kept as dead. It panics if attempts is not positive or
// backoff is nil.
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

// WithPoll sets how often a replica with room claims without news
// (default 5 s, ±20 % jitter), each of its k shards' workers once every
// k·d: a safety net. A worker claims when a message, its last claim or a
// lease renewal (every third of the lease) says a job comes within its
// horizon or a lease ran out; this claim finds what all of them missed
// (a lost Resume message). It panics if d is not positive.
func WithPoll(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("durable: WithPoll: non-positive interval %v", d))
	}
	return func(c *config) { c.poll = d }
}

// WithCallTimeout bounds each call the Queue makes to Redis (default
// 1 s), the worker's included: with Redis unreachable, or connected but
// stalled (CLIENT PAUSE, a stopped process), Schedule and the other
// calls return an error within d and a few ms, whatever the client's
// options (New makes the bound hold: see there), and at once
// (ErrUnavailable) for the second after a call found it unreachable or
// stalled. A call's error then says which call and d. WithReplicated
// adds twice its WAIT timeout, and 100 ms each (Redis ends a WAIT up to
// that late), to the bound of the calls that wait (Schedule, Reschedule,
// Cancel and the acks), so that replicas that fall short end such a call
// with ErrNotReplicated, not with this timeout. It panics if d is under
// 10ms.
func WithCallTimeout(d time.Duration) Option {
	if d < 10*time.Millisecond {
		panic(fmt.Sprintf("durable: WithCallTimeout: timeout %v under 10ms", d))
	}
	return func(c *config) { c.callTimeout = d }
}

// WithErrorHandler sets what the worker calls with each error of a call
// to Redis that it made on its own (a claim, ack, renewal, failure,
// hand-back), a *CallError, from its own goroutines: f must not block.
// The default logs them with log/slog's default logger at level Warn, at
// most one line a second, with the count of those it left out. Every
// error is also counted in Stats.Errors. It panics on a nil f.
func WithErrorHandler(f func(error)) Option {
	if f == nil {
		panic("durable: WithErrorHandler: nil func")
	}
	return func(c *config) { c.onError = f }
}

// WithPanicHandler sets what the worker calls when a handler panics, with
// the job, the value the handler panicked with and the stack of its
// goroutine, on that goroutine; the attempt then fails with an error that
// quotes the value. The default logs it with log/slog's default logger at
// level Error, stack included, at most one a second. It panics on a nil
// f.
func WithPanicHandler(f func(j Job, p any, stack []byte)) Option {
	if f == nil {
		panic("durable: WithPanicHandler: nil func")
	}
	return func(c *config) { c.onPanic = f }
}

// WithWheel sets the wheel the worker's timers run on (default: a wheel
// of its own, closed by Close). Its clock must be the real one (or keep
// real time): the worker converts Redis's clock to it. It panics if w is
// nil; New panics if w is a zero Wheel, and Schedule returns an error
// once w is closed (a worker on a closed wheel would never start a job).
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
