package store

import (
	"context"
	"strconv"
)

// This file holds the scripts of the worker's leases: Claim, Ack, Renew,
// Fail and Release.

// claimScript leases to worker up to limit jobs due within hz of the
// server's now, each until max(due, now)+lease: those no worker holds, and
// those whose lease ran out. A job of a paused kind goes to its park set
// instead; with the whole queue paused, nothing is leased. The worker
// counts as live for ttl more. It reads and writes all the jobs with one
// command per key, not one per job.
//
//	KEYS[1] -> {name}:due      ZRANGE BYSCORE; ZADD the leased; ZREM the gone and parked
//	KEYS[2] -> {name}:job      HMGET
//	KEYS[3] -> {name}:run      HMGET; HSET the leased's tokens
//	KEYS[5] -> {name}:paused   SMEMBERS
//	KEYS[6] -> {name}:parked   SMEMBERS, SADD, SREM
//	KEYS[7] -> {name}:workers  ZRANGE, ZREMRANGEBYSCORE the dead, ZADD worker
//	{name}:lease:<worker>      ZADD the leased; DEL a dead worker's; ZREM a job
//	                           taken from a worker whose lease ran out
//	{name}:park:<kind>         ZADD the parked; unpark: ZRANGE, ZREM
//	ARGV[1] -> prefix
//	ARGV[2] -> limit
//	ARGV[3] -> lease µs
//	ARGV[4] -> worker
//	ARGV[5] -> hz µs
//	ARGV[6] -> ttl µs
//
// It returns {now, left, paused, wake, id, due, attempt, blob, ...}: see
// Claimed.
var claimScript = newScript("claim", `
local now = clock()
local limit, lease, worker, hz = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
for _, w in ipairs(redis.call('ZRANGE', KEYS[7], '-inf', '(' .. fmt(now), 'BYSCORE')) do
  redis.call('DEL', prefix .. 'lease:' .. w)
end
redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', '(' .. fmt(now))
redis.call('ZADD', KEYS[7], fmt(now + tonumber(ARGV[6])), worker)
local paused = redis.call('SMEMBERS', KEYS[5])
local out = {now, -1, paused, -1}
local pk = {}
for _, k in ipairs(paused) do pk[k] = true end
if pk[''] then return out end
local wake = nextclaim('(' .. fmt(now + hz), now, hz, worker)
local function soon(t)
  if wake < 0 or t < wake then wake = t end
end
for _, k in ipairs(redis.call('SMEMBERS', KEYS[6])) do
  if not pk[k] and unpark(k, 100) > 0 then soon(now) end
end
local cand = redis.call('ZRANGE', KEYS[1], '-inf', fmt(now + hz), 'BYSCORE', 'LIMIT', 0, 2 * limit, 'WITHSCORES')
out[4] = wake
if #cand == 0 then return out end
local ids = {}
for i = 1, #cand, 2 do ids[#ids + 1] = cand[i] end
local blobs = redis.call('HMGET', KEYS[2], unpack(ids))
local runs = redis.call('HMGET', KEYS[3], unpack(ids))
local zadd, hset, mine, gone, park, rem = {}, {}, {}, {}, {}, {}
local taken, skipped = 0, 0
local full = false
for k, id in ipairs(ids) do
  local s = tonumber(cand[2 * k])
  local b, r = blobs[k], runs[k]
  local w = holder(r)
  if not b then
    gone[#gone + 1] = id
  elseif w and s > now then
    skipped = skipped + 1 -- held by a live lease: claimable once it ends
    soon(s)
  elseif #paused > 0 and pk[kindof(b)] then
    if w then unlease(w, {id}) end
    local kind = kindof(b)
    if not park[kind] then park[kind] = {} end
    local p = park[kind]
    p[#p + 1] = cand[2 * k]
    p[#p + 1] = id
    rem[#rem + 1] = id
  elseif taken < limit then
    taken = taken + 1
    local a = 1
    if r then a = tonumber(string.match(r, '^%d+')) + 1 end
    if w and w ~= worker then unlease(w, {id}) end
    zadd[#zadd + 1] = fmt(math.max(s, now) + lease)
    zadd[#zadd + 1] = id
    mine[#mine + 1] = cand[2 * k]
    mine[#mine + 1] = id
    hset[#hset + 1] = id
    hset[#hset + 1] = a .. '|' .. worker .. '|' .. fmt(s)
    out[#out + 1] = id
    out[#out + 1] = fmt(s)
    out[#out + 1] = a
    out[#out + 1] = b
  else
    out[2] = s
    full = true
    break
  end
end
-- A window full of jobs set aside, or gone, says to claim again; one
-- full of live leases (late renewals) would say so again at once.
if not full and #ids == 2 * limit and 2 * skipped < #ids then out[2] = tonumber(cand[#cand]) end
-- Past a full window, more may come within reach before the wake.
if #ids == 2 * limit and tonumber(cand[#cand]) > now then soon(tonumber(cand[#cand])) end
out[4] = wake
if #zadd > 0 then
  redis.call('ZADD', KEYS[1], unpack(zadd))
  redis.call('HSET', KEYS[3], unpack(hset))
  redis.call('ZADD', prefix .. 'lease:' .. worker, unpack(mine))
end
if #gone > 0 then redis.call('ZREM', KEYS[1], unpack(gone)) end
if #rem > 0 then
  redis.call('ZREM', KEYS[1], unpack(rem))
  for kind, p in pairs(park) do
    redis.call('ZADD', prefix .. 'park:' .. kind, unpack(p))
    redis.call('SADD', KEYS[6], kind)
  end
end
return out
`, luaKind, luaHolder, luaUnlease, luaUnpark, luaNext)

// ClaimArgs are what a claim asks for.
type ClaimArgs struct {
	Limit   int    // the most jobs to lease
	Lease   int64  // µs
	Worker  string // the worker's ID
	Horizon int64  // µs: how far ahead of its due time a job is leased
	TTL     int64  // µs: how long the worker counts as live
}

// A Lease is one job a claim leased.
type Lease struct {
	ID    string
	Token Token // Due: its due time (its score before the claim)
	Blob  string
}

// Claimed is a claim's reply.
type Claimed struct {
	Now    int64    // the server's clock, µs
	Left   int64    // the score of the first job within the horizon it left; -1 if it saw none
	Paused []string // the paused kinds
	Wake   int64    // when to claim next for what it could not take (µs); -1 for nothing
	Jobs   []Lease
}

// Claim leases up to a.Limit jobs due within a.Horizon to a.Worker. It
// costs one round trip, O(log n + 2·limit).
func (c *Client) Claim(ctx context.Context, k Keys, a ClaimArgs) (Claimed, error) {
	r := decode(claimScript.name, c.run(ctx, claimScript, k.all, k.Prefix, a.Limit, a.Lease, a.Worker, a.Horizon, a.TTL))
	out := Claimed{Now: r.int(0), Left: r.int(1), Paused: r.strs(2), Wake: r.int(3)}
	n := r.rest(4, 4)
	if n > 0 {
		out.Jobs = make([]Lease, 0, n)
	}
	for i := 4; i < 4+4*n && r.err == nil; i += 4 {
		l := Lease{ID: r.str(i), Blob: r.str(i + 3)}
		l.Token = Token{Attempt: int(r.int(i + 2)), Worker: a.Worker, Due: r.score(i + 1)}
		out.Jobs = append(out.Jobs, l)
	}
	return out, r.err
}

// A Held is a lease the worker holds: the job's ID and its token.
type Held struct {
	ID    string
	Token string
}

// ackScript deletes the jobs whose lease each token still holds, and
// returns {lost, gone}: the IDs of the others, those whose job exists
// (its lease taken) and those whose job is gone (cancelled). One command
// per key for all of them.
//
//	KEYS[1] -> {name}:due    ZREM the held
//	KEYS[2] -> {name}:job    HEXISTS the others; HDEL the held
//	KEYS[3] -> {name}:run    HMGET; HDEL the held
//	{name}:lease:<worker>    ZREM the held
//	{name}:tries             HDEL the held
//	ARGV[1] -> prefix
//	ARGV[2] -> worker
//	ARGV[3..] -> id, token, id, token, ...
var ackScript = newScript("ack", `
local ids, toks = {}, {}
for i = 3, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
  toks[#toks + 1] = ARGV[i + 1]
end
local runs = redis.call('HMGET', KEYS[3], unpack(ids))
local held, lost, gone = {}, {}, {}
for k, id in ipairs(ids) do
  if runs[k] == toks[k] then
    held[#held + 1] = id
  elseif redis.call('HEXISTS', KEYS[2], id) == 1 then
    lost[#lost + 1] = id
  else
    gone[#gone + 1] = id
  end
end
if #held > 0 then
  redis.call('ZREM', KEYS[1], unpack(held))
  redis.call('HDEL', KEYS[2], unpack(held))
  redis.call('HDEL', KEYS[3], unpack(held))
  redis.call('HDEL', prefix .. 'tries', unpack(held))
  unlease(ARGV[2], held)
end
return {lost, gone}
`, luaUnlease)

// Acked is an ack's reply, and a renewal's first part: the leases it
// found lost to another worker, and those whose job is gone.
type Acked struct {
	Lost map[string]bool
	Gone map[string]bool
}

// Ack deletes the jobs of hs, held by worker, whose lease each token
// still holds. With
// Replication, the reply comes with an error wrapping ErrNotReplicated
// when the replicas fell short: the primary made the change. It costs
// one round trip, O(len(hs)·log n).
func (c *Client) Ack(ctx context.Context, k Keys, worker string, hs []Held) (Acked, error) {
	args := make([]any, 0, 2+2*len(hs))
	args = append(args, k.Prefix, worker)
	for _, h := range hs {
		args = append(args, h.ID, h.Token)
	}
	cmd := c.eval(ctx, ackScript, k.all, args...)
	var short error
	if err := cmd.Err(); IsNotReplicated(err) {
		short = err
		cmd.SetErr(nil)
	}
	r := decode(ackScript.name, cmd)
	a := Acked{Lost: set(r.strs(0)), Gone: set(r.strs(1))}
	r.rest(2, 1)
	if r.err != nil {
		return Acked{}, r.err
	}
	return a, short
}

func set(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// renewScript moves the leases the tokens still hold to at least
// now+lease (a job leased ahead keeps the later end it has), counts the
// worker live for ttl more, and returns {lost, gone, wake}: the others,
// as ackScript does, and when to claim the first jobs of :due (luaNext;
// -1 if none, or the queue is paused). So a worker that sends no claim
// still hears of a lease that ran out, or of a job no message announced.
//
//	KEYS[1] -> {name}:due      ZADD XX GT the held (one call); nextclaim: ZRANGE
//	KEYS[2] -> {name}:job      HEXISTS the others
//	KEYS[3] -> {name}:run      HGET each
//	KEYS[5] -> {name}:paused   SISMEMBER ""
//	KEYS[7] -> {name}:workers  ZADD worker
//	{name}:lease:<worker>      ZREM the lost and gone
//	ARGV[1] -> prefix
//	ARGV[2] -> lease µs
//	ARGV[3] -> worker
//	ARGV[4] -> ttl µs (0: the worker is closing)
//	ARGV[5] -> hz µs
//	ARGV[6..] -> id, token, id, token, ...
var renewScript = newScript("renew", `
local now = clock()
redis.call('ZADD', KEYS[7], fmt(now + tonumber(ARGV[4])), ARGV[3])
local dl = fmt(now + tonumber(ARGV[2]))
local lost, gone, held = {}, {}, {}
for i = 6, #ARGV, 2 do
  if redis.call('HGET', KEYS[3], ARGV[i]) == ARGV[i + 1] then
    held[#held + 1] = dl
    held[#held + 1] = ARGV[i]
  elseif redis.call('HEXISTS', KEYS[2], ARGV[i]) == 1 then
    lost[#lost + 1] = ARGV[i]
  else
    gone[#gone + 1] = ARGV[i]
  end
end
-- One ZADD a key for all the leases held, 1,000 at a time (unpack's
-- bound is 8,000 values).
for i = 1, #held, 2000 do
  redis.call('ZADD', KEYS[1], 'XX', 'GT', unpack(held, i, math.min(i + 1999, #held)))
end
unlease(ARGV[3], lost)
unlease(ARGV[3], gone)
local wake = -1
if redis.call('SISMEMBER', KEYS[5], '') == 0 then wake = nextclaim('-inf', now, tonumber(ARGV[5]), ARGV[3]) end
return {lost, gone, wake}
`, luaHolder, luaUnlease, luaNext)

// RenewArgs are a renewal's parameters.
type RenewArgs struct {
	Lease   int64 // µs
	Worker  string
	TTL     int64 // µs; 0 once the worker is closing
	Horizon int64 // µs
}

// Renewed is a renewal's reply.
type Renewed struct {
	Acked       // the leases lost, and those whose job is gone
	Wake  int64 // when to claim the first jobs of :due (µs); -1 if none
}

// Renew extends the leases of hs that their tokens still hold to
// now+a.Lease at least. It costs one round trip, O(len(hs)·log n).
func (c *Client) Renew(ctx context.Context, k Keys, a RenewArgs, hs []Held) (Renewed, error) {
	args := make([]any, 0, 5+2*len(hs))
	args = append(args, k.Prefix, a.Lease, a.Worker, a.TTL, a.Horizon)
	for _, h := range hs {
		args = append(args, h.ID, h.Token)
	}
	r := decode(renewScript.name, c.run(ctx, renewScript, k.all, args...))
	out := Renewed{Acked{Lost: set(r.strs(0)), Gone: set(r.strs(1))}, r.int(2)}
	if r.rest(3, 1) != 0 {
		r.err = &ReplyError{renewScript.name, "more than 3 fields"}
	}
	return out, r.err
}

// failScript ends a leased attempt that failed: the job is due again
// after backoff (it returns that time, in µs), or dead with its error
// once the attempt was the last (0); -1 if the token no longer holds the
// lease, -2 if the job is gone. With tell "1", a live worker other than
// worker is told of the retry. It appends the attempt's record to
// {name}:tries (tries.go).
//
//	KEYS[1] -> {name}:due      ZADD id (retry) or ZREM id (dead)
//	KEYS[2] -> {name}:job      HEXISTS id
//	KEYS[3] -> {name}:run      HGET, HSET id
//	KEYS[4] -> {name}:dead     HSET id (dead)
//	KEYS[7] -> {name}:workers  read
//	{name}:lease:<worker>      ZREM id
//	ARGV[1] -> prefix
//	ARGV[2] -> id
//	ARGV[3] -> token
//	ARGV[4] -> max attempts
//	ARGV[5] -> backoff µs
//	ARGV[6] -> error
//	ARGV[7] -> horizon µs
//	ARGV[8] -> tell: "1" to tell a live worker
//	ARGV[9] -> worker: the token's
//	ARGV[10] -> started µs: when the attempt started (for its record in {name}:tries)
var failScript = newScript("fail", `
if redis.call('HGET', KEYS[3], ARGV[2]) ~= ARGV[3] then
  if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then return -2 end
  return -1
end
local a = tonumber(string.match(ARGV[3], '^%d+'))
redis.call('HSET', KEYS[3], ARGV[2], fmt(a))
unlease(ARGV[9], {ARGV[2]})
local now, pick = clock()
local last = a >= tonumber(ARGV[4])
tried(ARGV[2], fmt(a), ARGV[9], ARGV[10], fmt(now), last and 'd' or 'r', ARGV[6])
if last then
  redis.call('ZREM', KEYS[1], ARGV[2])
  redis.call('HSET', KEYS[4], ARGV[2], ARGV[6])
  return 0
end
local s = now + tonumber(ARGV[5])
redis.call('ZADD', KEYS[1], fmt(s), ARGV[2])
if ARGV[8] == '1' then notify(now, pick, s, tonumber(ARGV[7]), ARGV[9]) end
return s
`, luaUnlease, luaNotify, luaTried)

// FailArgs are a failed attempt's end.
type FailArgs struct {
	ID       string
	Token    string
	Attempts int    // the kind's most attempts
	Backoff  int64  // µs until the retry
	Err      string // kept as a dead job's error
	Tell     bool   // tell a live worker other than Worker of the retry
	Worker   string
	Started  int64 // µs on the server's clock: when the attempt started
}

// Failed is the outcome of Fail.
type Failed struct {
	Retry int64 // µs: when the job is due again; 0 if not retried
	Dead  bool  // the attempt was the last: the job is dead
	Lost  bool  // the token no longer holds the lease
	Gone  bool  // the job is gone
}

// Fail ends the leased attempt of a.ID that failed. It costs one round
// trip, O(log n).
func (c *Client) Fail(ctx context.Context, k Keys, a FailArgs) (Failed, error) {
	n, err := integer(failScript.name, c.run(ctx, failScript, k.all, k.Prefix, a.ID, a.Token, a.Attempts, a.Backoff, a.Err, Horizon, flag(a.Tell), a.Worker, a.Started))
	switch {
	case err != nil:
		return Failed{}, err
	case n == 0:
		return Failed{Dead: true}, nil
	case n == -1:
		return Failed{Lost: true}, nil
	case n == -2:
		return Failed{Gone: true}, nil
	case n < 0:
		return Failed{}, &ReplyError{failScript.name, "a negative time " + strconv.FormatInt(n, 10)}
	}
	return Failed{Retry: n}, nil
}

// releaseScript hands back the jobs whose lease each token still holds,
// leased ahead and not started: each is due again at its due time, its
// attempt not counted, and a live worker other than worker is told. With
// closing "1", worker no longer counts as live. It returns how many it
// handed back.
//
//	KEYS[1] -> {name}:due      ZADD each
//	KEYS[3] -> {name}:run      HGET, HSET or HDEL each
//	KEYS[7] -> {name}:workers  ZREM worker (closing); read
//	{name}:lease:<worker>      ZREM the handed back
//	ARGV[1] -> prefix
//	ARGV[2] -> worker
//	ARGV[3] -> closing: "1"
//	ARGV[4] -> horizon µs
//	ARGV[5..] -> id, token, id, token, ...
var releaseScript = newScript("release", `
local now, pick = clock()
if ARGV[3] == '1' then redis.call('ZREM', KEYS[7], ARGV[2]) end
local first, n, back = -1, 0, {}
for i = 5, #ARGV, 2 do
  local id, tok = ARGV[i], ARGV[i + 1]
  if redis.call('HGET', KEYS[3], id) == tok then
    local a, d = string.match(tok, '^(%d+)|[^|]*|(%d+)$')
    d = tonumber(d) or now
    a = tonumber(a) - 1
    redis.call('ZADD', KEYS[1], fmt(d), id)
    if a > 0 then redis.call('HSET', KEYS[3], id, fmt(a)) else redis.call('HDEL', KEYS[3], id) end
    if first < 0 or d < first then first = d end
    n = n + 1
    back[#back + 1] = id
  end
end
unlease(ARGV[2], back)
if first >= 0 then notify(now, pick, first, tonumber(ARGV[4]), ARGV[2]) end
return n
`, luaUnlease, luaNotify)

// Release hands back the leases of hs that their tokens still hold,
// unstarted, and with closing takes worker off the live workers. It
// returns how many it handed back. It costs one round trip,
// O(len(hs)·log n).
func (c *Client) Release(ctx context.Context, k Keys, worker string, closing bool, hs []Held) (int, error) {
	args := make([]any, 0, 4+2*len(hs))
	args = append(args, k.Prefix, worker, flag(closing), Horizon)
	for _, h := range hs {
		args = append(args, h.ID, h.Token)
	}
	n, err := integer(releaseScript.name, c.run(ctx, releaseScript, k.all, args...))
	return int(n), err
}
