package store

import (
	"context"
)

// kindsScript counts the jobs of a stretch of :job by kind and state: it
// walks :job with HSCAN from cursor until it has read budget jobs or the
// walk ends. A job is dead if :dead holds it, running if its :run token
// names a live worker (in {name}:workers after now) and a due time that
// has come, as Counts counts it, pending otherwise. It returns {now, next cursor ("0" at
// the end), total jobs, kind, pending, running, dead, ...}.
//
//	KEYS[2] -> {name}:job    HSCAN, HLEN
//	KEYS[4] -> {name}:dead   HMGET
//	KEYS[3] -> {name}:run      HMGET
//	KEYS[7] -> {name}:workers  ZSCORE, once for each worker named
//	ARGV[1] -> prefix
//	ARGV[2] -> cursor ("0" to start)
//	ARGV[3] -> budget
var kindsScript = newScript("kinds", `
local now = clock()
local cursor, budget, seen = ARGV[2], tonumber(ARGV[3]), 0
local live = {}
local function running(r)
  local w, d = holder(r)
  if not w or (d and d > now) then return false end
  if live[w] == nil then
    local u = redis.call('ZSCORE', KEYS[7], w)
    live[w] = u ~= false and tonumber(u) > now
  end
  return live[w]
end
local by, order = {}, {}
repeat
  local r = redis.call('HSCAN', KEYS[2], cursor, 'COUNT', 500)
  cursor = r[1]
  local ids, kinds = {}, {}
  for i = 1, #r[2], 2 do
    ids[#ids + 1] = r[2][i]
    kinds[#kinds + 1] = kindof(r[2][i + 1])
  end
  if #ids > 0 then
    local dead = redis.call('HMGET', KEYS[4], unpack(ids))
    local runs = redis.call('HMGET', KEYS[3], unpack(ids))
    for k = 1, #ids do
      local c = by[kinds[k]]
      if not c then
        c = {0, 0, 0}
        by[kinds[k]] = c
        order[#order + 1] = kinds[k]
      end
      if dead[k] then
        c[3] = c[3] + 1
      elseif running(runs[k]) then
        c[2] = c[2] + 1
      else
        c[1] = c[1] + 1
      end
    end
  end
  seen = seen + #ids
until cursor == '0' or seen >= budget
local out = {now, cursor, redis.call('HLEN', KEYS[2])}
for _, kind in ipairs(order) do
  local c = by[kind]
  out[#out + 1] = kind
  out[#out + 1] = c[1]
  out[#out + 1] = c[2]
  out[#out + 1] = c[3]
end
return out
`, luaKind, luaHolder)

// KindCount is a kind's jobs by state in a stretch of :job.
type KindCount struct {
	Kind                   string
	Pending, Running, Dead int64
}

// KindsCounted is a Kinds reply.
type KindsCounted struct {
	Now    int64  // the server's clock, µs
	Cursor string // where the walk stopped: "0" if it read every job
	Jobs   int64  // the jobs of the shard, all of them
	Kinds  []KindCount
}

// Kinds counts by kind and state the jobs of a walk of :job from cursor
// ("0" to start) until budget jobs or the end. It costs one round trip,
// O(budget·log n).
func (c *Client) Kinds(ctx context.Context, k Keys, cursor string, budget int) (KindsCounted, error) {
	r := decode(kindsScript.name, c.run(ctx, kindsScript, k.all, k.Prefix, cursor, budget))
	out := KindsCounted{Now: r.int(0), Cursor: r.str(1), Jobs: r.int(2)}
	n := r.rest(3, 4)
	for i := 3; i < 3+4*n && r.err == nil; i += 4 {
		out.Kinds = append(out.Kinds, KindCount{Kind: r.str(i), Pending: r.int(i + 1), Running: r.int(i + 2), Dead: r.int(i + 3)})
	}
	return out, r.err
}
