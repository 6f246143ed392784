package durable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/durable/internal/store"
	"github.com/timewheel/timewheel/internal/nilarg"
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
// of and runs, or starts within 100 ms: its due time is its lease until
// the attempt ends.
var ErrRunning = errors.New("durable: job is running")

// ErrUnavailable is returned (wrapped, with the last error) by the
// Queue's calls for a second after a call found Redis unreachable,
// without calling it: see WithCallTimeout.
var ErrUnavailable = errors.New("durable: Redis unreachable")

// ErrCanceled is the cause (context.Cause) of a handler's context when
// Cancel deleted its job, or Reschedule took it back, while it ran.
var ErrCanceled = errors.New("durable: job canceled")

// ErrLeaseLost is the cause of a handler's context when a renewal found
// the attempt's lease gone (another replica took the job after a pause
// longer than the lease).
var ErrLeaseLost = errors.New("durable: lease lost")

// A Queue schedules durable delayed jobs in Redis and, when it has
// handlers, runs them: a worker that fires each job from the Queue's
// timewheel when it comes due, once across all the Queues (replicas) on
// the same Redis and name, and again after a replica dies mid-run.
//
// The store is the truth. Redis holds every job: a sorted set of when
// each is next claimable, in µs on the server's clock (never whole
// seconds, so a job never starts early), and hashes (kind and payload;
// attempt and lease holder; last error of the dead). All keys share one
// hash tag, {name}, so one queue lives in one Redis Cluster slot (the
// layout is in the store's keys.go), unless WithShards spreads it over several. Every change is one Lua script: atomic, one
// round trip.
//
// A worker leases the jobs due within its horizon (2 s, or half the
// lease) ahead of their due time, a batch a claim, as many as its
// handlers can start on time, and starts each from its wheel at its due
// time, with no call to Redis then. Claims come from the worker's room,
// not from the due times. A replica claims when it has room for half a
// batch and more jobs are due within the horizon, when a job is due
// within 20 ms that no one holds, and when its last claim or renewal said
// the next job comes within reach or a lease ends. So the claims across
// the queue grow with the jobs, not with the replicas, and an idle worker
// sends none but a safety net (WithPoll). Schedule tells one live worker
// (not all) of a job due within the horizon, or of one due before all
// others. A handler's success deletes
// the job (acks of many jobs go in one call), a failure retries it after
// a backoff or keeps it as dead. The lease is renewed while the handler
// runs; when a worker dies, its jobs' leases end and the other workers,
// told by their renewals, take them again. docs/durable.md says what is
// guaranteed under which failure.
//
// A Queue is safe for concurrent use. Its zero value is not usable: make
// one with New.
type Queue struct {
	rdb    redis.UniversalClient // the caller's
	st     *store.Client         // every call to Redis goes through it
	k      store.Keys            // shards[0]'s
	shards []store.Keys          // WithShards: shardOf(id) holds job id
	kinds  map[string]bool       // nil: any kind
	cfg    config
	stats  counters
	br     breaker     // shards[0]'s
	brs    []*breaker  // a breaker per shard: &br, then those of shards 1...
	laid   atomic.Bool // the layout record was found to agree (layout.go)

	mu     sync.Mutex
	closed bool // guarded by mu

	ws       []*worker        // a worker per shard; none without handlers
	wheel    *timewheel.Wheel // the workers'
	ownWheel bool             // the Queue made wheel, and closes it
	obs      *observer        // the registry's heartbeat and the history (observe.go); nil without handlers

	sched schedState // periodic schedules: schedule_run.go
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
// (WithHandler) it also starts a worker, which runs until Close: four
// goroutines, a subscription (one connection) and a claim at once, for
// each shard (WithShards); without, it only schedules and costs nothing
// until its first call, which reads the queue's layout in Redis (see
// ErrShards). New panics if rdb is nil, an option is nil, or WithWheel
// gave a zero Wheel.
//
// Every call to Redis holds its bound (WithCallTimeout) whatever rdb's
// options. go-redis leaves a context's deadline out of a call on an open
// connection unless ContextTimeoutEnabled is set (it is not by default),
// so a *redis.Client, *redis.ClusterClient or *redis.Ring (also from
// redis.NewUniversalClient) without it is copied: the Queue makes a
// client of its own from rdb's options with ContextTimeoutEnabled set,
// and closes it in Close. The copy has its own pool of connections, and
// none of the hooks added to rdb (AddHook): to have the Queue use rdb
// itself, make it with ContextTimeoutEnabled. Any other client
// (Sentinel's failover client, a type of the caller's) is used as it
// is, each call on a goroutine of its own that returns when its bound
// ends, the call left to end at the client's ReadTimeout.
func New(rdb redis.UniversalClient, opts ...Option) *Queue {
	if nilarg.Is(rdb) {
		panic("durable: New: nil Redis client" + nilarg.Type(rdb))
	}
	cfg := defaults()
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("durable: New: option %d is nil", i))
		}
		o(&cfg)
	}
	if cfg.wheel != nil {
		checkWheel(cfg.wheel)
	}
	if cfg.onError == nil {
		cfg.onError = logErrors(cfg.name, cfg.worker)
	}
	if cfg.onPanic == nil {
		cfg.onPanic = logPanics(cfg.name, cfg.worker)
	}
	checkReplicated(rdb, cfg.replicated)
	q := &Queue{rdb: rdb, cfg: cfg, st: store.Open(rdb, store.Replication{N: cfg.replicated.n, Timeout: cfg.replicated.timeout})}
	for _, tag := range shardTags(cfg.name, max(1, cfg.shards)) {
		q.shards = append(q.shards, store.NewKeys("{"+tag+"}:"))
	}
	q.k = q.shards[0]
	q.brs = append(q.brs, &q.br)
	for range q.shards[1:] {
		q.brs = append(q.brs, new(breaker))
	}
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
	if err := q.check(ctx, op, id); err != nil {
		return false, err
	}
	if kind == "" {
		return false, fmt.Errorf("durable: %s %q: empty kind", op, id)
	}
	if err := q.checkKind(op, id, kind); err != nil {
		return false, err
	}
	if len(payload) > MaxPayload {
		return false, fmt.Errorf("durable: %s %q: payload of %d bytes, over MaxPayload (%d)", op, id, len(payload), MaxPayload)
	}
	if err := q.checkWheel(op, id); err != nil {
		return false, err
	}
	blob := make([]byte, 0, len(kind)+1+len(payload))
	blob = append(append(append(blob, kind...), 0), payload...)
	var added bool
	k, br := q.shardOf(id)
	err := q.doWrite(ctx, br, "schedule", func(ctx context.Context) (err error) {
		added, err = q.st.Schedule(ctx, k, id, us, relative, blob)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("durable: %s %q: %w", op, id, err)
	}
	if added {
		q.stats.scheduled.Add(1)
	}
	return added, nil
}

// Reschedule moves a pending or dead job to a new due time (a dead job
// comes back with its attempts forgotten), and returns true if it did,
// false if no job has id. It returns ErrRunning (wrapped) for a job that
// a worker runs now, or starts within 100 ms; a job a worker has leased
// ahead of its due time is taken back from it. It costs one round trip.
func (q *Queue) Reschedule(ctx context.Context, id string, at time.Time) (bool, error) {
	if at.IsZero() {
		return false, fmt.Errorf("durable: Reschedule %q: zero due time", id)
	}
	if at.After(maxDue) {
		return false, fmt.Errorf("durable: Reschedule %q: due time %v past the last the store holds (%v)", id, at, maxDue.UTC())
	}
	if err := q.check(ctx, "Reschedule", id); err != nil {
		return false, err
	}
	if err := q.checkWheel("Reschedule", id); err != nil {
		return false, err
	}
	var r store.Rescheduled
	k, br := q.shardOf(id)
	err := q.doWrite(ctx, br, "reschedule", func(ctx context.Context) (err error) {
		r, err = q.st.Reschedule(ctx, k, id, max(0, ceilMicro(at)), takeBackMargin.Microseconds())
		return err
	})
	switch {
	case err != nil:
		return false, fmt.Errorf("durable: Reschedule %q: %w", id, err)
	case r == store.Running:
		return false, fmt.Errorf("durable: Reschedule %q: %w", id, ErrRunning)
	}
	return r == store.Moved, nil
}

// Cancel deletes the job with id, pending, running or dead, and returns
// true if there was one. The worker that holds the job is told: a
// running attempt's handler context is cancelled, with ErrCanceled as
// its cause, on whichever replica runs it (within a message's latency),
// and a job leased ahead of its due time is dropped. The job does not run
// again; a worker that missed the message (its subscription was down)
// finds it out at its next renewal. It costs one round trip.
func (q *Queue) Cancel(ctx context.Context, id string) (bool, error) {
	if err := q.check(ctx, "Cancel", id); err != nil {
		return false, err
	}
	var found bool
	k, br := q.shardOf(id)
	err := q.doWrite(ctx, br, "cancel", func(ctx context.Context) (err error) {
		found, err = q.st.Cancel(ctx, k, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("durable: Cancel %q: %w", id, err)
	}
	return found, nil
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
	Job   // Due: when it is next claimable (its due time, also when leased ahead; for a running job, the end of its lease); Attempt: attempts made
	State State
	Err   string // the last error, when Dead
	// Worker is the worker that holds the job's lease, running it or
	// leased ahead of its due time (State Pending then); "" if none.
	Worker string
}

// Lookup returns the job with id, and false if there is none. It costs
// one round trip.
func (q *Queue) Lookup(ctx context.Context, id string) (Info, bool, error) {
	if err := q.check(ctx, "Lookup", id); err != nil {
		return Info{}, false, err
	}
	var f store.Found
	k, br := q.shardOf(id)
	err := q.doOn(ctx, br, "lookup", func(ctx context.Context) (err error) {
		f, err = q.st.Lookup(ctx, k, id)
		return err
	})
	if err != nil {
		return Info{}, false, fmt.Errorf("durable: Lookup %q: %w", id, err)
	}
	if !f.Exists {
		return Info{}, false, nil
	}
	now := f.Now
	info := Info{Job: Job{ID: id}, State: Pending}
	info.Kind, info.Payload = split(f.Blob)
	if f.HasScore {
		info.Due = time.UnixMicro(f.Score)
	}
	if f.Run.Attempt > 0 || f.Run.Worker != "" {
		worker, due := f.Run.Worker, f.Run.Due
		info.Attempt, info.Worker = f.Run.Attempt, worker
		switch {
		case worker == "":
		case due > now:
			// Leased ahead: pending until due, in the worker's wheel.
			info.Due = time.UnixMicro(due)
		case info.Due.UnixMicro() > now:
			info.State = Running
		default:
			// The lease ran out (its worker died): pending, claimable
			// again, as the layout says (the store's keys.go).
		}
	}
	if f.Dead {
		info.State, info.Err = Dead, f.Err
	}
	return info, true, nil
}

// Pause pauses kind, or the whole queue for kind "", across every replica
// (the state lives in Redis), until Resume. No worker starts a job of a
// paused kind: its due jobs wait, each counted as pending, and those a
// worker had leased ahead are handed back. Attempts running already run
// on. It returns an error for a kind over MaxKindLen, holding a NUL, or
// that no handler or WithKinds names (on a Queue that names any). It
// costs one round trip per shard (WithShards); if one fails, the shards
// before it are paused, and Pause returns its error.
func (q *Queue) Pause(ctx context.Context, kind string) error {
	if err := q.checkOp(ctx, "Pause", kind); err != nil {
		return err
	}
	err := q.eachShard(func(k store.Keys, br *breaker) error {
		return q.doOn(ctx, br, "pause", func(ctx context.Context) error {
			_, err := q.st.Pause(ctx, k, kind)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("durable: Pause %q: %w", kind, err)
	}
	return nil
}

// Resume resumes kind, or the whole queue for kind "", paused by Pause:
// its due jobs are due again, at once, in their order. Resuming a kind
// that is not paused does nothing. It costs a round trip per shard and
// per thousand jobs that waited for the kind; if one fails, Resume returns its error
// and a worker's claim moves the rest back, a hundred a claim.
func (q *Queue) Resume(ctx context.Context, kind string) error {
	if err := q.checkOp(ctx, "Resume", kind); err != nil {
		return err
	}
	const chunk = 1000
	err := q.eachShard(func(k store.Keys, br *breaker) error {
		resume := q.st.Resume
		for {
			var left int
			err := q.doOn(ctx, br, "resume", func(ctx context.Context) (err error) {
				left, err = resume(ctx, k, kind, chunk)
				return err
			})
			if err != nil || left == 0 {
				return err
			}
			resume = q.st.Unpark
		}
	})
	if err != nil {
		return fmt.Errorf("durable: Resume %q: %w", kind, err)
	}
	return nil
}

// Paused returns the paused kinds, sorted, "" for the whole queue, as
// shard 0 holds them (Pause writes every shard). It costs one round trip.
func (q *Queue) Paused(ctx context.Context) ([]string, error) {
	if err := q.checkOp(ctx, "Paused", ""); err != nil {
		return nil, err
	}
	var kinds []string
	err := q.doOn(ctx, &q.br, "paused", func(ctx context.Context) (err error) {
		kinds, err = q.st.Paused(ctx, q.k)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("durable: Paused: %w", err)
	}
	slices.Sort(kinds)
	return kinds, nil
}

// Close stops the worker, if the Queue has one: it claims no more jobs,
// hands back the jobs it leased ahead of their due time, waits for the
// running handlers until ctx ends, then cancels their contexts and waits
// for them to return. A job whose handler then returns an error is handed
// back, due at once for another replica (its attempt not counted as a
// failure); one whose handler returns nil is done. Close returns ctx's
// error if it ended first, and ErrClosed after the first call. It does
// not close rdb.
func (q *Queue) Close(ctx context.Context) error {
	if q == nil || q.rdb == nil {
		panic("durable: Close on a Queue not made by New")
	}
	if ctx == nil {
		return errors.New("durable: Close: nil context")
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.closed = true
	q.mu.Unlock()
	err := q.closeWorkers(ctx)
	q.st.Close()
	return err
}
