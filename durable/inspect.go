package durable

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file is the queue as its operators see it: figures of the whole
// queue read from Redis, the jobs of a state a page at a time, and the
// dead jobs retried or deleted in bulk. Its scripts read the layout at
// the top of scripts.go and never walk a whole key: each call is one
// round trip of O(log n) plus a bounded stretch of jobs.

// MaxList is the most jobs one List call returns.
const MaxList = 1000

// maxRunningWalk bounds the jobs Counts reads to find the running ones.
var maxRunningWalk = 10_000 // a variable for the tests

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
	// Running counts the jobs whose handler runs: a live lease holds
	// them for a due time at or before At.
	Running int64
	// RunningAtLeast reports that Running is a lower bound: over 10,000
	// jobs were claimable within the next lease, and Counts read that
	// many of them.
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
// It finds the running jobs among those whose score (a live lease's end)
// falls within this Queue's lease (WithLease: give it the workers' lease,
// or a longer one), reading at most 10,000 a shard. It costs one round
// trip a shard, O(log n) plus those jobs and the paused kinds.
func (q *Queue) Counts(ctx context.Context) (Counts, error) {
	if err := q.checkOp(ctx, "Counts", ""); err != nil {
		return Counts{}, err
	}
	var c Counts
	for i, k := range q.shards {
		var v []int64
		err := q.doOn(ctx, q.brs[i], func(ctx context.Context) (err error) {
			v, err = countsScript.Run(ctx, q.rdb, k.all, k.prefix, q.cfg.lease.Microseconds(), maxRunningWalk).Int64Slice()
			return err
		})
		if err != nil {
			return Counts{}, fmt.Errorf("durable: Counts: %w", err)
		}
		// v: now, jobs, running, dead, due, oldest score (-1 if none due), capped
		if i == 0 {
			c.At = time.UnixMicro(v[0])
		}
		c.Running += v[2]
		c.Dead += v[3]
		c.Due += v[4]
		c.Pending += max(v[1]-v[2]-v[3], 0)
		c.RunningAtLeast = c.RunningAtLeast || v[6] == 1
		if v[5] >= 0 {
			c.Lateness = max(c.Lateness, time.Duration(max(v[0]-v[5], 0))*time.Microsecond)
		}
	}
	return c, nil
}

// List returns up to limit jobs in state (Pending, Running or Dead),
// starting at cursor ("" for the first page), and the cursor of the next
// page: "" once there is none. Pending and running jobs come by when
// they are next claimable (due time, end of backoff or of lease; for a
// pending job leased ahead, its lease's end), then ID; then, for
// pending, the jobs parked by a paused kind, kind by kind; dead jobs in
// no set order. Each call reads a bounded stretch of the store, so a page
// may hold fewer than limit jobs (none, even) while the next cursor is
// not "". A job that changes state between pages may be missed or
// returned twice. A queue of several shards (WithShards) is listed shard
// by shard. It returns an error for a limit outside [1, MaxList], a bad
// cursor or state. It costs one round trip, O(log² n) plus the stretch
// read (at most 4*limit+256 jobs).
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
			return nil, "", fmt.Errorf("durable: List: bad cursor %.60q for state %v", cursor, state)
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
	if state == Dead {
		return q.listDead(ctx, i, cursor, limit)
	}
	return q.listDue(ctx, i, state, cursor, limit)
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
		if !ok1 || !ok2 || err1 != nil || err2 != nil || id == "" || state == Running && set != "" {
			return nil, "", fmt.Errorf("durable: List: bad cursor %.60q for state %v", cursor, state)
		}
	}
	want := "p"
	if state == Running {
		want = "r"
	}
	var v []any
	err := q.doOn(ctx, q.brs[shard], func(ctx context.Context) (err error) {
		v, err = listDueScript.Run(ctx, q.rdb, k.all, k.prefix, want, limit, 4*limit+256, set, score, id).Slice()
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("durable: List: %w", err)
	}
	// v: next set, next score, next id ("" if done), then id, score, run, blob per job
	next := ""
	if nid, _ := v[2].(string); nid != "" {
		ns, _ := v[0].(string)
		sc, _ := v[1].(string)
		next = ns + ":" + sc + ":" + nid
	}
	var out []Info
	for i := 3; i+3 < len(v); i += 4 {
		id, _ := v[i].(string)
		sc, _ := v[i+1].(string)
		run, _ := v[i+2].(string)
		blob, _ := v[i+3].(string)
		info := Info{Job: Job{ID: id, Due: time.UnixMicro(parseScore(sc))}, State: state}
		info.Kind, info.Payload = split(blob)
		info.Attempt, info.Worker, _ = parseRun(run)
		out = append(out, info)
	}
	return out, next, nil
}

// listDead scans :dead from cursor ("" or "hscan-cursor:skip").
func (q *Queue) listDead(ctx context.Context, shard int, cursor string, limit int) ([]Info, string, error) {
	k := q.shards[shard]
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
	var v []any
	err := q.doOn(ctx, q.brs[shard], func(ctx context.Context) (err error) {
		v, err = listDeadScript.Run(ctx, q.rdb, k.all, k.prefix, c, skip, limit).Slice()
		return err
	})
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
		info.Attempt, _, _ = parseRun(run)
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
	byShard := make(map[string][]any, len(q.shards))
	var order []string
	brs := make(map[string]*breaker, len(q.shards))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if err := checkID(op, id); err != nil {
			return 0, err
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		k, br := q.shardOf(id)
		if _, ok := byShard[k.prefix]; !ok {
			order = append(order, k.prefix)
			brs[k.prefix] = br
			byShard[k.prefix] = []any{k.prefix, verb, horizon, ""}
		}
		byShard[k.prefix] = append(byShard[k.prefix], id)
	}
	done := 0
	for _, prefix := range order {
		k, args := newKeyset(prefix), byShard[prefix]
		var v []int64
		err := q.doOn(ctx, brs[prefix], func(ctx context.Context) (err error) {
			v, err = deadScript.Run(ctx, q.rdb, k.all, args...).Int64Slice()
			return err
		})
		if err != nil {
			return done, fmt.Errorf("durable: %s: %w", op, err)
		}
		done += int(v[1])
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
			var v []any
			err := q.doOn(ctx, q.brs[i], func(ctx context.Context) (err error) {
				v, err = deadScript.Run(ctx, q.rdb, k.all, k.prefix, verb, horizon, kind+"\x00", cursor).Slice()
				return err
			})
			if err != nil {
				return total, fmt.Errorf("durable: %s: %w", op, err)
			}
			n, _ := v[1].(int64)
			total += int(n)
			if cursor, _ = v[0].(string); cursor == "0" || cursor == "" {
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
// as State.String writes it. It costs O(1).
func ParseState(s string) (State, error) {
	for _, st := range []State{Pending, Running, Dead} {
		if s == st.String() {
			return st, nil
		}
	}
	return 0, fmt.Errorf("durable: no state %q (pending, running, dead)", s)
}

// countsScript returns {now, jobs, running, dead, due, oldest, capped}:
// Redis's clock; the jobs held; the running and the dead ones; those
// claimable now, with the parked ones; the score of the earliest of
// these (-1 if none); and 1 if it stopped short of the stretch it walks.
// It finds the running jobs among those whose score is within the next
// lease, reading at most walk of them.
// ARGV: prefix, lease µs, walk.
var countsScript = script(`
local now = clock()
local running, seen, pos = 0, 0, 0
local walk = tonumber(ARGV[3])
local lo = redis.call('ZCOUNT', KEYS[1], '-inf', fmt(now))
local hi = redis.call('ZCOUNT', KEYS[1], '-inf', fmt(now + tonumber(ARGV[2])))
pos = lo
while pos < hi and seen < walk do
  local ids = redis.call('ZRANGE', KEYS[1], pos, math.min(hi, pos + 256, lo + walk) - 1)
  if #ids == 0 then break end
  for _, r in ipairs(redis.call('HMGET', KEYS[3], unpack(ids))) do
    local w, d = holder(r)
    if w and (not d or d <= now) then running = running + 1 end
  end
  seen, pos = seen + #ids, pos + #ids
end
local due, oldest = lo, -1
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[2] and tonumber(first[2]) <= now then oldest = tonumber(first[2]) end
for _, k in ipairs(redis.call('SMEMBERS', KEYS[6])) do
  local pk = prefix .. 'park:' .. k
  due = due + redis.call('ZCARD', pk)
  local f = redis.call('ZRANGE', pk, 0, 0, 'WITHSCORES')
  if f[2] and (oldest < 0 or tonumber(f[2]) < oldest) then oldest = tonumber(f[2]) end
end
local capped = 0
if pos < hi then capped = 1 end
return {now, redis.call('HLEN', KEYS[2]), running, redis.call('HLEN', KEYS[4]), due, oldest, capped}
`, luaHolder)

// listDueScript walks the sorted sets of the jobs not dead in their order
// (score, then ID in byte order) from just after the cursor (set, score,
// id), reading at most budget entries, and returns up to limit of the
// jobs in the state wanted: {next set, next score, next id, id, score,
// run, blob, ...}, next id "" once the walk reached the end. The sets are
// :due, then (for pending jobs) each park set, by kind in byte order; set
// "" is :due, else the hex of the park set's kind. The cursor's entry
// need not exist any more: its place is found by a binary search of the
// ranks that hold its score, O(log² n).
// ARGV: prefix, want ("p" pending, "r" running), limit, budget, set,
// score ("" from the start of the set), id.
var listDueScript = script(`
local function less(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local function hex(s) return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end)) end
local function unhex(h) return (string.gsub(h, '..', function(c) return string.char(tonumber(c, 16)) end)) end
local now = clock()
local want, limit, budget = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
-- A job runs while a live lease (score after now) holds it for a due
-- time at or before now; a lease that ran out leaves it claimable.
-- The sets to walk, in order, from the cursor's on:
local sets, names = {KEYS[1]}, {''}
if ARGV[5] ~= '' then
  local from = unhex(ARGV[5])
  sets, names = {prefix .. 'park:' .. from}, {ARGV[5]}
end
if want == 'p' then
  local kinds = redis.call('SMEMBERS', KEYS[6])
  table.sort(kinds, less)
  for _, k in ipairs(kinds) do
    if ARGV[5] == '' or less(unhex(ARGV[5]), k) then
      sets[#sets + 1], names[#names + 1] = prefix .. 'park:' .. k, hex(k)
    end
  end
end
local si = 1
local pos = 0
if ARGV[6] ~= '' then
  local key = sets[si]
  local cur = redis.call('ZSCORE', key, ARGV[7])
  if cur and tonumber(cur) == tonumber(ARGV[6]) then
    pos = redis.call('ZRANK', key, ARGV[7]) + 1
  else
    local a = redis.call('ZCOUNT', key, '-inf', '(' .. ARGV[6])
    local b = redis.call('ZCOUNT', key, '-inf', ARGV[6])
    while a < b do
      local m = math.floor((a + b) / 2)
      if less(ARGV[7], redis.call('ZRANGE', key, m, m)[1]) then b = m else a = m + 1 end
    end
    pos = a
  end
end
local ids, scores, runs = {}, {}, {}
local seen, lastSet, lastS, lastID = 0, '', '', ''
local stopped = false
while si <= #sets do
  local key = sets[si]
  while #ids < limit and seen < budget do
    local zs = redis.call('ZRANGE', key, pos, pos + math.min(budget - seen, 128) - 1, 'WITHSCORES')
    if #zs == 0 then break end
    local c = {}
    for i = 1, #zs, 2 do c[#c + 1] = zs[i] end
    local rs = redis.call('HMGET', KEYS[3], unpack(c))
    for k, id in ipairs(c) do
      seen, lastSet, lastS, lastID = seen + 1, names[si], zs[2 * k], id
      pos = pos + 1
      local w, d = holder(rs[k])
      local run = w ~= nil and names[si] == '' and (not d or d <= now) and tonumber(zs[2 * k]) > now
      if (want == 'r') == run then
        ids[#ids + 1], scores[#scores + 1], runs[#runs + 1] = id, zs[2 * k], rs[k] or ''
      end
      if #ids >= limit or seen >= budget then break end
    end
  end
  if #ids >= limit or seen >= budget then
    stopped = pos < redis.call('ZCARD', key) or si < #sets
    break
  end
  si, pos = si + 1, 0
end
local out = {'', '', ''}
if stopped then out[1], out[2], out[3] = lastSet, lastS, lastID end
if #ids > 0 then
  local blobs = redis.call('HMGET', KEYS[2], unpack(ids))
  for k, id in ipairs(ids) do
    if blobs[k] then
      out[#out + 1], out[#out + 2], out[#out + 3], out[#out + 4] = id, scores[k], runs[k], blobs[k]
    end
  end
end
return out
`, luaHolder)

// listDeadScript scans :dead from the cursor (an HSCAN cursor and how
// many entries of its batch to skip), and returns up to limit dead jobs:
// {next cursor, next skip, id, run, blob, error, ...}, next cursor ""
// once the scan is done. Each HSCAN asks for the same COUNT, so that a
// batch read again is the same batch while the hash has not changed.
// ARGV: prefix, cursor, skip, limit.
var listDeadScript = script(`
local cur, skip, limit = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
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

// deadScript retries (due now, attempts forgotten, as Reschedule does;
// one live worker is told) or deletes dead jobs: those among the IDs
// given, or those of one batch of a sweep of :dead (an HSCAN from the
// cursor) whose blob starts with the kind prefix. It returns {next cursor
// ("0" when done), jobs moved}.
// ARGV: prefix, "retry" or "delete", horizon µs, kind prefix ("" with
// IDs; "kind\0", or "\0" for every kind, with a cursor), then the IDs or
// the cursor.
var deadScript = script(`
local ids, nc = {}, '0'
if ARGV[4] == '' then
  for i = 5, #ARGV do ids[#ids + 1] = ARGV[i] end
else
  local r = redis.call('HSCAN', KEYS[4], ARGV[5], 'COUNT', 256)
  nc = r[1]
  for i = 1, #r[2], 2 do ids[#ids + 1] = r[2][i] end
  if ARGV[4] ~= '\0' and #ids > 0 then
    local blobs = redis.call('HMGET', KEYS[2], unpack(ids))
    local keep = {}
    for k, id in ipairs(ids) do
      if blobs[k] and string.sub(blobs[k], 1, #ARGV[4]) == ARGV[4] then keep[#keep + 1] = id end
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
if ARGV[2] == 'retry' then
  local now, pick = clock()
  local z = {}
  for _, id in ipairs(d) do z[#z + 1] = fmt(now); z[#z + 1] = id end
  redis.call('ZADD', KEYS[1], unpack(z))
  notify(now, pick, now, tonumber(ARGV[3]), '')
else
  redis.call('HDEL', KEYS[2], unpack(d))
  redis.call('ZREM', KEYS[1], unpack(d))
end
return {nc, #d}
`, luaNotify)
