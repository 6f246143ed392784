package store

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// A script is one of the Lua scripts, with the name its errors carry.
type script struct {
	name string
	lua  *redis.Script
}

// newScript makes a script of the Lua functions it uses (luaBase's
// always, LuaSPublish's if it publishes), then body. Every script takes
// a Keys' keys as KEYS, and ARGV[1] is its prefix.
func newScript(name, body string, uses ...string) *script {
	lua := strings.Join(uses, "") + strings.TrimSpace(body) + "\n"
	if strings.Contains(lua, "spublish(") {
		lua = LuaSPublish + lua
	}
	return &script{name: name, lua: redis.NewScript(luaBase + lua)}
}

// LuaSPublish is the Lua function the scripts publish with: SPUBLISH on
// Redis 7 or later (redis.REDIS_VERSION_NUM is 7.0's), PUBLISH before.
// On a Redis Cluster, PUBLISH sends every message over the cluster bus
// to every node; SPUBLISH keeps it on the nodes of its channel's slot.
const LuaSPublish = `
local function spublish(ch, msg)
  if redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000 then
    redis.call('SPUBLISH', ch, msg)
  else
    redis.call('PUBLISH', ch, msg)
  end
end
`

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
	// less orders two strings by their bytes, as Go does; Lua's < on
	// strings follows the server's locale.
	luaLess = `local function less(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
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
	// unlease takes ids (a table) off the set of the jobs worker w holds.
	luaUnlease = `local function unlease(w, ids)
  if #ids > 0 then redis.call('ZREM', prefix .. 'lease:' .. w, unpack(ids)) end
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

// flag returns a script's boolean argument.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
