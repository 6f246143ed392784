package durable

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// The store's layout. Every key of a queue starts with one prefix,
// "{name}:", whose hash tag puts them all in one Redis Cluster slot; the
// scripts take the prefix as a parameter (keyset), so that a queue spread
// over several prefixes (shards) runs the same scripts once per prefix.
//
//	{name}:due          sorted set  id -> when the job is next claimable, in µs
//	                                since the Unix epoch on the server's clock:
//	                                its due time (or retry time) while no worker
//	                                holds it; max(due, claim time) + lease once a
//	                                worker holds it; now + lease at each renewal
//	{name}:job          hash        id -> kind NUL payload
//	{name}:run          hash        id -> "attempt|worker|due" while worker holds
//	                                the lease (due: the µs the attempt is due,
//	                                which may still be ahead: see below; a lease
//	                                written by an older version is "attempt|worker"),
//	                                "attempt" once an attempt has failed or was
//	                                handed back
//	{name}:dead         hash        id -> the last error of a dead job
//	{name}:paused       set         the paused kinds; "" for the whole queue
//	{name}:park:<kind>  sorted set  id -> due µs: the jobs of a paused kind that
//	                                came due (a claim moves them here from :due;
//	                                Resume, or a claim once the kind is resumed,
//	                                moves them back)
//	{name}:parked       set         the kinds whose park set may hold jobs
//	{name}:workers      sorted set  worker -> µs until which it counts as live
//	                                (each claim and renewal moves it on)
//	{name}:ev           channel     to every worker: "p<kind>" paused, "r<kind>"
//	                                resumed, "n<µs>" a job due then that a full
//	                                worker passes on
//	{name}:ev:<worker>  channel     to one worker: "n<µs>" a job due within the
//	                                horizon (2 s) was added or moved, "c<id>" a job
//	                                it holds was cancelled or taken back
//
// A job exists while its :job field does. Its state, as read from the
// keys (Lookup does this; so may any reader, at the server's TIME now):
//
//   - dead: :dead holds it (it is in no sorted set);
//   - running: :run holds "attempt|worker|due" with due <= now, or
//     "attempt|worker" (a worker's handler runs it, or starts it within a
//     tick);
//   - pending, leased ahead: :run holds "attempt|worker|due" with due > now:
//     a worker holds it in its wheel, to start it at due;
//   - pending otherwise: waiting for its due time when its :due score is
//     after now, waiting to be claimed when it is at or before now (also a
//     lease that ran out: :run still names the dead worker), and waiting
//     for its kind's Resume when it is in a park set.
//
// Numbers cross into redis.call as strings made by string.format('%d'):
// Lua 5.1 turns a number into a string with 14 significant digits, and a
// time in µs has 16.

// horizon is how far ahead of its due time a job is leased at the most,
// and so how soon a job must be due for Schedule to tell a worker of it
// whatever else :due holds: one no worker's armed claim would find in
// time.
const horizon = 2_000_000 // µs

// A keyset names the keys of one prefix, in the order every script takes
// them as KEYS.
type keyset struct {
	prefix string   // "{name}:"
	all    []string // due, job, run, dead, paused, parked, workers
	ev     string   // the channel to every worker
}

func newKeyset(prefix string) keyset {
	k := keyset{prefix: prefix, ev: prefix + "ev"}
	for _, s := range []string{"due", "job", "run", "dead", "paused", "parked", "workers"} {
		k.all = append(k.all, prefix+s)
	}
	return k
}

func (k keyset) due() string     { return k.all[0] }
func (k keyset) job() string     { return k.all[1] }
func (k keyset) run() string     { return k.all[2] }
func (k keyset) dead() string    { return k.all[3] }
func (k keyset) paused() string  { return k.all[4] }
func (k keyset) parked() string  { return k.all[5] }
func (k keyset) workers() string { return k.all[6] }

// park returns the key of kind's park set.
func (k keyset) park(kind string) string { return k.prefix + "park:" + kind }

// inbox returns the channel of one worker.
func (k keyset) inbox(worker string) string { return k.prefix + "ev:" + worker }

// script makes a script of the Lua functions it uses (luaBase's always,
// spublish's if it publishes), then body. KEYS are a keyset's; ARGV[1] is
// its prefix.
func script(body string, uses ...string) *redis.Script {
	lua := strings.Join(uses, "") + strings.TrimSpace(body) + "\n"
	if strings.Contains(lua, "spublish(") {
		lua = spublish + lua
	}
	return redis.NewScript(luaBase + lua)
}

// The Lua functions the scripts share, each defined only in the scripts
// that call it: a script's chunk makes them anew on every call.
const (
	luaBase = `local prefix = ARGV[1]
local function fmt(x) return string.format('%d', x) end
-- clock returns the server's time in µs, and its µs part, a number to pick with.
local function clock()
  local t = redis.call('TIME')
  return t[1] * 1000000 + t[2], tonumber(t[2])
end
`
	luaKind = `local function kindof(blob)
  local i = string.find(blob, '\0', 1, true)
  if i then return string.sub(blob, 1, i - 1) end
  return blob
end
`
	// holder returns the worker a :run value names, and the due µs it
	// holds the job for (nil for a lease without one).
	luaHolder = `local function holder(r)
  if not r then return nil end
  local w, d = string.match(r, '^%d+|([^|]*)|?(%d*)$')
  if not w then return nil end
  return w, tonumber(d)
end
`
	// notify tells one live worker other than except that a job is due at
	// s, if s is within hz of now, or if it is the first of :due: a job
	// before it has a worker's claim armed for it (see luaNext), which
	// finds this one.
	luaNotify = `local function notify(now, pick, s, hz, except)
  if s > now + hz and redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. fmt(s)) > 0 then return end
  local ws = redis.call('ZRANGE', KEYS[7], fmt(now), '+inf', 'BYSCORE')
  local live = {}
  for _, w in ipairs(ws) do if w ~= except then live[#live + 1] = w end end
  if #live == 0 then return end
  spublish(prefix .. 'ev:' .. live[pick % #live + 1], 'n' .. fmt(s))
end
`
	// nextclaim returns when worker should claim next for the first jobs
	// of :due scored after from: hz/2 before the score of a job no live
	// lease holds (so that the claim then leases half a horizon of jobs
	// at once), the end of another worker's live lease; -1 if none. It
	// skips worker's own leases, and reads 8 jobs at most: past them, it
	// takes the last's score as a job's (early, never late).
	luaNext = `local function nextclaim(from, now, hz, worker)
  local z = redis.call('ZRANGE', KEYS[1], from, '+inf', 'BYSCORE', 'LIMIT', 0, 8, 'WITHSCORES')
  if #z == 0 then return -1 end
  local ids = {}
  for i = 1, #z, 2 do ids[#ids + 1] = z[i] end
  local runs = redis.call('HMGET', KEYS[3], unpack(ids))
  local lead, wake = math.floor(hz / 2), -1
  for k = 1, #ids do
    local s = tonumber(z[2 * k])
    if wake >= 0 and s - lead >= wake then return wake end
    local w = holder(runs[k])
    local t = s - lead
    if w and s > now then t = s end
    if not (w == worker and s > now) and (wake < 0 or t < wake) then wake = t end
  end
  if #ids == 8 then
    local t = tonumber(z[16]) - lead
    if wake < 0 or t < wake then wake = t end
  end
  return wake
end
`
	// unpark moves up to n jobs of kind from its park set back to :due,
	// and returns how many it left there.
	luaUnpark = `local function unpark(kind, n)
  local pk = prefix .. 'park:' .. kind
  local z = redis.call('ZRANGE', pk, 0, n - 1, 'WITHSCORES')
  if #z > 0 then
    local add, rem = {}, {}
    for i = 1, #z, 2 do
      add[#add + 1] = z[i + 1]
      add[#add + 1] = z[i]
      rem[#rem + 1] = z[i]
    end
    redis.call('ZADD', KEYS[1], unpack(add))
    redis.call('ZREM', pk, unpack(rem))
  end
  local left = redis.call('ZCARD', pk)
  if left == 0 then redis.call('SREM', KEYS[6], kind) end
  return left
end
`
)

// scheduleScript adds a job unless its ID exists: 1 if added, 0 if not.
// A job due within the horizon is announced to one live worker.
// ARGV: prefix, id, µs, blob, relative ("1": µs is a delay from the
// server's now), horizon µs.
var scheduleScript = script(`
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return 0 end
local now, pick = clock()
local s = tonumber(ARGV[3])
if ARGV[5] == '1' then s = s + now end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
redis.call('ZADD', KEYS[1], fmt(s), ARGV[2])
notify(now, pick, s, tonumber(ARGV[6]), '')
return 1
`, luaNotify)

// rescheduleScript moves a pending or dead job to a new due time: 1 if
// moved, 0 if no such job, -1 if it is running (or leased ahead and due
// within margin). A dead job comes back with its attempts forgotten; a job
// leased ahead is taken back from its worker, told so.
// ARGV: prefix, id, µs, relative, horizon µs, margin µs.
var rescheduleScript = script(`
local b = redis.call('HGET', KEYS[2], ARGV[2])
if not b then return 0 end
local now, pick = clock()
local r = redis.call('HGET', KEYS[3], ARGV[2])
local w, d = holder(r)
if w then
  if not d or d <= now + tonumber(ARGV[6]) then return -1 end
  spublish(prefix .. 'ev:' .. w, 'c' .. ARGV[2])
  local a = tonumber(string.match(r, '^%d+')) - 1
  if a > 0 then redis.call('HSET', KEYS[3], ARGV[2], fmt(a)) else redis.call('HDEL', KEYS[3], ARGV[2]) end
end
local s = tonumber(ARGV[3])
if ARGV[4] == '1' then s = s + now end
if redis.call('HDEL', KEYS[4], ARGV[2]) == 1 then redis.call('HDEL', KEYS[3], ARGV[2]) end
redis.call('ZREM', prefix .. 'park:' .. kindof(b), ARGV[2])
redis.call('ZADD', KEYS[1], fmt(s), ARGV[2])
notify(now, pick, s, tonumber(ARGV[5]), '')
return 1
`, luaKind, luaHolder, luaNotify)

// cancelScript deletes a job, whatever its state, and tells the worker
// that holds it: 1 if it existed.
// ARGV: prefix, id.
var cancelScript = script(`
local b = redis.call('HGET', KEYS[2], ARGV[2])
if not b then return 0 end
local w = holder(redis.call('HGET', KEYS[3], ARGV[2]))
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREM', prefix .. 'park:' .. kindof(b), ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[2])
if w then spublish(prefix .. 'ev:' .. w, 'c' .. ARGV[2]) end
return 1
`, luaKind, luaHolder)

// claimScript leases to worker up to limit jobs due within hz of the
// server's now, each until max(due, now)+lease: those no worker holds, and
// those whose lease ran out. A job of a paused kind goes to its park set
// instead; with the whole queue paused, nothing is leased. The worker
// counts as live for ttl more.
//
// It returns {now, left, paused, wake, id, due, attempt, blob, ...}:
//   - now: the server's time;
//   - left: the score of the first job within hz it left, -1 if it saw
//     none (there may be more when it leased limit, or scanned 2*limit
//     candidates mostly set aside);
//   - paused: the paused kinds;
//   - wake: when to claim next for what it could not take, -1 for
//     nothing. It is the earliest of: the end of a live lease it saw; the
//     time the first jobs past hz come within reach (luaNext); now, if
//     jobs are still parked;
//   - then each leased job: its ID, its due time (its score before the
//     claim), its attempt number (1 for the first) and its blob.
//
// It reads and writes all the jobs with one command per key, not one per
// job.
// ARGV: prefix, limit, lease µs, worker, hz µs, ttl µs.
var claimScript = script(`
local now = clock()
local limit, lease, worker, hz = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
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
local zadd, hset, gone, park, rem = {}, {}, {}, {}, {}
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
    zadd[#zadd + 1] = fmt(math.max(s, now) + lease)
    zadd[#zadd + 1] = id
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
`, luaKind, luaHolder, luaUnpark, luaNext)

// ackScript deletes the jobs whose lease each token still holds, and
// returns {lost, gone}: the IDs of the others, those whose job exists
// (its lease taken) and those whose job is gone (cancelled). One command
// per key for all of them.
// ARGV: prefix, id, token, id, token, ...
var ackScript = script(`
local ids, toks = {}, {}
for i = 2, #ARGV, 2 do
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
end
return {lost, gone}
`)

// renewScript moves the leases the tokens still hold to at least
// now+lease (a job leased ahead keeps the later end it has), counts the
// worker live for ttl more, and returns {lost, gone, wake}: the others,
// as ackScript does, and when to claim the first jobs of :due (luaNext;
// -1 if none, or the queue is paused). So a worker that sends no claim
// still hears of a lease that ran out, or of a job no message announced.
// ARGV: prefix, lease µs, worker, ttl µs, hz µs, id, token, id, token, ...
var renewScript = script(`
local now = clock()
redis.call('ZADD', KEYS[7], fmt(now + tonumber(ARGV[4])), ARGV[3])
local dl = fmt(now + tonumber(ARGV[2]))
local lost, gone = {}, {}
for i = 6, #ARGV, 2 do
  if redis.call('HGET', KEYS[3], ARGV[i]) == ARGV[i + 1] then
    redis.call('ZADD', KEYS[1], 'XX', 'GT', dl, ARGV[i])
  elseif redis.call('HEXISTS', KEYS[2], ARGV[i]) == 1 then
    lost[#lost + 1] = ARGV[i]
  else
    gone[#gone + 1] = ARGV[i]
  end
end
local wake = -1
if redis.call('SISMEMBER', KEYS[5], '') == 0 then wake = nextclaim('-inf', now, tonumber(ARGV[5]), ARGV[3]) end
return {lost, gone, wake}
`, luaHolder, luaNext)

// failScript ends a leased attempt that failed: the job is due again
// after backoff (it returns that time, in µs), or dead with its error
// once the attempt was the last (0); -1 if the token no longer holds the
// lease, -2 if the job is gone. With tell "1", a live worker other than
// worker is told of the retry.
// ARGV: prefix, id, token, max attempts, backoff µs, error, horizon µs,
// tell, worker.
var failScript = script(`
if redis.call('HGET', KEYS[3], ARGV[2]) ~= ARGV[3] then
  if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then return -2 end
  return -1
end
local a = tonumber(string.match(ARGV[3], '^%d+'))
redis.call('HSET', KEYS[3], ARGV[2], fmt(a))
if a >= tonumber(ARGV[4]) then
  redis.call('ZREM', KEYS[1], ARGV[2])
  redis.call('HSET', KEYS[4], ARGV[2], ARGV[6])
  return 0
end
local now, pick = clock()
local s = now + tonumber(ARGV[5])
redis.call('ZADD', KEYS[1], fmt(s), ARGV[2])
if ARGV[8] == '1' then notify(now, pick, s, tonumber(ARGV[7]), ARGV[9]) end
return s
`, luaNotify)

// releaseScript hands back the jobs whose lease each token still holds,
// leased ahead and not started: each is due again at its due time, its
// attempt not counted, and a live worker other than worker is told. With
// closing "1", worker no longer counts as live. It returns how many it
// handed back.
// ARGV: prefix, worker, closing, horizon µs, id, token, id, token, ...
var releaseScript = script(`
local now, pick = clock()
if ARGV[3] == '1' then redis.call('ZREM', KEYS[7], ARGV[2]) end
local first, n = -1, 0
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
  end
end
if first >= 0 then notify(now, pick, first, tonumber(ARGV[4]), ARGV[2]) end
return n
`, luaNotify)

// lookupScript returns a job's {blob, score, run, dead, now}, each false
// when absent: the score in :due, or in its kind's park set.
// ARGV: prefix, id.
var lookupScript = script(`
local b = redis.call('HGET', KEYS[2], ARGV[2])
if not b then return {false, false, false, false, clock()} end
local s = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not s then s = redis.call('ZSCORE', prefix .. 'park:' .. kindof(b), ARGV[2]) end
return {b, s, redis.call('HGET', KEYS[3], ARGV[2]), redis.call('HGET', KEYS[4], ARGV[2]), clock()}
`, luaKind)

// pauseScript pauses kind ("" for the whole queue) and tells every
// worker: 1 if it was not paused.
// ARGV: prefix, kind.
var pauseScript = script(`
local n = redis.call('SADD', KEYS[5], ARGV[2])
spublish(prefix .. 'ev', 'p' .. ARGV[2])
return n
`)

// resumeScript resumes kind ("" for the whole queue), tells every worker,
// and moves up to n of its parked jobs back to :due; it returns how many
// it left parked.
// ARGV: prefix, kind, n.
var resumeScript = script(`
redis.call('SREM', KEYS[5], ARGV[2])
spublish(prefix .. 'ev', 'r' .. ARGV[2])
if ARGV[2] == '' then return 0 end
return unpark(ARGV[2], tonumber(ARGV[3]))
`, luaUnpark)

// unparkScript moves up to n parked jobs of kind back to :due unless the
// kind is paused again, and returns how many it left parked (0 if
// paused).
// ARGV: prefix, kind, n.
var unparkScript = script(`
if redis.call('SISMEMBER', KEYS[5], ARGV[2]) == 1 then return 0 end
return unpark(ARGV[2], tonumber(ARGV[3]))
`, luaUnpark)

// pausedScript returns the paused kinds.
// ARGV: prefix.
var pausedScript = script(`
return redis.call('SMEMBERS', KEYS[5])
`)

// snapScript returns the job id's {blob, score, run, dead} (each "" when
// absent) if MoveToShards may move it: dead, or pending, due more than
// margin ahead, and held by no lease. Else it returns nil.
// ARGV: prefix, id, margin µs.
var snapScript = script(`
local b = redis.call('HGET', KEYS[2], ARGV[2])
if not b then return false end
local s = redis.call('ZSCORE', KEYS[1], ARGV[2])
local r = redis.call('HGET', KEYS[3], ARGV[2])
local d = redis.call('HGET', KEYS[4], ARGV[2])
if holder(r) then return false end
if s then
  if tonumber(s) <= clock() + tonumber(ARGV[3]) then return false end
elseif not d then
  return false -- parked
end
return {b, s or '', r or '', d or ''}
`, luaHolder)

// putScript adds the job id as snapScript read it in another shard: 1 if
// added, or if the same job is there already (an earlier try's copy); 0
// if another job holds the ID. A pending job first in :due is announced
// to one live worker.
// ARGV: prefix, id, blob, score, run, dead ("" for none), horizon µs.
var putScript = script(`
local b = redis.call('HGET', KEYS[2], ARGV[2])
if b then
  if b ~= ARGV[3] or (redis.call('ZSCORE', KEYS[1], ARGV[2]) or '') ~= ARGV[4] or
    (redis.call('HGET', KEYS[4], ARGV[2]) or '') ~= ARGV[6] then return 0 end
  return 1
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[2], ARGV[5]) end
if ARGV[6] ~= '' then redis.call('HSET', KEYS[4], ARGV[2], ARGV[6]) end
if ARGV[4] ~= '' then
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
  local now, pick = clock()
  notify(now, pick, tonumber(ARGV[4]), tonumber(ARGV[7]), '')
end
return 1
`, luaNotify)

// dropScript deletes the job id if it is still as snapScript read it: 1
// if deleted, 0 if it changed or is gone.
// ARGV: prefix, id, blob, score, run, dead ("" for none).
var dropScript = script(`
if redis.call('HGET', KEYS[2], ARGV[2]) ~= ARGV[3] or
  (redis.call('ZSCORE', KEYS[1], ARGV[2]) or '') ~= ARGV[4] or
  (redis.call('HGET', KEYS[3], ARGV[2]) or '') ~= ARGV[5] or
  (redis.call('HGET', KEYS[4], ARGV[2]) or '') ~= ARGV[6] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[2])
return 1
`)
