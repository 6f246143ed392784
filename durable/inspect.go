package durable

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// This file is the queue as its operators see it: figures of the whole
// queue read from Redis, the jobs of a state a page at a time, and the
// dead jobs retried or deleted in bulk. Its scripts read the layout at
// the top of the store's keys.go and never walk a whole key: each call is one
// round trip of O(log n) plus a bounded stretch of jobs.

// MaxList is the most jobs one List call returns.
const MaxList = 1000

// Counts are figures of the whole queue (every replica's jobs), read
// from Redis at one instant of its clock. Stats, by contrast, count one
// replica's attempts since New.
type Counts struct {
	// Pending counts the jobs that are neither running nor dead: waiting
	// for their due time or a retry's backoff, leased ahead of their due
	// time, due and not yet claimed, or waiting for their kind's Resume.
	Pending int64
	// Due counts the pending jobs a worker may start now and none has:
	// due at or before At and not held by a live lease (a lease that ran
	// out, its worker dead, counts here), or parked by a paused kind.
	Due int64
	// Running counts the jobs whose handler runs: a live worker holds
	// them for a due time at or before At. It is exact, not a bound: the
	// store keeps the jobs each worker holds in a set of its own
	// ({name}:lease:<worker>), scored by their due times.
	Running int64
	// RunningAtLeast is always false. It reported that Running was a
	// lower bound, when Counts found the running jobs by walking those
	// claimable within a lease; kept so that programs that read it
	// compile.
	RunningAtLeast bool
	// Dead counts the jobs whose last attempt failed.
	Dead int64
	// Lateness is how long the earliest of the Due jobs has been due, on
	// Redis's clock: 0 if none is due. It grows while no worker is live,
	// the workers cannot keep up, or a kind is paused.
	Lateness time.Duration
	// At is Redis's clock when it read the figures.
	At time.Time
}

// Counts returns the queue-wide figures, over every shard (WithShards).
// Running is exact whatever the workers' lease (docs/durable.md says
// when a worker that died or lost a lease stops counting); leases taken
// before the store kept the workers' sets are not counted until their
// attempts end. It costs one round trip a shard, O(log n · live workers
// + paused kinds).
func (q *Queue) Counts(ctx context.Context) (Counts, error) {
	if err := q.checkOp(ctx, "Counts", ""); err != nil {
		return Counts{}, err
	}
	var c Counts
	for i, k := range q.shards {
		var v store.Counted
		err := q.doOn(ctx, q.brs[i], "counts", func(ctx context.Context) (err error) {
			v, err = q.st.Counts(ctx, k)
			return err
		})
		if err != nil {
			return Counts{}, fmt.Errorf("durable: Counts: %w", err)
		}
		if i == 0 {
			c.At = time.UnixMicro(v.Now)
		}
		c.Running += v.Running
		c.Dead += v.Dead
		c.Due += v.Due
		c.Pending += max(v.Jobs-v.Running-v.Dead, 0)
		if v.Oldest >= 0 {
			c.Lateness = max(c.Lateness, time.Duration(max(v.Now-v.Oldest, 0))*time.Microsecond)
		}
	}
	return c, nil
}

// List returns up to limit jobs in state (Pending, Running or Dead),
// starting at cursor ("" for the first page), and the cursor of the next
// page: "" once there is none. Pending jobs come by when they are next
// claimable (due time, end of backoff; for one leased ahead, its lease's
// end), then ID, then the jobs parked by a paused kind, kind by kind;
// running jobs by ID, each with its lease's end as Due; dead jobs in no
// set order. A pending or dead page reads a bounded stretch of the
// store, so it may hold fewer than limit jobs (none, even) while the next
// cursor is not "". A job that changes state between pages may be
// missed or returned twice. A queue of several shards (WithShards) is
// listed shard by shard. It returns an error for a limit outside [1,
// MaxList] or a bad state, and one wrapping ErrCursor for a bad cursor.
// It costs one round trip: O(log² n) plus the stretch read (at most
// 4*limit+256 jobs); for running jobs, O(L log L) for L live leases.
func (q *Queue) List(ctx context.Context, state State, cursor string, limit int) ([]Info, string, error) {
	if err := q.checkOp(ctx, "List", ""); err != nil {
		return nil, "", err
	}
	if limit < 1 || limit > MaxList {
		return nil, "", fmt.Errorf("durable: List: limit %d not in [1, %d]", limit, MaxList)
	}
	if state != Pending && state != Running && state != Dead {
		return nil, "", fmt.Errorf("durable: List: no such state %v", state)
	}
	if len(q.shards) == 1 {
		return q.listOn(ctx, 0, state, cursor, limit)
	}
	// Shard by shard: the cursor is the shard's index, "/", and the
	// cursor within it.
	i, inner := 0, ""
	if cursor != "" {
		s, rest, ok := strings.Cut(cursor, "/")
		n, err := strconv.Atoi(s)
		if !ok || err != nil || n < 0 || n >= len(q.shards) {
			return nil, "", &cursorError{cursor, state}
		}
		i, inner = n, rest
	}
	out, next, err := q.listOn(ctx, i, state, inner, limit)
	switch {
	case err != nil:
		return nil, "", err
	case next != "":
		next = strconv.Itoa(i) + "/" + next
	case i+1 < len(q.shards):
		next = strconv.Itoa(i+1) + "/"
	}
	return out, next, nil
}

// listOn is List on shard i, with a cursor within it.
func (q *Queue) listOn(ctx context.Context, i int, state State, cursor string, limit int) ([]Info, string, error) {
	switch state {
	case Dead:
		return q.listDead(ctx, i, cursor, limit)
	case Running:
		return q.listRunning(ctx, i, cursor, limit)
	}
	return q.listDue(ctx, i, state, cursor, limit)
}

// ErrCursor is wrapped by List's error for a cursor that no List call
// returned for the state asked for.
var ErrCursor = errors.New("durable: List: bad cursor")

// cursorError is List's error for a bad cursor: it names the cursor and
// the state, and wraps ErrCursor.
type cursorError struct {
	cursor string
	state  State
}

func (e *cursorError) Error() string {
	return fmt.Sprintf("durable: List: bad cursor %.60q for state %v", e.cursor, e.state)
}

func (e *cursorError) Is(target error) bool { return target == ErrCursor }

// listRunning lists the live leases by ID, from cursor: "" or "id:" and
// the hex of the last ID of the page before.
func (q *Queue) listRunning(ctx context.Context, shard int, cursor string, limit int) ([]Info, string, error) {
	after, more := "", cursor != ""
	if more {
		h, ok := strings.CutPrefix(cursor, "id:")
		b, err := hex.DecodeString(h)
		if !ok || err != nil || len(b) == 0 {
			return nil, "", &cursorError{cursor, Running}
		}
		after = string(b)
	}
	var v store.ListedRunning
	err := q.doOn(ctx, q.brs[shard], "listRunning", func(ctx context.Context) (err error) {
		v, err = q.st.ListRunning(ctx, q.shards[shard], after, more, limit)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("durable: List: %w", err)
	}
	next := ""
	if v.Next != "" {
		next = "id:" + hex.EncodeToString([]byte(v.Next))
	}
	var out []Info
	for _, j := range v.Jobs {
		info := Info{Job: Job{ID: j.ID, Due: time.UnixMicro(j.Score)}, State: Running}
		info.Kind, info.Payload = split(j.Blob)
		info.Attempt, info.Worker = j.Run.Attempt, j.Run.Worker
		out = append(out, info)
	}
	return out, next, nil
}

// listDue walks :due, then the park sets, from cursor: "set:score:id",
// set "" for :due or the hex of a park set's kind.
func (q *Queue) listDue(ctx context.Context, shard int, state State, cursor string, limit int) ([]Info, string, error) {
	k := q.shards[shard]
	set, score, id := "", "", ""
	if cursor != "" {
		var ok1, ok2 bool
		var rest string
		set, rest, ok1 = strings.Cut(cursor, ":")
		score, id, ok2 = strings.Cut(rest, ":")
		_, err1 := strconv.ParseFloat(score, 64)
		_, err2 := hex.DecodeString(set)
		if !ok1 || !ok2 || err1 != nil || err2 != nil || id == "" {
			return nil, "", &cursorError{cursor, state}
		}
	}
	var v store.ListedDue
	err := q.doOn(ctx, q.brs[shard], "listDue", func(ctx context.Context) (err error) {
		v, err = q.st.ListDue(ctx, k, store.ListDueArgs{Running: state == Running, Limit: limit, Budget: 4*limit + 256, Set: set, Score: score, ID: id})
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("durable: List: %w", err)
	}
	next := ""
	if v.Next.ID != "" {
		next = v.Next.Set + ":" + v.Next.Score + ":" + v.Next.ID
	}
	var out []Info
	for _, j := range v.Jobs {
		info := Info{Job: Job{ID: j.ID, Due: time.UnixMicro(j.Score)}, State: state}
		info.Kind, info.Payload = split(j.Blob)
		info.Attempt, info.Worker = j.Run.Attempt, j.Run.Worker
		out = append(out, info)
	}
	return out, next, nil
}

// listDead scans :dead from cursor ("" or "hscan-cursor:skip").
func (q *Queue) listDead(ctx context.Context, shard int, cursor string, limit int) ([]Info, string, error) {
	k := q.shards[shard]
	c, skip := "0", int64(0)
	if cursor != "" {
		sk := ""
		var ok bool
		c, sk, ok = strings.Cut(cursor, ":")
		_, err1 := strconv.ParseUint(c, 10, 64)
		n, err2 := strconv.ParseUint(sk, 10, 32)
		skip = int64(n)
		if !ok || err1 != nil || err2 != nil {
			return nil, "", &cursorError{cursor, Dead}
		}
	}
	var v store.ListedDead
	err := q.doOn(ctx, q.brs[shard], "listDead", func(ctx context.Context) (err error) {
		v, err = q.st.ListDead(ctx, k, c, skip, limit)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("durable: List: %w", err)
	}
	next := ""
	if v.Cursor != "" {
		next = v.Cursor + ":" + strconv.FormatInt(v.Skip, 10)
	}
	var out []Info
	for _, j := range v.Jobs {
		info := Info{Job: Job{ID: j.ID}, State: Dead, Err: j.Err}
		info.Kind, info.Payload = split(j.Blob)
		info.Attempt = j.Run.Attempt
		out = append(out, info)
	}
	return out, next, nil
}

// RetryDead makes each dead job among ids due now, its attempts
// forgotten, as Reschedule does, and returns how many it moved. It
// leaves an ID that is not dead (pending, running, gone) as it is, so a
// retry sent twice runs a job once. It costs one round trip a shard the
// IDs fall in, O(len(ids)).
func (q *Queue) RetryDead(ctx context.Context, ids ...string) (int, error) {
	return q.dead(ctx, "RetryDead", "retry", ids)
}

// DeleteDead deletes each dead job among ids, and returns how many it
// deleted. It leaves an ID that is not dead as it is. It costs one round
// trip a shard the IDs fall in, O(len(ids)).
func (q *Queue) DeleteDead(ctx context.Context, ids ...string) (int, error) {
	return q.dead(ctx, "DeleteDead", "delete", ids)
}

func (q *Queue) dead(ctx context.Context, op, verb string, ids []string) (int, error) {
	if err := q.checkOp(ctx, op, ""); err != nil {
		return 0, err
	}
	if len(ids) > MaxList {
		return 0, fmt.Errorf("durable: %s: %d IDs, over MaxList (%d) a call", op, len(ids), MaxList)
	}
	// The IDs by shard, each once, in the order given.
	byShard := make([][]string, len(q.shards))
	var order []int
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if err := checkID(op, id); err != nil {
			return 0, err
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		i := q.shardIndex(id)
		if byShard[i] == nil {
			order = append(order, i)
		}
		byShard[i] = append(byShard[i], id)
	}
	done := 0
	for _, i := range order {
		var v store.Swept
		err := q.doOn(ctx, q.brs[i], "dead", func(ctx context.Context) (err error) {
			v, err = q.st.Dead(ctx, q.shards[i], verb == "retry", byShard[i])
			return err
		})
		if err != nil {
			return done, fmt.Errorf("durable: %s: %w", op, err)
		}
		done += int(v.Done)
	}
	return done, nil
}

// RetryAllDead makes every dead job of kind (of every kind if kind is
// "") due now, its attempts forgotten, and returns how many it moved. It
// sweeps the dead jobs about 256 a round trip, so Redis never blocks on
// a long sweep; a job that dies during the sweep may be left dead. It
// costs O(dead jobs) in all.
func (q *Queue) RetryAllDead(ctx context.Context, kind string) (int, error) {
	return q.sweepDead(ctx, "RetryAllDead", "retry", kind)
}

// DeleteAllDead deletes every dead job of kind (of every kind if kind is
// "") and returns how many it deleted, about 256 a round trip. It costs
// O(dead jobs) in all.
func (q *Queue) DeleteAllDead(ctx context.Context, kind string) (int, error) {
	return q.sweepDead(ctx, "DeleteAllDead", "delete", kind)
}

func (q *Queue) sweepDead(ctx context.Context, op, verb, kind string) (int, error) {
	if err := q.checkOp(ctx, op, ""); err != nil {
		return 0, err
	}
	if len(kind) > MaxKindLen || strings.IndexByte(kind, 0) >= 0 {
		return 0, fmt.Errorf("durable: %s: kind %.40q is over %d bytes or holds a NUL", op, kind, MaxKindLen)
	}
	total := 0
	for i, k := range q.shards {
		for cursor := "0"; ; {
			var v store.Swept
			err := q.doOn(ctx, q.brs[i], "dead", func(ctx context.Context) (err error) {
				v, err = q.st.DeadSweep(ctx, k, verb == "retry", kind, cursor)
				return err
			})
			if err != nil {
				return total, fmt.Errorf("durable: %s: %w", op, err)
			}
			total += int(v.Done)
			if cursor = v.Cursor; cursor == "0" || cursor == "" {
				break
			}
		}
	}
	return total, nil
}

// Name returns the queue's name (WithName). It costs O(1).
func (q *Queue) Name() string {
	if q == nil || q.rdb == nil {
		panic("durable: Name on a Queue not made by New")
	}
	return q.cfg.name
}

// ParseState returns the State named s ("pending", "running", "dead"),
// as State.String writes it. It costs O(1).
func ParseState(s string) (State, error) {
	for _, st := range []State{Pending, Running, Dead} {
		if s == st.String() {
			return st, nil
		}
	}
	return 0, fmt.Errorf("durable: no state %q (pending, running, dead)", s)
}
