package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/durable/internal/store"
)

// A Periodic is a schedule of runs kept in the queue's Redis: each run,
// the run for one instant of Spec, is a job of Kind with Payload whose ID
// names the schedule and the instant (see RunID). So every replica that
// makes a run makes the same job, and only the first Schedule of it adds
// it; the run then has what every job has: leases, retries with the
// kind's backoff, its timeout, Cancel, the dead state.
//
// The zero values of Missed, Overlap, CatchUp and Grace are the
// defaults: MissedRunLast, OverlapSkip, DefaultCatchUp and DefaultGrace.
type Periodic struct {
	// Name names the schedule: not empty, at most MaxScheduleNameLen
	// bytes.
	Name string
	// Spec is a cron spec as cron.Parse reads it: five or six fields,
	// descriptors, "@every d" (on the multiples of d since the Unix
	// epoch, as cron.OnEpochGrid puts it), a leading CRON_TZ=. Daylight
	// saving changes are handled as package cron documents. "@at" is
	// refused: a single run is a job (Schedule).
	Spec string
	// Zone is the IANA zone Spec reads its times in; "" is UTC (or the
	// spec's CRON_TZ=), never the machine's zone, which replicas need
	// not share.
	Zone    string
	Kind    string
	Payload []byte
	Missed  Missed
	// CatchUp bounds the missed runs that MissedRunAll runs on return:
	// the latest CatchUp of them; 0 means DefaultCatchUp.
	CatchUp int
	Overlap Overlap
	// Grace is how late a run may start and still be on time; a run
	// later than that is missed, and Missed decides. 0 means
	// DefaultGrace.
	Grace time.Duration
}

// Missed is a policy for the runs whose instants passed while no replica
// could run them: every replica down, Redis down, the schedule paused.
type Missed uint8

const (
	// MissedRunLast runs the latest missed run, late, and drops the
	// others (the default): after downtime the job runs once, as a
	// BullMQ repeatable job does, and as a Temporal schedule's catch-up
	// does under its default overlap policy.
	MissedRunLast Missed = iota
	// MissedSkip drops every missed run, as asynq's scheduler and River's
	// periodic jobs do: the schedule goes on at its next instant.
	MissedSkip
	// MissedRunAll runs every missed run, oldest first, up to CatchUp of
	// them (the latest), as Temporal does within its catch-up window.
	// Missed runs run whatever the overlap policy, one after another
	// under OverlapSkip and OverlapDelay.
	MissedRunAll
)

// String returns "run last", "skip" or "run all".
func (m Missed) String() string {
	switch m {
	case MissedRunLast:
		return "run last"
	case MissedSkip:
		return "skip"
	case MissedRunAll:
		return "run all"
	}
	return fmt.Sprintf("Missed(%d)", uint8(m))
}

// Overlap is a policy for a run whose instant comes while the run before
// it still runs, or waits for a retry.
type Overlap uint8

const (
	// OverlapSkip drops the new run (the default, as in Temporal and
	// package cron): one run at a time, and a slow run delays nothing.
	OverlapSkip Overlap = iota
	// OverlapDelay starts the new run when the one before it returns nil
	// (Temporal's BufferAll): runs one at a time, late, none dropped.
	// A run before it that goes dead, or whose replica died with its ack,
	// lets it go at the next poll (WithPoll).
	OverlapDelay
	// OverlapAllow starts the new run beside the running one.
	OverlapAllow
)

// String returns "skip", "delay" or "allow".
func (o Overlap) String() string {
	switch o {
	case OverlapSkip:
		return "skip"
	case OverlapDelay:
		return "delay"
	case OverlapAllow:
		return "allow"
	}
	return fmt.Sprintf("Overlap(%d)", uint8(o))
}

const (
	// DefaultCatchUp is how many missed runs MissedRunAll runs at most,
	// as package cron's MaxCatchUp.
	DefaultCatchUp = 100
	// DefaultGrace is how late a run may start and still be on time, as
	// package cron's DefaultGrace.
	DefaultGrace = time.Second
	// MaxScheduleNameLen bounds a schedule's name, so that its runs' IDs
	// stay within MaxIDLen.
	MaxScheduleNameLen = 900
)

// Schedules are a Queue's periodic schedules (Queue.Schedules): safe for
// concurrent use, as the Queue is. Its zero value is not usable.
type Schedules struct{ q *Queue }

// Schedules returns the Queue's periodic schedules. A Queue with
// handlers makes and runs their runs; any Queue on the same Redis and
// name may change them. It costs nothing.
func (q *Queue) Schedules() *Schedules { return &Schedules{q} }

// A ScheduleInfo is a schedule as Get and List read it.
type ScheduleInfo struct {
	Periodic
	Paused bool
	// Next is the instant of the next run to come: its job exists, unless
	// the schedule is paused.
	Next time.Time
	// LastRun is the instant of the latest run started, LastStart when it
	// started (Redis's clock); zero if none.
	LastRun, LastStart time.Time
	Counts             ScheduleCounts
}

// ScheduleCounts are a schedule's counts, kept in Redis across replicas
// and restarts.
type ScheduleCounts struct {
	Runs    int64 // runs started (attempts after the first included)
	Missed  int64 // instants dropped by the missed policy
	Skipped int64 // runs dropped by OverlapSkip
	Delayed int64 // runs delayed by OverlapDelay
	Waiting int64 // runs delayed now
}

// RunID returns the ID of the job of schedule name's run for the instant
// at: "sched:" + name + ":" + at in UTC, RFC 3339 with its fraction of a
// second if any ("sched:report:2026-03-09T13:00:00Z"). It costs one
// formatting of at.
func RunID(name string, at time.Time) string {
	return runPrefix + name + ":" + at.UTC().Format(time.RFC3339Nano)
}

// runPrefix starts the ID of every run; delayedSuffix ends the ID of a
// run that OverlapDelay let go after its first job was acked unrun.
const (
	runPrefix     = "sched:"
	delayedSuffix = "+d"
)

// ParseRunID returns the schedule and the instant of a run's job ID, and
// false for the ID of any other job. It costs at most three parses of a
// time.
func ParseRunID(id string) (name string, at time.Time, ok bool) {
	name, at, _, ok = parseRun(id)
	return name, at, ok
}

// parseRun is ParseRunID, and reports whether id is a delayed run's.
func parseRun(id string) (name string, at time.Time, delayed, ok bool) {
	rest, ok := strings.CutPrefix(id, runPrefix)
	if !ok {
		return "", time.Time{}, false, false
	}
	rest, delayed = strings.CutSuffix(rest, delayedSuffix)
	// The instant holds two colons; the name may hold more.
	for i, n := len(rest), 0; n < 3; n++ {
		if i = strings.LastIndexByte(rest[:i], ':'); i < 0 {
			break
		}
		if t, err := time.Parse(time.RFC3339Nano, rest[i+1:]); err == nil {
			return rest[:i], t, delayed, true
		}
	}
	return "", time.Time{}, false, false
}

// runShardKey returns what a job's shard is hashed from: for a run, its
// schedule's key, so that a schedule and its runs share a shard.
func runShardKey(id string) string {
	if name, _, _, ok := parseRun(id); ok {
		return runPrefix + name
	}
	return id
}

// A def is a schedule's definition as Redis holds it (the def field):
// what Periodic says but its name, kind and payload, which are the
// blob's. Its JSON is compared whole: Upsert of the same definition
// changes nothing.
type def struct {
	Spec    string        `json:"spec"`
	Zone    string        `json:"zone,omitempty"`
	Missed  Missed        `json:"missed"`
	CatchUp int           `json:"catchup"`
	Overlap Overlap       `json:"overlap"`
	Grace   time.Duration `json:"grace"`
}

// A compiled is a schedule's definition with its spec parsed, as the
// cache holds it at a version.
type compiled struct {
	def
	ver   int64
	sched cron.Schedule
}

// compile checks p and returns its definition, its blob and its parsed
// spec; op names the call in the error.
func (q *Queue) compile(op string, p Periodic) (compiled, []byte, error) {
	fail := func(format string, args ...any) (compiled, []byte, error) {
		return compiled{}, nil, fmt.Errorf("durable: %s %q: "+format, append([]any{op, p.Name}, args...)...)
	}
	switch {
	case p.Name == "":
		return fail("empty schedule name")
	case len(p.Name) > MaxScheduleNameLen:
		return fail("name of %d bytes, over MaxScheduleNameLen (%d)", len(p.Name), MaxScheduleNameLen)
	case p.Kind == "":
		return fail("empty kind")
	case len(p.Payload) > MaxPayload:
		return fail("payload of %d bytes, over MaxPayload (%d)", len(p.Payload), MaxPayload)
	case p.Missed > MissedRunAll:
		return fail("unknown missed policy %v; use MissedRunLast, MissedSkip or MissedRunAll", p.Missed)
	case p.Overlap > OverlapAllow:
		return fail("unknown overlap policy %v; use OverlapSkip, OverlapDelay or OverlapAllow", p.Overlap)
	case p.CatchUp < 0:
		return fail("negative CatchUp %d", p.CatchUp)
	case p.Grace < 0:
		return fail("negative Grace %v", p.Grace)
	case strings.HasPrefix(strings.TrimSpace(p.Spec), "@at"):
		return fail("spec %q: a single run is a job: use Schedule", p.Spec)
	}
	if err := q.checkKind(op, p.Name, p.Kind); err != nil {
		return compiled{}, nil, err
	}
	d := def{Spec: p.Spec, Zone: p.Zone, Missed: p.Missed, CatchUp: p.CatchUp, Overlap: p.Overlap, Grace: p.Grace}
	if d.CatchUp == 0 {
		d.CatchUp = DefaultCatchUp
	}
	if d.Grace == 0 {
		d.Grace = DefaultGrace
	}
	c, err := d.compile()
	if err != nil {
		return fail("%w", err)
	}
	blob := make([]byte, 0, len(p.Kind)+1+len(p.Payload))
	blob = append(append(append(blob, p.Kind...), 0), p.Payload...)
	return c, blob, nil
}

// compile parses d's spec in its zone.
func (d def) compile() (compiled, error) {
	loc := time.UTC
	if d.Zone != "" {
		var err error
		if loc, err = time.LoadLocation(d.Zone); err != nil {
			return compiled{}, fmt.Errorf("%w %q: %v", cron.ErrZone, d.Zone, err)
		}
	}
	if s := strings.TrimSpace(d.Spec); strings.HasPrefix(s, "CRON_TZ=") || strings.HasPrefix(s, "TZ=") {
		if d.Zone != "" {
			return compiled{}, fmt.Errorf("%w %q: it names a time zone and Zone is %q", cron.ErrSpec, d.Spec, d.Zone)
		}
		loc = nil
	}
	s, err := cron.Parse(d.Spec, loc)
	if err != nil {
		return compiled{}, err
	}
	return compiled{def: d, sched: cron.OnEpochGrid(s)}, nil
}

// encode returns d as Redis holds it.
func (d def) encode() string {
	b, _ := json.Marshal(d) // plain fields: never fails
	return string(b)
}

// decodeSched returns the Periodic and the compiled definition of a
// record.
func decodeSched(s store.Sched) (Periodic, compiled, error) {
	kind, payload := split(s.Blob)
	p := Periodic{Name: s.Name, Kind: kind, Payload: payload}
	var d def
	if err := json.Unmarshal([]byte(s.Def), &d); err != nil {
		return p, compiled{}, fmt.Errorf("durable: schedule %q: its definition in Redis does not decode: %v", s.Name, err)
	}
	p.Spec, p.Zone, p.Missed, p.CatchUp, p.Overlap, p.Grace = d.Spec, d.Zone, d.Missed, d.CatchUp, d.Overlap, d.Grace
	c, err := d.compile()
	if err != nil {
		return p, compiled{}, fmt.Errorf("durable: schedule %q: %w", s.Name, err)
	}
	c.ver = s.Ver
	return p, c, nil
}

// maxScan bounds how many missed instants plan counts one Next at a
// time (package cron's bound too): two years of a spec that runs every
// minute. Past it, the rest go uncounted.
const maxScan = 1 << 20

// plan returns the run to make after the instant after, at now (Redis's
// clock): the first instant not yet missed (later than now less the
// grace), or under the missed policy one of the missed ones, and how
// many instants between after and it the policy drops. It returns the
// zero time for a spec with no instant after after. It costs a Next per
// missed instant, up to maxScan.
func (c compiled) plan(after, now time.Time) (time.Time, int) {
	cut := now.Add(-c.Grace)
	keep := 1
	if c.Missed == MissedRunAll {
		keep = c.CatchUp
	}
	ring := make([]time.Time, 0, min(keep, 64)) // the latest keep missed instants, oldest first
	n := 0
	t := c.sched.Next(after)
	for ; !t.IsZero() && !t.After(cut); t = c.sched.Next(t) {
		if n++; n > maxScan {
			t = c.sched.Next(cut)
			break
		}
		if len(ring) == keep {
			ring = append(ring[:0], ring[1:]...)
		}
		ring = append(ring, t)
	}
	if len(ring) == 0 || c.Missed == MissedSkip {
		return t, n
	}
	return ring[0], n - len(ring)
}

// Upsert adds the schedule p, or changes the one of its name to p, and
// reports whether it changed anything. Upserting the same p again (from
// every replica at start-up) changes nothing. A change takes effect from
// the next run: the pending one made by the old definition is dropped,
// unless a worker holds it already (within 2 s of its instant). The
// first run is the first instant after now on Redis's clock. It returns
// an error for an invalid p (wrapping cron.ErrSpec or cron.ErrZone for
// its spec or zone), or a failed call. It costs one round trip, two if
// it changes anything.
func (s *Schedules) Upsert(ctx context.Context, p Periodic) (bool, error) {
	q := s.q
	if err := q.usable(ctx, "Upsert", p.Name); err != nil {
		return false, err
	}
	c, blob, err := q.compile("Upsert", p)
	if err != nil {
		return false, err
	}
	enc := c.encode()
	k, br := q.shardOf(runPrefix + p.Name)
	got, exists, now, err := q.getSched(ctx, k, br, p.Name)
	if err != nil {
		return false, fmt.Errorf("durable: Upsert %q: %w", p.Name, err)
	}
	if exists && got.Def == enc && got.Blob == string(blob) {
		return false, nil
	}
	first := c.sched.Next(time.UnixMicro(now))
	if first.IsZero() || first.After(maxDue) {
		return false, fmt.Errorf("durable: Upsert %q: spec %q has no instant after %v", p.Name, p.Spec, time.UnixMicro(now).UTC())
	}
	var up store.Upserted
	err = q.doWrite(ctx, br, "sched-upsert", func(ctx context.Context) (err error) {
		up, err = q.st.UpsertSched(ctx, k, p.Name, enc, blob, ceilMicro(first), RunID(p.Name, first), upsertAhead(got, now))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("durable: Upsert %q: %w", p.Name, err)
	}
	return up != store.Unchanged, nil
}

// upsertAhead returns the runs that Upsert drops: those made ahead by
// the old definition, up to its head.
func upsertAhead(got store.Sched, now int64) []store.Run {
	runs, _ := aheadRuns(got, now, got.Head)
	return runs
}

// Remove deletes the schedule name and the runs it made ahead that no
// worker holds yet, and reports whether the schedule existed. A run that
// a worker holds (within 2 s of its instant) finds the schedule gone and
// does not run; one that has started goes on. It costs two round trips,
// two more each time claims move the head past what it read (up to three
// tries).
func (s *Schedules) Remove(ctx context.Context, name string) (bool, error) {
	return s.q.schedCall(ctx, "Remove", "sched-remove", name, s.q.st.RemoveSched)
}

// Pause stops the schedule name from running: the runs it made ahead
// that no worker holds yet are dropped, and no run is made until Resume;
// a run a worker holds already is dropped at its instant, counted as
// missed. It reports whether the schedule exists. It costs two round
// trips, as Remove does.
func (s *Schedules) Pause(ctx context.Context, name string) (bool, error) {
	return s.q.schedCall(ctx, "Pause", "sched-pause", name, s.q.st.PauseSched)
}

// schedCall makes a change of a schedule's, named op for the caller: it
// reads the schedule, then calls f with the runs it may have made ahead
// and the last instant they cover. The script refuses if the head moved
// past that (claims made more runs in between): then it reads again.
func (q *Queue) schedCall(ctx context.Context, op, script, name string,
	f func(ctx context.Context, k store.Keys, name string, ahead []store.Run, upto int64) (store.Dropped, error)) (bool, error) {
	if err := q.usable(ctx, op, name); err != nil {
		return false, err
	}
	k, br := q.shardOf(runPrefix + name)
	for range 3 {
		rec, exists, now, err := q.getSched(ctx, k, br, name)
		if err != nil || !exists {
			return false, wrapOp(op, name, err)
		}
		if testHookSchedCall != nil {
			testHookSchedCall(k, rec)
		}
		// Claims go on between the two calls, each making a run up to the
		// horizon ahead: cover 2 s more than that, so that they seldom
		// move the head past the runs given.
		runs, upto := aheadRuns(rec, now, max(rec.Head, now+2*store.Horizon))
		var r store.Dropped
		err = q.doWrite(ctx, br, script, func(ctx context.Context) (err error) {
			r, err = f(ctx, k, name, runs, upto)
			return err
		})
		if err != nil || r != store.HeadPast {
			return r == store.DroppedAhead, wrapOp(op, name, err)
		}
	}
	return true, fmt.Errorf("durable: %s %q: the schedule kept changing", op, name)
}

// testHookSchedCall, if set, is called by schedCall between its read and
// its change: a test makes claims race the change there.
var testHookSchedCall func(k store.Keys, rec store.Sched)

// maxAhead bounds the runs made ahead that a change drops: the horizon
// (2 s) of runs of "@every 1ms".
const maxAhead = 2048

// aheadRuns returns the runs that schedule rec may have made ahead, by
// its definition, earliest first: its instants after the latest run
// started (or the horizon before now) up to upto µs, and the last
// instant they cover: upto, or the last run's if maxAhead cut them. A
// run made ahead has its instant within the horizon of a claim, so none
// is earlier. It costs a Next per run, up to maxAhead.
func aheadRuns(rec store.Sched, now, upto int64) ([]store.Run, int64) {
	_, c, err := decodeSched(rec)
	if err != nil || rec.HeadID == "" {
		return nil, upto
	}
	from := time.UnixMicro(max(rec.Last, min(now, rec.Head)-store.Horizon))
	var runs []store.Run
	for t := c.sched.Next(from); !t.IsZero() && ceilMicro(t) <= upto; t = c.sched.Next(t) {
		if len(runs) == maxAhead {
			return runs, runs[len(runs)-1].At
		}
		runs = append(runs, store.Run{At: ceilMicro(t), ID: RunID(rec.Name, t)})
	}
	return runs, upto
}

// Resume lets the paused schedule name run again: the runs it missed
// while paused are decided by its missed policy, as after downtime. It
// reports whether the schedule exists. It costs two round trips.
func (s *Schedules) Resume(ctx context.Context, name string) (bool, error) {
	q := s.q
	if err := q.usable(ctx, "Resume", name); err != nil {
		return false, err
	}
	k, br := q.shardOf(runPrefix + name)
	for range 3 { // a change made between the two calls: read it again
		rec, exists, now, err := q.getSched(ctx, k, br, name)
		if err != nil || !exists || !rec.Paused {
			return exists, wrapOp("Resume", name, err)
		}
		_, c, err := decodeSched(rec)
		if err != nil {
			return true, err
		}
		a := store.AdvanceArgs{Name: name, From: rec.HeadID, To: rec.Head, ToID: rec.HeadID, Ver: rec.Ver, Resuming: true}
		if !rec.HeadExists {
			// The head was dropped by Pause: plan from just before it.
			next, missed := c.plan(time.UnixMicro(rec.Head).Add(-time.Nanosecond), time.UnixMicro(now))
			if next.IsZero() {
				return true, fmt.Errorf("durable: Resume %q: spec %q has no instant left", name, c.Spec)
			}
			a.To, a.ToID, a.Missed = ceilMicro(next), RunID(name, next), missed
		}
		var r store.Advanced
		err = q.doWrite(ctx, br, "sched-advance", func(ctx context.Context) (err error) {
			r, err = q.st.AdvanceSched(ctx, k, a)
			return err
		})
		if err != nil || r != store.StaleVer {
			return r != store.NoSched, wrapOp("Resume", name, err)
		}
	}
	return true, fmt.Errorf("durable: Resume %q: the schedule kept changing", name)
}

// getSched reads the schedule name of shard k, and the server's clock
// in µs: one round trip.
func (q *Queue) getSched(ctx context.Context, k store.Keys, br *breaker, name string) (rec store.Sched, exists bool, now int64, err error) {
	err = q.doOn(ctx, br, "sched-get", func(ctx context.Context) (err error) {
		rec, exists, now, err = q.st.GetSched(ctx, k, name)
		return err
	})
	return rec, exists, now, err
}

// wrapOp returns err wrapped with the call and the schedule, or nil.
func wrapOp(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("durable: %s %q: %w", op, name, err)
}

// Get returns the schedule name, and false if there is none. It costs
// one round trip.
func (s *Schedules) Get(ctx context.Context, name string) (ScheduleInfo, bool, error) {
	q := s.q
	if err := q.usable(ctx, "Get", name); err != nil {
		return ScheduleInfo{}, false, err
	}
	k, br := q.shardOf(runPrefix + name)
	rec, exists, _, err := q.getSched(ctx, k, br, name)
	if err != nil || !exists {
		return ScheduleInfo{}, false, wrapOp("Get", name, err)
	}
	info, err := infoOf(rec)
	return info, true, err
}

// List returns every schedule, each shard's by their next instants. It
// costs a round trip per shard and per 500 schedules.
func (s *Schedules) List(ctx context.Context) ([]ScheduleInfo, error) {
	q := s.q
	if err := q.usable(ctx, "List", "schedules"); err != nil {
		return nil, err
	}
	const page = 500
	var out []ScheduleInfo
	err := q.eachShard(func(k store.Keys, br *breaker) error {
		for from := 0; ; from += page {
			var recs []store.Sched
			err := q.doOn(ctx, br, "sched-list", func(ctx context.Context) (err error) {
				recs, _, err = q.st.ListScheds(ctx, k, from, page)
				return err
			})
			if err != nil {
				return fmt.Errorf("durable: List schedules: %w", err)
			}
			for _, r := range recs {
				info, err := infoOf(r)
				if err != nil {
					return err
				}
				out = append(out, info)
			}
			if len(recs) < page {
				return nil
			}
		}
	})
	return out, err
}

// infoOf returns a record as a ScheduleInfo.
func infoOf(r store.Sched) (ScheduleInfo, error) {
	p, _, err := decodeSched(r)
	info := ScheduleInfo{Periodic: p, Paused: r.Paused, Next: time.UnixMicro(r.Head).UTC(),
		Counts: ScheduleCounts{Runs: r.Runs, Missed: r.Missed, Skipped: r.Skipped, Delayed: r.Delayed, Waiting: r.Waiting}}
	if r.LastID != "" {
		info.LastRun, info.LastStart = time.UnixMicro(r.Last).UTC(), time.UnixMicro(r.LastAt).UTC()
	}
	return info, err
}
