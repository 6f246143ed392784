package durable

import "github.com/redis/go-redis/v9"

// The Lua scripts, one per operation, each atomic on the store. They share
// a layout (see the Queue's type doc), and all take the same KEYS: :due,
// :job, :run and :dead, which one hash tag puts in one Cluster slot:
//
//	{name}:due   sorted set  id -> when the job is next claimable, in µs
//	                         since the Unix epoch on the server's clock:
//	                         its due time, or the end of its lease
//	{name}:job   hash        id -> kind NUL payload
//	{name}:run   hash        id -> "attempt|worker" while leased,
//	                         "attempt" once an attempt has failed
//	{name}:dead  hash        id -> the last error of a dead job
//
// A job exists while its :job field does. It is pending, running or dead:
// running while its :run value holds a worker, dead while :dead holds it.
//
// Numbers cross into redis.call as strings made by string.format('%d'):
// Lua 5.1 turns a number into a string with 14 significant digits, and a
// time in µs has 16.

// scheduleScript adds a job unless its ID exists: 1 if added, 0 if not.
// ARGV: id, µs, blob, relative ("1": µs is a delay from the server's
// now), channel.
var scheduleScript = redis.NewScript(spublish + `
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
local s = tonumber(ARGV[2])
if ARGV[4] == '1' then local t = redis.call('TIME'); s = s + t[1] * 1000000 + t[2] end
s = string.format('%d', s)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[1], s, ARGV[1])
spublish(ARGV[5], s)
return 1
`)

// rescheduleScript moves a pending or dead job to a new due time: 1 if
// moved, 0 if no such job, -1 if it is running. A dead job comes back
// with its attempts forgotten.
// ARGV: id, µs, relative, channel.
var rescheduleScript = redis.NewScript(spublish + `
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return 0 end
local r = redis.call('HGET', KEYS[3], ARGV[1])
if r and string.find(r, '|', 1, true) then return -1 end
local s = tonumber(ARGV[2])
if ARGV[3] == '1' then local t = redis.call('TIME'); s = s + t[1] * 1000000 + t[2] end
s = string.format('%d', s)
if redis.call('HDEL', KEYS[4], ARGV[1]) == 1 then redis.call('HDEL', KEYS[3], ARGV[1]) end
redis.call('ZADD', KEYS[1], s, ARGV[1])
spublish(ARGV[4], s)
return 1
`)

// cancelScript deletes a job, whatever its state: 1 if it existed.
// ARGV: id.
var cancelScript = redis.NewScript(`
if redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return 1
`)

// claimScript leases up to limit jobs due on the server's clock to worker
// until now+lease. It returns {now, next, id, due, attempt, blob, ...}:
// the server's time, the earliest score left in :due (-1 if none), and
// each leased job with the score it had, its attempt number (1 for the
// first) and its blob. It reads and writes all the jobs with one command
// per key, not one per job: a claim in a burst carries hundreds.
// ARGV: limit, lease µs, worker.
var claimScript = redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local due = redis.call('ZRANGE', KEYS[1], '-inf', string.format('%d', now), 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[1]), 'WITHSCORES')
local out = {now, -1}
if #due > 0 then
  local ids = {}
  for i = 1, #due, 2 do ids[#ids + 1] = due[i] end
  local blobs = redis.call('HMGET', KEYS[2], unpack(ids))
  local runs = redis.call('HMGET', KEYS[3], unpack(ids))
  local dl = string.format('%d', now + tonumber(ARGV[2]))
  local zadd, hset, gone = {}, {}, {}
  for k, id in ipairs(ids) do
    if blobs[k] then
      local a = 1
      if runs[k] then a = tonumber(string.match(runs[k], '^%d+')) + 1 end
      zadd[#zadd + 1] = dl
      zadd[#zadd + 1] = id
      hset[#hset + 1] = id
      hset[#hset + 1] = a .. '|' .. ARGV[3]
      out[#out + 1] = id
      out[#out + 1] = due[2 * k]
      out[#out + 1] = a
      out[#out + 1] = blobs[k]
    else
      gone[#gone + 1] = id
    end
  end
  if #zadd > 0 then
    redis.call('ZADD', KEYS[1], unpack(zadd))
    redis.call('HSET', KEYS[3], unpack(hset))
  end
  if #gone > 0 then redis.call('ZREM', KEYS[1], unpack(gone)) end
end
local nx = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if nx[2] then out[2] = tonumber(nx[2]) end
return out
`)

// ackScript deletes the jobs whose lease each token still holds, and
// returns how many it deleted: one command per key for all of them.
// ARGV: id, token, id, token, ...
var ackScript = redis.NewScript(`
local ids, toks = {}, {}
for i = 1, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
  toks[#toks + 1] = ARGV[i + 1]
end
local runs = redis.call('HMGET', KEYS[3], unpack(ids))
local held = {}
for k, id in ipairs(ids) do
  if runs[k] == toks[k] then held[#held + 1] = id end
end
if #held > 0 then
  redis.call('ZREM', KEYS[1], unpack(held))
  redis.call('HDEL', KEYS[2], unpack(held))
  redis.call('HDEL', KEYS[3], unpack(held))
end
return #held
`)

// renewScript moves the leases the tokens still hold to now+lease, and
// returns the IDs of those it no longer holds.
// ARGV: lease µs, id, token, id, token, ...
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local dl = string.format('%d', t[1] * 1000000 + t[2] + tonumber(ARGV[1]))
local lost = {}
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[3], ARGV[i]) == ARGV[i + 1] then
    redis.call('ZADD', KEYS[1], 'XX', dl, ARGV[i])
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return lost
`)

// failScript ends a leased attempt that failed: the job is due again
// after backoff (1), or dead with its error once the attempt was the
// last (0); -1 if the token no longer holds the lease.
// ARGV: id, token, max attempts, backoff µs, error, channel.
var failScript = redis.NewScript(spublish + `
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return -1 end
local a = tonumber(string.match(ARGV[2], '^%d+'))
redis.call('HSET', KEYS[3], ARGV[1], string.format('%d', a))
if a >= tonumber(ARGV[3]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[5])
  return 0
end
local t = redis.call('TIME')
local s = string.format('%d', t[1] * 1000000 + t[2] + tonumber(ARGV[4]))
redis.call('ZADD', KEYS[1], s, ARGV[1])
spublish(ARGV[6], s)
return 1
`)

// lookupScript returns a job's {blob, score, run, dead}, each false when
// absent.
// ARGV: id.
var lookupScript = redis.NewScript(`
return {redis.call('HGET', KEYS[2], ARGV[1]), redis.call('ZSCORE', KEYS[1], ARGV[1]),
  redis.call('HGET', KEYS[3], ARGV[1]), redis.call('HGET', KEYS[4], ARGV[1])}
`)
