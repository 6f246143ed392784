package durable

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel"
)

// Limits of what the store holds.
const (
	// MaxPayload is the largest payload a job may carry: 64 KiB. A job's
	// payload lives in Redis memory for as long as the job is pending;
	// larger data belongs elsewhere, with its key in the payload.
	MaxPayload = 64 << 10
	// MaxIDLen and MaxKindLen bound a job's ID and kind, in bytes.
	MaxIDLen   = 1024
	MaxKindLen = 255
)

// maxDue is the latest due time the store holds: 2^53 µs after the Unix
// epoch (in 2255), the last whole µs a Redis sorted-set score, a double,
// holds exactly.
var maxDue = time.UnixMicro(1 << 53)

// ErrClosed is returned by every operation of a Queue after Close.
var ErrClosed = errors.New("durable: queue closed")

// ErrRunning is returned by Reschedule for a job a worker holds the lease
// of: its due time is its lease until the attempt ends.
var ErrRunning = errors.New("durable: job is running")

// A Queue schedules durable delayed jobs in Redis and, when it has
// handlers, runs them: a worker that fires each job from the Queue's
// timewheel when it comes due, once across all the Queues (replicas) on
// the same Redis and name, and again after a replica dies mid-run.
//
// The store is the truth. Redis holds every job: a sorted set of when
// each is next claimable, in µs on the server's clock (never whole
// seconds, so a job never starts early), and three hashes (kind and
// payload; attempt and lease holder; last error of the dead). All keys
// share one hash tag, {name}, so one queue lives in one Redis Cluster
// slot. Every change is one Lua script: atomic, one round trip.
//
// A worker holds one wheel timer, not one per job: every claim returns
// the earliest score left in the store, and the worker arms its timer
// there; Schedule and Reschedule publish the new due time, and a worker
// whose timer is later arms it earlier. When the timer fires, the worker
// claims (leases) every job due on the server's clock, up to its free
// handlers, and runs them; a handler's success deletes the job, a failure
// retries it after a backoff or keeps it as dead. The lease is renewed
// while the handler runs; when a worker dies, its jobs' leases end and
// the workers' timers, armed at the earliest score, claim them again.
// docs/durable.md says what is guaranteed under which failure.
//
// A Queue is safe for concurrent use. Its zero value is not usable: make
// one with New.
type Queue struct {
	rdb     redis.UniversalClient
	shards  []shard         // WithShards: shardOf(id) holds job id
	keys    []string        // :due, :job, :run, :dead of shards[0]
	channel string          // shards[0]'s
	kinds   map[string]bool // nil: any kind
	cfg     config
	stats   counters

	mu     sync.Mutex
	closed bool // guarded by mu

	ws       []*worker        // a worker per shard; none without handlers
	wheel    *timewheel.Wheel // the workers'
	ownWheel bool             // the Queue made wheel, and closes it
}

// A Job is a job as its handler gets it.
type Job struct {
	ID      string
	Kind    string
	Payload []byte
	// Due is when this attempt became due: the job's due time, or the
	// end of a lease that ran out, or of a retry's backoff.
	Due time.Time
	// Attempt is 1 for the first run, 2 for the second, and so on.
	Attempt int
}

// A Handler runs a job. It returns nil when the job is done, or an error
// to retry it (see WithRetry). ctx ends when the worker closes or loses
// the job's lease. A handler may run a job again after a failure the
// worker could not see (see docs/durable.md), so it should be idempotent.
type Handler func(ctx context.Context, j Job) error

// New returns a Queue on rdb configured by opts. With handlers
// (WithHandler) it also starts a worker, which runs until Close: three
// goroutines, a subscription (one connection of rdb's) and a claim at
// once; without, it only schedules and costs nothing. New panics if rdb
// is nil.
func New(rdb redis.UniversalClient, opts ...Option) *Queue {
	if rdb == nil {
		panic("durable: New: nil Redis client")
	}
	cfg := defaults()
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("durable: New: option %d is nil", i))
		}
		o(&cfg)
	}
	checkReplicated(rdb, cfg.replicated)
	q := &Queue{rdb: rdb, cfg: cfg}
	for _, tag := range shardTags(cfg.name, max(1, cfg.shards)) {
		q.shards = append(q.shards, newShard(tag))
	}
	q.keys, q.channel = q.shards[0].keys, q.shards[0].channel
	if len(cfg.kinds) > 0 || len(cfg.handlers) > 0 {
		q.kinds = map[string]bool{}
		for _, k := range cfg.kinds {
			q.kinds[k] = true
		}
		for k := range cfg.handlers {
			q.kinds[k] = true
		}
	}
	if len(cfg.handlers) > 0 {
		q.startWorkers()
	}
	return q
}

// Schedule adds a job of kind with payload, due at at, under id, and
// returns once Redis holds it: true if it added the job, false if a job
// with that ID exists already (pending, running or dead), which it leaves
// as it is. A due time in the past means now. It returns an error for an
// empty or too long id or kind, a zero at or one past 2255, a payload
// over MaxPayload, a kind that no handler or WithKinds names (on a Queue
// that names any), or a closed Queue. It costs one round trip.
func (q *Queue) Schedule(ctx context.Context, id, kind string, at time.Time, payload []byte) (bool, error) {
	if at.IsZero() {
		return false, fmt.Errorf("durable: Schedule %q: zero due time", id)
	}
	if at.After(maxDue) {
		return false, fmt.Errorf("durable: Schedule %q: due time %v past the last the store holds (%v)", id, at, maxDue.UTC())
	}
	return q.schedule(ctx, "Schedule", id, kind, max(0, ceilMicro(at)), false, payload)
}

// ScheduleAfter is Schedule with the job due d from now on Redis's clock
// (the one workers claim by). A d of zero or less means now. It returns
// an error for a d that passes 2255.
func (q *Queue) ScheduleAfter(ctx context.Context, id, kind string, d time.Duration, payload []byte) (bool, error) {
	if d > time.Until(maxDue) {
		return false, fmt.Errorf("durable: ScheduleAfter %q: due %v from now, past the last time the store holds (%v)", id, d, maxDue.UTC())
	}
	return q.schedule(ctx, "ScheduleAfter", id, kind, max(0, ceilDiv(int64(d), 1000)), true, payload)
}

func (q *Queue) schedule(ctx context.Context, op, id, kind string, us int64, relative bool, payload []byte) (bool, error) {
	if err := q.check(op, id); err != nil {
		return false, err
	}
	switch {
	case kind == "":
		return false, fmt.Errorf("durable: %s %q: empty kind", op, id)
	case len(kind) > MaxKindLen || strings.IndexByte(kind, 0) >= 0:
		return false, fmt.Errorf("durable: %s %q: kind %.40q is over %d bytes or holds a NUL", op, id, kind, MaxKindLen)
	case q.kinds != nil && !q.kinds[kind]:
		return false, fmt.Errorf("durable: %s %q: unknown kind %q (no handler or WithKinds names it)", op, id, kind)
	case len(payload) > MaxPayload:
		return false, fmt.Errorf("durable: %s %q: payload of %d bytes, over MaxPayload (%d)", op, id, len(payload), MaxPayload)
	}
	blob := make([]byte, 0, len(kind)+1+len(payload))
	blob = append(append(append(blob, kind...), 0), payload...)
	sh := q.shardOf(id)
	n, err := q.eval(ctx, scheduleScript, sh.keys, id, us, blob, rel(relative), sh.channel).Int()
	if err != nil {
		return false, fmt.Errorf("durable: %s %q: %w", op, id, err)
	}
	if n == 1 {
		q.stats.scheduled.Add(1)
	}
	return n == 1, nil
}

// Reschedule moves a pending or dead job to a new due time (a dead job
// comes back with its attempts forgotten), and returns true if it did,
// false if no job has id. It returns ErrRunning (wrapped) for a job that
// a worker runs now. It costs one round trip.
func (q *Queue) Reschedule(ctx context.Context, id string, at time.Time) (bool, error) {
	if at.IsZero() {
		return false, fmt.Errorf("durable: Reschedule %q: zero due time", id)
	}
	if at.After(maxDue) {
		return false, fmt.Errorf("durable: Reschedule %q: due time %v past the last the store holds (%v)", id, at, maxDue.UTC())
	}
	if err := q.check("Reschedule", id); err != nil {
		return false, err
	}
	sh := q.shardOf(id)
	n, err := q.eval(ctx, rescheduleScript, sh.keys, id, max(0, ceilMicro(at)), "0", sh.channel).Int()
	switch {
	case err != nil:
		return false, fmt.Errorf("durable: Reschedule %q: %w", id, err)
	case n < 0:
		return false, fmt.Errorf("durable: Reschedule %q: %w", id, ErrRunning)
	}
	return n == 1, nil
}

// Cancel deletes the job with id, pending, running or dead, and returns
// true if there was one. A running attempt is not stopped: its handler
// returns as it would, and the job does not run again. It costs one
// round trip.
func (q *Queue) Cancel(ctx context.Context, id string) (bool, error) {
	if err := q.check("Cancel", id); err != nil {
		return false, err
	}
	n, err := q.eval(ctx, cancelScript, q.shardOf(id).keys, id).Int()
	if err != nil {
		return false, fmt.Errorf("durable: Cancel %q: %w", id, err)
	}
	return n == 1, nil
}

// State is where a job is in its life.
type State int

const (
	Pending State = iota + 1 // waiting for its due time, or for a retry
	Running                  // leased by a worker
	Dead                     // failed its last attempt; kept until Cancel or Reschedule
)

func (s State) String() string {
	switch s {
	case Pending:
		return "pending"
	case Running:
		return "running"
	case Dead:
		return "dead"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Info is a job as Lookup finds it.
type Info struct {
	Job   // Due: when it is next claimable (for a running job, the end of its lease); Attempt: attempts made
	State State
	Err   string // the last error, when Dead
}

// Lookup returns the job with id, and false if there is none. It costs
// one round trip.
func (q *Queue) Lookup(ctx context.Context, id string) (Info, bool, error) {
	if err := q.check("Lookup", id); err != nil {
		return Info{}, false, err
	}
	v, err := lookupScript.Run(ctx, q.rdb, q.shardOf(id).keys, id).Slice()
	if err != nil {
		return Info{}, false, fmt.Errorf("durable: Lookup %q: %w", id, err)
	}
	blob, ok := v[0].(string)
	if !ok {
		return Info{}, false, nil
	}
	info := Info{Job: Job{ID: id}, State: Pending}
	info.Kind, info.Payload = split(blob)
	if s, ok := v[1].(string); ok {
		info.Due = time.UnixMicro(parseScore(s))
	}
	if r, ok := v[2].(string); ok {
		a, holder, _ := strings.Cut(r, "|")
		info.Attempt, _ = strconv.Atoi(a)
		if holder != "" {
			info.State = Running
		}
	}
	if e, ok := v[3].(string); ok {
		info.State, info.Err = Dead, e
	}
	return info, true, nil
}

// Close stops the worker, if the Queue has one: it claims no more jobs,
// waits for the running handlers until ctx ends, then cancels their
// contexts and waits for them to return. A job whose handler then returns
// an error is handed back, due at once for another replica (its attempt
// not counted as a failure); one whose handler returns nil is done.
// Close returns ctx's error if it ended first, and ErrClosed after the
// first call. It does not close rdb.
func (q *Queue) Close(ctx context.Context) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.closed = true
	q.mu.Unlock()
	return q.closeWorkers(ctx)
}

// check refuses an operation on a zero or closed Queue, or with a bad ID.
func (q *Queue) check(op, id string) error {
	if q == nil || q.rdb == nil {
		panic(fmt.Sprintf("durable: %s on a Queue not made by New", op))
	}
	q.mu.Lock()
	closed := q.closed
	q.mu.Unlock()
	switch {
	case closed:
		return fmt.Errorf("durable: %s %q: %w", op, id, ErrClosed)
	case id == "":
		return fmt.Errorf("durable: %s: empty ID", op)
	case len(id) > MaxIDLen:
		return fmt.Errorf("durable: %s: ID %.40q... of %d bytes, over MaxIDLen (%d)", op, id, len(id), MaxIDLen)
	}
	return nil
}

// ceilMicro returns t in µs since the Unix epoch, rounded up: a job is
// never due before the time it was given.
func ceilMicro(t time.Time) int64 {
	s, ns := t.Unix(), int64(t.Nanosecond())
	if s < math.MinInt64/1_000_000+1 {
		return math.MinInt64 / 1000
	}
	return s*1_000_000 + ceilDiv(ns, 1000)
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return a / b
	}
	return (a + b - 1) / b
}

func rel(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// split returns a blob's kind and payload.
func split(blob string) (string, []byte) {
	kind, payload, _ := strings.Cut(blob, "\x00")
	return kind, []byte(payload)
}

// parseScore parses a score Redis wrote: µs, an integer below 2^53,
// written as one or in exponent form.
func parseScore(s string) int64 {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	f, _ := strconv.ParseFloat(s, 64)
	return int64(f)
}

// wheelOrNew returns the configured wheel, or a new one the worker owns.
func wheelOrNew(cfg *config) (*timewheel.Wheel, bool) {
	if cfg.wheel != nil {
		return cfg.wheel, false
	}
	return timewheel.New(), true
}
