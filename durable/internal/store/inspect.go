package store

import (
	"context"
)

// This file holds the scripts of the operators' view: Counts, ListDue,
// ListDead and Dead. None walks a whole key: each is O(log n) plus a
// bounded stretch of jobs.

// countsScript returns {now, jobs, running, dead, due, oldest}: Redis's
// clock; the jobs held; the running ones (those each live worker holds
// for a due time come); the dead ones; those claimable now, with the
// parked ones; and the score of the earliest of these (-1 if none).
//
//	KEYS[1] -> {name}:due      ZCOUNT, ZRANGE 0 0
//	KEYS[2] -> {name}:job      HLEN
//	KEYS[4] -> {name}:dead     HLEN
//	KEYS[6] -> {name}:parked   SMEMBERS
//	KEYS[7] -> {name}:workers  ZRANGE the live
//	{name}:lease:<worker>      ZCOUNT -inf now, for each live worker
//	{name}:park:<kind>         ZCARD, ZRANGE 0 0
//	ARGV[1] -> prefix
var countsScript = newScript("counts", `
local now = clock()
local running = 0
for _, w in ipairs(redis.call('ZRANGE', KEYS[7], fmt(now), '+inf', 'BYSCORE')) do
  running = running + redis.call('ZCOUNT', prefix .. 'lease:' .. w, '-inf', fmt(now))
end
local due, oldest = redis.call('ZCOUNT', KEYS[1], '-inf', fmt(now)), -1
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[2] and tonumber(first[2]) <= now then oldest = tonumber(first[2]) end
for _, k in ipairs(redis.call('SMEMBERS', KEYS[6])) do
  local pk = prefix .. 'park:' .. k
  due = due + redis.call('ZCARD', pk)
  local f = redis.call('ZRANGE', pk, 0, 0, 'WITHSCORES')
  if f[2] and (oldest < 0 or tonumber(f[2]) < oldest) then oldest = tonumber(f[2]) end
end
return {now, redis.call('HLEN', KEYS[2]), running, redis.call('HLEN', KEYS[4]), due, oldest}
`)

// Counted is a shard's figures, as Counts reads them.
type Counted struct {
	Now     int64 // the server's clock, µs
	Jobs    int64 // every job held
	Running int64 // held by a live worker for a due time come
	Dead    int64
	Due     int64 // claimable now (also a lease that ran out), or parked
	Oldest  int64 // the score of the earliest Due job; -1 if none
}

// Counts reads a shard's figures. It costs one round trip, O(log n ·
// live workers + paused kinds).
func (c *Client) Counts(ctx context.Context, k Keys) (Counted, error) {
	r := decode(countsScript.name, c.run(ctx, countsScript, k.all, k.Prefix))
	out := Counted{Now: r.int(0), Jobs: r.int(1), Running: r.int(2), Dead: r.int(3), Due: r.int(4), Oldest: r.int(5)}
	if r.rest(6, 1) != 0 {
		r.err = &ReplyError{countsScript.name, "more than 6 fields"}
	}
	return out, r.err
}

// listDueScript walks the sorted sets of the jobs not dead in their order
// (score, then ID in byte order) from just after the cursor (set, score,
// id), reading at most budget entries, and returns up to limit of the
// jobs in the state wanted: {next set, next score, next id, id, score,
// run, blob, ...}, next id "" once the walk reached the end. The sets are
// :due, then (for pending jobs) each park set, by kind in byte order; set
// "" is :due, else the hex of the park set's kind. The cursor's entry
// need not exist any more: its place is found by a binary search of the
// ranks that hold its score, O(log² n).
//
//	KEYS[1] -> {name}:due     ZRANGE, ZSCORE, ZRANK, ZCOUNT, ZCARD
//	KEYS[2] -> {name}:job     HMGET
//	KEYS[3] -> {name}:run     HMGET
//	KEYS[6] -> {name}:parked  SMEMBERS
//	{name}:park:<kind>        as :due
//	ARGV[1] -> prefix
//	ARGV[2] -> want: "p" pending, "r" running
//	ARGV[3] -> limit
//	ARGV[4] -> budget
//	ARGV[5] -> set ("" for :due, else the hex of a kind)
//	ARGV[6] -> score ("" from the start of the set)
//	ARGV[7] -> id
var listDueScript = newScript("listDue", `
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
`, luaHolder, luaLess)

// ListDueArgs are where a walk of the sorted sets starts, and what it
// returns.
type ListDueArgs struct {
	Running bool // the running jobs; else the pending ones
	Limit   int
	Budget  int    // the most entries read
	Set     string // the cursor: "" for :due, else the hex of a park set's kind
	Score   string // "" from the start of the set
	ID      string
}

// A Listed is one job a list returns.
type Listed struct {
	ID    string
	Score int64  // ListDue's; 0 for ListDead
	Run   Token  // its :run value; Attempt 0 if none
	Blob  string // kind NUL payload
	Err   string // ListDead's: the last error
}

// ListedDue is a page of ListDue.
type ListedDue struct {
	Next ListDueArgs // where the next page starts (Set, Score, ID); ID "" once done
	Jobs []Listed
}

// ListDue returns up to a.Limit jobs in the state asked for, from just
// after a's cursor. It costs one round trip, O(log² n + a.Budget).
func (c *Client) ListDue(ctx context.Context, k Keys, a ListDueArgs) (ListedDue, error) {
	want := "p"
	if a.Running {
		want = "r"
	}
	r := decode(listDueScript.name, c.run(ctx, listDueScript, k.all, k.Prefix, want, a.Limit, a.Budget, a.Set, a.Score, a.ID))
	out := ListedDue{Next: ListDueArgs{Set: r.str(0), Score: r.str(1), ID: r.str(2)}}
	n := r.rest(3, 4)
	for i := 3; i < 3+4*n && r.err == nil; i += 4 {
		out.Jobs = append(out.Jobs, Listed{ID: r.str(i), Score: r.score(i + 1), Run: r.run(i + 2), Blob: r.str(i + 3)})
	}
	return out, r.err
}

// listDeadScript scans :dead from the cursor (an HSCAN cursor and how
// many entries of its batch to skip), and returns up to limit dead jobs:
// {next cursor, next skip, id, run, blob, error, ...}, next cursor ""
// once the scan is done. Each HSCAN asks for the same COUNT, so that a
// batch read again is the same batch while the hash has not changed.
//
//	KEYS[2] -> {name}:job   HMGET
//	KEYS[3] -> {name}:run   HMGET
//	KEYS[4] -> {name}:dead  HSCAN
//	ARGV[1] -> prefix
//	ARGV[2] -> cursor
//	ARGV[3] -> skip
//	ARGV[4] -> limit
var listDeadScript = newScript("listDead", `
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

// ListedDead is a page of ListDead.
type ListedDead struct {
	Cursor string // the next page's HSCAN cursor; "" once done
	Skip   int64
	Jobs   []Listed
}

// ListDead returns up to limit dead jobs from the cursor. It costs one
// round trip, O(limit) plus at most 16 HSCANs.
func (c *Client) ListDead(ctx context.Context, k Keys, cursor string, skip int64, limit int) (ListedDead, error) {
	r := decode(listDeadScript.name, c.run(ctx, listDeadScript, k.all, k.Prefix, cursor, skip, limit))
	out := ListedDead{Cursor: r.str(0), Skip: r.int(1)}
	n := r.rest(2, 4)
	for i := 2; i < 2+4*n && r.err == nil; i += 4 {
		out.Jobs = append(out.Jobs, Listed{ID: r.str(i), Run: r.run(i + 1), Blob: r.str(i + 2), Err: r.str(i + 3)})
	}
	return out, r.err
}

// run returns field i, a :run value or "" for none.
func (r *reply) run(i int) Token {
	s := r.str(i)
	if s == "" || r.err != nil {
		return Token{}
	}
	t, ok := ParseRun(s)
	if !ok {
		r.fail(i, "a :run value")
	}
	return t
}

// deadScript retries (due now, attempts forgotten, as Reschedule does;
// one live worker is told) or deletes dead jobs: those among the IDs
// given, or those of one batch of a sweep of :dead (an HSCAN from the
// cursor) whose blob starts with the kind prefix. It returns {next cursor
// ("0" when done), jobs moved}.
//
//	KEYS[1] -> {name}:due      ZADD (retry) or ZREM (delete)
//	KEYS[2] -> {name}:job      HMGET; HDEL (delete)
//	KEYS[3] -> {name}:run      HDEL
//	KEYS[4] -> {name}:dead     HSCAN, HMGET, HDEL
//	KEYS[7] -> {name}:workers  read (retry)
//	{name}:tries               HDEL (delete)
//	ARGV[1] -> prefix
//	ARGV[2] -> "retry" or "delete"
//	ARGV[3] -> horizon µs
//	ARGV[4] -> kind prefix: "" with IDs; "kind\0", or "\0" for every kind, with a cursor
//	ARGV[5..] -> the IDs, or the cursor
var deadScript = newScript("dead", `
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
  redis.call('HDEL', prefix .. 'tries', unpack(d))
end
return {nc, #d}
`, luaNotify)

// Swept is the outcome of Dead.
type Swept struct {
	Cursor string // the sweep's next cursor: "0" when done (and with IDs)
	Done   int64  // the dead jobs retried or deleted
}

// Dead retries (retry true) or deletes the dead jobs among ids. It costs
// one round trip, O(len(ids)·log n).
func (c *Client) Dead(ctx context.Context, k Keys, retry bool, ids []string) (Swept, error) {
	args := make([]any, 0, 4+len(ids))
	args = append(args, k.Prefix, verb(retry), Horizon, "")
	for _, id := range ids {
		args = append(args, id)
	}
	return c.dead(ctx, k, args)
}

// DeadSweep retries or deletes the dead jobs of kind ("" for every
// kind) in one batch (about 256) of a sweep of :dead from cursor ("0" to
// start). It costs one round trip, O(256·log n).
func (c *Client) DeadSweep(ctx context.Context, k Keys, retry bool, kind, cursor string) (Swept, error) {
	return c.dead(ctx, k, []any{k.Prefix, verb(retry), Horizon, kind + "\x00", cursor})
}

func (c *Client) dead(ctx context.Context, k Keys, args []any) (Swept, error) {
	r := decode(deadScript.name, c.run(ctx, deadScript, k.all, args...))
	out := Swept{Done: r.int(1)}
	switch x := r.v; {
	case r.err != nil:
	case len(x) > 0:
		// HSCAN's cursor comes back as a string; "0" from the Lua literal too.
		out.Cursor = r.str(0)
	}
	if r.rest(2, 1) != 0 {
		r.err = &ReplyError{deadScript.name, "more than 2 fields"}
	}
	return out, r.err
}

func verb(retry bool) string {
	if retry {
		return "retry"
	}
	return "delete"
}

// listRunningScript returns up to limit running jobs whose IDs come after
// the cursor's in byte order: {next id, id, lease end, run, blob, ...},
// next id "" once there is none. A job runs while a live worker's lease
// set holds it for a due time come, as Counts counts it (countsScript);
// its lease ends at its :due score. It reads the live leases only, never
// the pending jobs, and pages by ID, which a renewal does not move (a
// lease's end does).
//
//	KEYS[1] -> {name}:due      ZMSCORE
//	KEYS[2] -> {name}:job      HMGET
//	KEYS[3] -> {name}:run      HMGET
//	KEYS[7] -> {name}:workers  ZRANGE the live
//	{name}:lease:<worker>      ZRANGE -inf now, for each live worker
//	ARGV[1] -> prefix
//	ARGV[2] -> limit
//	ARGV[3] -> "1" if a cursor follows, else "0"
//	ARGV[4] -> the cursor: the last ID of the page before
var listRunningScript = newScript("listRunning", `
local now = clock()
local limit, from = tonumber(ARGV[2]), ARGV[4]
local run, seen = {}, {}
for _, w in ipairs(redis.call('ZRANGE', KEYS[7], fmt(now), '+inf', 'BYSCORE')) do
  for _, id in ipairs(redis.call('ZRANGE', prefix .. 'lease:' .. w, '-inf', fmt(now), 'BYSCORE')) do
    if not seen[id] and (ARGV[3] ~= '1' or less(from, id)) then
      seen[id] = true
      run[#run + 1] = id
    end
  end
end
table.sort(run, less)
local out = {''}
if #run > limit then out[1] = run[limit] end
local page = {unpack(run, 1, math.min(limit, #run))}
if #page > 0 then
  local ends = redis.call('ZMSCORE', KEYS[1], unpack(page))
  local blobs = redis.call('HMGET', KEYS[2], unpack(page))
  local runs = redis.call('HMGET', KEYS[3], unpack(page))
  for k, id in ipairs(page) do
    if blobs[k] and ends[k] then
      out[#out + 1], out[#out + 2], out[#out + 3], out[#out + 4] = id, ends[k], runs[k] or '', blobs[k]
    end
  end
end
return out
`, luaLess)

// ListedRunning is a page of ListRunning.
type ListedRunning struct {
	Next string // the last ID of the page, where the next starts; "" once done
	Jobs []Listed
}

// ListRunning returns up to limit running jobs, by ID in byte order,
// those after the ID after if more is true (the start otherwise); each
// job's Score is its lease's end. It reads the live leases (:lease), not
// the pending jobs. It costs one round trip, O(L log L) for L live
// leases.
func (c *Client) ListRunning(ctx context.Context, k Keys, after string, more bool, limit int) (ListedRunning, error) {
	r := decode(listRunningScript.name, c.run(ctx, listRunningScript, k.all, k.Prefix, limit, flag(more), after))
	out := ListedRunning{Next: r.str(0)}
	n := r.rest(1, 4)
	for i := 1; i < 1+4*n && r.err == nil; i += 4 {
		out.Jobs = append(out.Jobs, Listed{ID: r.str(i), Score: r.score(i + 1), Run: r.run(i + 2), Blob: r.str(i + 3)})
	}
	return out, r.err
}
