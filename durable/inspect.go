package durable

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// This file is the queue as its operators see it: figures of the whole
// queue read from Redis, the jobs of a state a page at a time, and the
// dead jobs retried or deleted in bulk. Its scripts read the layout
// documented in scripts.go and never walk a whole key: each call costs
// O(log n) plus the jobs it returns or touches, bounded per round trip.

// MaxList is the most jobs one List call returns.
const MaxList = 1000

// Counts are figures of the whole queue (every replica's jobs), read
// from Redis at one instant of its clock. Stats, by contrast, count one
// replica's attempts since New.
type Counts struct {
	// Pending counts the jobs waiting for their due time or the backoff
	// of their retry, and those due and not yet claimed.
	Pending int64
	// Due counts the jobs a worker may claim now: pending ones due at or
	// before At, and running ones whose lease has run out (their worker
	// died or lost Redis). Jobs of paused kinds are among them.
	Due int64
	// Running counts the jobs a worker holds the lease of (or held, until
	// another claims them after the lease ran out).
	Running int64
	// Dead counts the jobs whose last attempt failed.
	Dead int64
	// Lateness is how long the earliest of the Due jobs has been due,
	// on Redis's clock: 0 if none is due.
	Lateness time.Duration
	// At is Redis's clock when it read the figures.
	At time.Time
}

// Counts returns the queue-wide figures in one round trip, O(log n) in
// the jobs held: a script reads each figure with one command (HLEN,
// ZCOUNT, ZRANGE of the first score).
func (q *Queue) Counts(ctx context.Context) (Counts, error) {
	if err := q.checkQueue("Counts"); err != nil {
		return Counts{}, err
	}
	v, err := countsScript.Run(ctx, q.rdb, q.keys).Int64Slice()
	if err != nil {
		return Counts{}, fmt.Errorf("durable: Counts: %w", err)
	}
	// v: now, jobs, running, dead, due, oldest score (-1 if none due)
	c := Counts{At: time.UnixMicro(v[0]), Running: v[2], Dead: v[3], Due: v[4]}
	c.Pending = max(v[1]-v[2]-v[3], 0)
	if v[5] >= 0 {
		c.Lateness = time.Duration(max(v[0]-v[5], 0)) * time.Microsecond
	}
	return c, nil
}

// List returns up to limit jobs in state (Pending, Running or Dead),
// starting at cursor ("" for the first page), and the cursor of the next
// page: "" once there is none. Pending and running jobs come by when
// they are next claimable (due time, end of backoff or of lease), then
// ID; dead jobs in no set order. A page may hold fewer than limit jobs
// (none, even) while the next cursor is not "": each call reads a
// bounded stretch of the store. A job that changes state between pages
// may be missed or returned twice. Each call is one round trip, O(log n)
// plus the jobs read. It returns an error for a limit outside [1,
// MaxList], a bad cursor or state.
func (q *Queue) List(ctx context.Context, state State, cursor string, limit int) ([]Info, string, error) {
	if err := q.checkQueue("List"); err != nil {
		return nil, "", err
	}
	if limit < 1 || limit > MaxList {
		return nil, "", fmt.Errorf("durable: List: limit %d not in [1, %d]", limit, MaxList)
	}
	switch state {
	case Pending, Running:
		return q.listDue(ctx, state, cursor, limit)
	case Dead:
		return q.listDead(ctx, cursor, limit)
	}
	return nil, "", fmt.Errorf("durable: List: no such state %v", state)
}

// listDue walks :due from cursor ("score id"), keeping the jobs of
// state.
func (q *Queue) listDue(ctx context.Context, state State, cursor string, limit int) ([]Info, string, error) {
	score, id := "", ""
	if cursor != "" {
		var ok bool
		score, id, ok = strings.Cut(cursor, " ")
		if _, err := strconv.ParseFloat(score, 64); !ok || err != nil || id == "" {
			return nil, "", fmt.Errorf("durable: List: bad cursor %.60q for state %v", cursor, state)
		}
	}
	want := "p"
	if state == Running {
		want = "r"
	}
	v, err := listDueScript.Run(ctx, q.rdb, q.keys, want, limit, 4*limit+256, score, id).Slice()
	if err != nil {
		return nil, "", fmt.Errorf("durable: List: %w", err)
	}
	// v: next score, next id ("" if done), then id, score, run, blob per job
	next := ""
	if s, _ := v[1].(string); s != "" {
		next = v[0].(string) + " " + s
	}
	var out []Info
	for i := 2; i+3 < len(v); i += 4 {
		id, _ := v[i].(string)
		sc, _ := v[i+1].(string)
		run, _ := v[i+2].(string)
		blob, _ := v[i+3].(string)
		info := Info{Job: Job{ID: id, Due: time.UnixMicro(parseScore(sc))}, State: state}
		info.Kind, info.Payload = split(blob)
		a, _, _ := strings.Cut(run, "|")
		info.Attempt, _ = strconv.Atoi(a)
		out = append(out, info)
	}
	return out, next, nil
}

// listDead scans :dead from cursor ("" or "hscan-cursor:skip").
func (q *Queue) listDead(ctx context.Context, cursor string, limit int) ([]Info, string, error) {
	c, skip := "0", "0"
	if cursor != "" {
		var ok bool
		c, skip, ok = strings.Cut(cursor, ":")
		_, err1 := strconv.ParseUint(c, 10, 64)
		_, err2 := strconv.ParseUint(skip, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			return nil, "", fmt.Errorf("durable: List: bad cursor %.60q for state dead", cursor)
		}
	}
	v, err := listDeadScript.Run(ctx, q.rdb, q.keys, c, skip, limit).Slice()
	if err != nil {
		return nil, "", fmt.Errorf("durable: List: %w", err)
	}
	// v: next cursor ("" if done), next skip, then id, run, blob, error per job
	next := ""
	if nc, _ := v[0].(string); nc != "" {
		ns, _ := v[1].(int64)
		next = nc + ":" + strconv.FormatInt(ns, 10)
	}
	var out []Info
	for i := 2; i+3 < len(v); i += 4 {
		id, _ := v[i].(string)
		run, _ := v[i+1].(string)
		blob, _ := v[i+2].(string)
		e, _ := v[i+3].(string)
		info := Info{Job: Job{ID: id}, State: Dead, Err: e}
		info.Kind, info.Payload = split(blob)
		a, _, _ := strings.Cut(run, "|")
		info.Attempt, _ = strconv.Atoi(a)
		out = append(out, info)
	}
	return out, next, nil
}

// RetryDead makes each dead job among ids due now, its attempts
// forgotten, as Reschedule does, and returns how many it moved. It
// leaves an ID that is not dead (pending, running, gone) as it is, so a
// retry sent twice runs a job once. One round trip.
func (q *Queue) RetryDead(ctx context.Context, ids ...string) (int, error) {
	return q.dead(ctx, "RetryDead", "retry", ids)
}

// DeleteDead deletes each dead job among ids, and returns how many it
// deleted. It leaves an ID that is not dead as it is. One round trip.
func (q *Queue) DeleteDead(ctx context.Context, ids ...string) (int, error) {
	return q.dead(ctx, "DeleteDead", "delete", ids)
}

func (q *Queue) dead(ctx context.Context, op, verb string, ids []string) (int, error) {
	if err := q.checkQueue(op); err != nil {
		return 0, err
	}
	if len(ids) > MaxList {
		return 0, fmt.Errorf("durable: %s: %d IDs, over MaxList (%d) a call", op, len(ids), MaxList)
	}
	args := make([]any, 0, 3+len(ids))
	args = append(args, verb, q.channel, "")
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if err := checkID(op, id); err != nil {
			return 0, err
		}
		if !seen[id] {
			seen[id] = true
			args = append(args, id)
		}
	}
	if len(seen) == 0 {
		return 0, nil
	}
	v, err := deadScript.Run(ctx, q.rdb, q.keys, args...).Int64Slice()
	if err != nil {
		return 0, fmt.Errorf("durable: %s: %w", op, err)
	}
	return int(v[1]), nil
}

// RetryAllDead makes every dead job of kind (of every kind if kind is
// "") due now, its attempts forgotten, and returns how many it moved. It
// sweeps the dead jobs a bounded batch a round trip, so it does not
// block Redis however many there are; a job that dies during the sweep
// may be left dead.
func (q *Queue) RetryAllDead(ctx context.Context, kind string) (int, error) {
	return q.sweepDead(ctx, "RetryAllDead", "retry", kind)
}

// DeleteAllDead deletes every dead job of kind (of every kind if kind is
// "") and returns how many it deleted, a bounded batch a round trip.
func (q *Queue) DeleteAllDead(ctx context.Context, kind string) (int, error) {
	return q.sweepDead(ctx, "DeleteAllDead", "delete", kind)
}

func (q *Queue) sweepDead(ctx context.Context, op, verb, kind string) (int, error) {
	if err := q.checkQueue(op); err != nil {
		return 0, err
	}
	total, cursor := 0, "0"
	for {
		v, err := deadScript.Run(ctx, q.rdb, q.keys, verb, q.channel, kind+"\x00", cursor).Slice()
		if err != nil {
			return total, fmt.Errorf("durable: %s: %w", op, err)
		}
		n, _ := v[1].(int64)
		total += int(n)
		if cursor, _ = v[0].(string); cursor == "0" || cursor == "" {
			return total, nil
		}
	}
}

// Name returns the queue's name (WithName).
func (q *Queue) Name() string {
	if q == nil || q.rdb == nil {
		panic("durable: Name on a Queue not made by New")
	}
	return q.cfg.name
}

// checkQueue refuses an operation on a zero or closed Queue.
func (q *Queue) checkQueue(op string) error {
	if q == nil || q.rdb == nil {
		panic(fmt.Sprintf("durable: %s on a Queue not made by New", op))
	}
	q.mu.Lock()
	closed := q.closed
	q.mu.Unlock()
	if closed {
		return fmt.Errorf("durable: %s: %w", op, ErrClosed)
	}
	return nil
}

// checkID refuses an empty or too long ID.
func checkID(op, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("durable: %s: empty ID", op)
	case len(id) > MaxIDLen:
		return fmt.Errorf("durable: %s: ID %.40q... of %d bytes, over MaxIDLen (%d)", op, id, len(id), MaxIDLen)
	}
	return nil
}

// ParseState returns the State named s ("pending", "running", "dead"),
// as State.String writes it.
func ParseState(s string) (State, error) {
	for _, st := range []State{Pending, Running, Dead} {
		if s == st.String() {
			return st, nil
		}
	}
	return 0, fmt.Errorf("durable: no state %q (pending, running, dead)", s)
}

// countsScript returns {now, jobs, running, dead, due, oldest}: Redis's
// clock, the jobs held, the running and dead ones, those claimable now,
// and the earliest claimable one's score (-1 if none is claimable).
var countsScript = redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local running = 0
for _, r in ipairs(redis.call('HVALS', KEYS[3])) do
  if string.find(r, '|', 1, true) then running = running + 1 end
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local oldest = -1
if first[2] and tonumber(first[2]) <= now then oldest = tonumber(first[2]) end
return {now, redis.call('HLEN', KEYS[2]), running, redis.call('HLEN', KEYS[4]),
  redis.call('ZCOUNT', KEYS[1], '-inf', string.format('%d', now)), oldest}
`)

// listDueScript walks :due in its order (score, then ID in byte order)
// from just after the cursor (score, id), reading at most budget entries,
// and returns up to limit of the jobs in the state wanted: {next score,
// next id, id, score, run, blob, ...}, next id "" when the walk reached
// the end. The cursor's entry need not exist any more: its place is found
// by a binary search of the ranks that hold its score, O(log² n).
// ARGV: want ("p" pending, "r" running), limit, budget, score ("" from
// the start), id.
var listDueScript = redis.NewScript(`
local function less(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local pos = 0
if ARGV[4] ~= '' then
  local cur = redis.call('ZSCORE', KEYS[1], ARGV[5])
  if cur and tonumber(cur) == tonumber(ARGV[4]) then
    pos = redis.call('ZRANK', KEYS[1], ARGV[5]) + 1
  else
    local a = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. ARGV[4])
    local b = redis.call('ZCOUNT', KEYS[1], '-inf', ARGV[4])
    while a < b do
      local m = math.floor((a + b) / 2)
      if less(ARGV[5], redis.call('ZRANGE', KEYS[1], m, m)[1]) then b = m else a = m + 1 end
    end
    pos = a
  end
end
local want, limit, budget = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local ids, scores, runs = {}, {}, {}
local seen, lastS, lastID, more = 0, '', '', false
while #ids < limit and seen < budget do
  local zs = redis.call('ZRANGE', KEYS[1], pos, pos + math.min(budget - seen, 128) - 1, 'WITHSCORES')
  if #zs == 0 then break end
  local c = {}
  for i = 1, #zs, 2 do c[#c + 1] = zs[i] end
  local rs = redis.call('HMGET', KEYS[3], unpack(c))
  for k, id in ipairs(c) do
    seen, lastS, lastID = seen + 1, zs[2 * k], id
    local r = rs[k] or ''
    if (want == 'r') == (string.find(r, '|', 1, true) ~= nil) then
      ids[#ids + 1], scores[#scores + 1], runs[#runs + 1] = id, zs[2 * k], r
    end
    if #ids >= limit or seen >= budget then break end
  end
  pos = pos + math.floor(#zs / 2)
end
local out = {'', ''}
if seen > 0 and redis.call('ZRANK', KEYS[1], lastID) + 1 < redis.call('ZCARD', KEYS[1]) then
  out[1], out[2] = lastS, lastID
end
if #ids > 0 then
  local blobs = redis.call('HMGET', KEYS[2], unpack(ids))
  for k, id in ipairs(ids) do
    if blobs[k] then
      out[#out + 1], out[#out + 2], out[#out + 3], out[#out + 4] = id, scores[k], runs[k], blobs[k]
    end
  end
end
return out
`)

// listDeadScript scans :dead from the cursor (an HSCAN cursor and how
// many entries of its batch to skip), and returns up to limit dead jobs:
// {next cursor, next skip, id, run, blob, error, ...}, next cursor ""
// once the scan is done. Each HSCAN asks for the same COUNT, so that a
// batch read again is the same batch while the hash has not changed.
// ARGV: cursor, skip, limit.
var listDeadScript = redis.NewScript(`
local cur, skip, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local ids, errs = {}, {}
local nc, ns = '', 0
for round = 1, 16 do
  local r = redis.call('HSCAN', KEYS[4], cur, 'COUNT', 128)
  local kv = r[2]
  local i = skip
  while i < #kv / 2 and #ids < limit do
    ids[#ids + 1], errs[#errs + 1] = kv[2 * i + 1], kv[2 * i + 2]
    i = i + 1
  end
  if i < #kv / 2 then nc, ns = cur, i; break end
  if r[1] == '0' then nc = ''; break end
  cur, skip, nc, ns = r[1], 0, r[1], 0
  if #ids >= limit then break end
end
local out = {nc, ns}
if #ids > 0 then
  local blobs = redis.call('HMGET', KEYS[2], unpack(ids))
  local runs = redis.call('HMGET', KEYS[3], unpack(ids))
  for k, id in ipairs(ids) do
    out[#out + 1], out[#out + 2], out[#out + 3], out[#out + 4] = id, runs[k] or '', blobs[k] or '', errs[k]
  end
end
return out
`)

// deadScript retries (due now, attempts forgotten, as Reschedule does)
// or deletes dead jobs: those among the IDs given, or those of one batch
// of a sweep of :dead (an HSCAN from the cursor) whose blob starts with
// the kind prefix. It returns {next cursor ("0" when done), jobs moved}.
// ARGV: "retry" or "delete", channel, kind prefix ("" with IDs; "kind\0",
// or "\0" for every kind, with a cursor), then the IDs or the cursor.
var deadScript = redis.NewScript(`
local ids, nc = {}, '0'
if ARGV[3] == '' then
  for i = 4, #ARGV do ids[#ids + 1] = ARGV[i] end
else
  local r = redis.call('HSCAN', KEYS[4], ARGV[4], 'COUNT', 256)
  nc = r[1]
  for i = 1, #r[2], 2 do ids[#ids + 1] = r[2][i] end
  if ARGV[3] ~= '\0' and #ids > 0 then
    local blobs = redis.call('HMGET', KEYS[2], unpack(ids))
    local keep = {}
    for k, id in ipairs(ids) do
      if blobs[k] and string.sub(blobs[k], 1, #ARGV[3]) == ARGV[3] then keep[#keep + 1] = id end
    end
    ids = keep
  end
end
if #ids == 0 then return {nc, 0} end
local errs = redis.call('HMGET', KEYS[4], unpack(ids))
local d = {}
for k, id in ipairs(ids) do
  if errs[k] then d[#d + 1] = id end
end
if #d == 0 then return {nc, 0} end
redis.call('HDEL', KEYS[4], unpack(d))
redis.call('HDEL', KEYS[3], unpack(d))
if ARGV[1] == 'retry' then
  local t = redis.call('TIME')
  local s = string.format('%d', t[1] * 1000000 + t[2])
  local z = {}
  for _, id in ipairs(d) do z[#z + 1] = s; z[#z + 1] = id end
  redis.call('ZADD', KEYS[1], unpack(z))
  redis.call('PUBLISH', ARGV[2], s)
else
  redis.call('HDEL', KEYS[2], unpack(d))
  redis.call('ZREM', KEYS[1], unpack(d))
end
return {nc, #d}
`)
