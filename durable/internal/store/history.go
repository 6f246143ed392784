package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// This file holds the scripts of the queue's history: Record, which a
// process's Queue sends once a second with what its workers did since,
// and History, which reads one kind's (or the queue's) buckets back. The
// keys, beside those of keys.go (all in the queue's shard 0):
//
//	{name}:hist:m          hash        the queue's minutes: slot -> a bucket
//	{name}:hist:h          hash        the queue's hours: slot -> a bucket
//	{name}:hist:m:<kind>   hash        a kind's minutes, as {name}:hist:m
//	{name}:hist:h:<kind>   hash        a kind's hours
//	{name}:hist:kinds      sorted set  kind -> its last write, µs; trimmed past Hours
//
// A hash is a ring: the bucket of minute (hour) i since the Unix epoch
// lives at slot i mod Minutes (Hours), so a hash never holds more than
// Minutes (Hours) fields, and a write to a slot that holds an older
// bucket starts it anew. A bucket is a line of integers separated by
// spaces: i, then the figures of Figures (counts, then the lateness's
// max µs, then the counts of the lateness's buckets). A minutes hash
// expires a day after its last write, an hours hash 30 days after.

// The rings' sizes: a day of minutes, 30 days of hours.
const (
	Minutes = 1440
	Hours   = 720
)

// The fields of a bucket's figures, in order; Figures[LateMax] is a
// max, every other a count. The lateness buckets follow them.
const (
	Started = iota
	Succeeded
	FailedN
	Retried
	Died
	LateMax
	Figures
)

// Hist returns the key of a history hash: hourly or by minute, of kind,
// or of the whole queue if all.
func (k Keys) Hist(hourly bool, kind string, all bool) string {
	key := k.Prefix + "hist:m"
	if hourly {
		key = k.Prefix + "hist:h"
	}
	if all {
		return key
	}
	return key + ":" + kind
}

// HistKinds returns the key of the kinds that have a history.
func (k Keys) HistKinds() string { return k.Prefix + "hist:kinds" }

// recordScript adds each kind's figures to its bucket of the minute and
// the hour of at, and to the queue's, as the ring's layout above says.
//
//	{name}:hist:m, {name}:hist:h                HGET, HSET, PEXPIRE
//	{name}:hist:m:<kind>, {name}:hist:h:<kind>  HGET, HSET, PEXPIRE
//	{name}:hist:kinds                           ZADD, ZREMRANGEBYSCORE
//	ARGV[1] -> prefix
//	ARGV[2] -> at µs (the server's clock)
//	ARGV[3] -> n: the figures of a kind (Figures and the lateness buckets)
//	ARGV[4..] -> kind, then n figures; kind, then n figures; ...
var recordScript = newScript("record", `
local at, n = tonumber(ARGV[2]), tonumber(ARGV[3])
local rings = {{'m', 60000000, 1440, 86400000}, {'h', 3600000000, 720, 2592000000}}
local function add(key, i, slots, ttl, v)
  local f = fmt(i % slots)
  local cur = {}
  local old = redis.call('HGET', key, f)
  if old then
    for x in string.gmatch(old, '%S+') do cur[#cur + 1] = tonumber(x) end
    if cur[1] ~= i or #cur ~= n + 1 then cur = {} end
  end
  if #cur == 0 then
    cur[1] = i
    for j = 1, n do cur[j + 1] = 0 end
  end
  for j = 1, n do
    if j == 6 then cur[j + 1] = math.max(cur[j + 1], v[j]) else cur[j + 1] = cur[j + 1] + v[j] end
  end
  for j = 1, n + 1 do cur[j] = fmt(cur[j]) end
  redis.call('HSET', key, f, table.concat(cur, ' '))
  redis.call('PEXPIRE', key, ttl)
end
local total = {}
for j = 1, n do total[j] = 0 end
for g = 4, #ARGV, n + 1 do
  local v = {}
  for j = 1, n do
    v[j] = tonumber(ARGV[g + j])
    if j == 6 then total[j] = math.max(total[j], v[j]) else total[j] = total[j] + v[j] end
  end
  for _, r in ipairs(rings) do add(prefix .. 'hist:' .. r[1] .. ':' .. ARGV[g], math.floor(at / r[2]), r[3], r[4], v) end
  redis.call('ZADD', prefix .. 'hist:kinds', fmt(at), ARGV[g])
end
for _, r in ipairs(rings) do add(prefix .. 'hist:' .. r[1], math.floor(at / r[2]), r[3], r[4], total) end
redis.call('ZREMRANGEBYSCORE', prefix .. 'hist:kinds', '-inf', '(' .. fmt(at - 2592000000000))
return 1
`)

// Record adds figs (kind -> Figures figures, then as many lateness
// buckets, each slice of one length) to the history of the queue whose
// shard 0 is k, in the minute and the hour of at (µs on the server's
// clock). It costs one round trip, O(kinds·figures).
func (c *Client) Record(ctx context.Context, k Keys, at int64, figs map[string][]int64) error {
	n := 0
	args := []any{k.Prefix, at, 0}
	for kind, v := range figs {
		if n == 0 {
			n = len(v)
		}
		if len(v) != n || n < Figures {
			return &ReplyError{recordScript.name, "figures of kind " + strconv.Quote(kind) + " not of one length, at least Figures"}
		}
		args = append(args, kind)
		for _, x := range v {
			args = append(args, x)
		}
	}
	if n == 0 {
		return nil
	}
	args[2] = n
	_, err := integer(recordScript.name, c.run(ctx, recordScript, k.all, args...))
	return err
}

// histScript returns {now, slot, bucket, ...}: the server's now and the
// hash's fields.
//
//	{name}:hist:... HGETALL
//	ARGV[1] -> prefix
//	ARGV[2] -> the hash's key, less the prefix
var histScript = newScript("hist", `
local out = {(clock())}
local kv = redis.call('HGETALL', prefix .. ARGV[2])
for i = 1, #kv do out[#out + 1] = kv[i] end
return out
`)

// A Bucket is a minute's or an hour's figures.
type Bucket struct {
	Index int64   // minutes (hours) since the Unix epoch
	Figs  []int64 // Figures, then the lateness buckets
}

// History reads a history hash (Keys.Hist) and the server's now (µs),
// and returns its buckets within the ring's span of now, in no set order.
// It costs one round trip, O(Minutes) or O(Hours).
func (c *Client) History(ctx context.Context, k Keys, hourly bool, kind string, all bool) ([]Bucket, int64, error) {
	key := strings.TrimPrefix(k.Hist(hourly, kind, all), k.Prefix)
	r := decode(histScript.name, c.run(ctx, histScript, k.all, k.Prefix, key))
	now := r.int(0)
	n := r.rest(1, 2)
	span, slots := int64(60_000_000), int64(Minutes)
	if hourly {
		span, slots = 3600_000_000, Hours
	}
	cur := now / span
	var out []Bucket
	for i := 1; i < 1+2*n && r.err == nil; i += 2 {
		f := strings.Fields(r.str(i + 1))
		if len(f) < 1+Figures {
			r.fail(i+1, "a bucket")
			break
		}
		b := Bucket{Figs: make([]int64, len(f)-1)}
		var err error
		if b.Index, err = strconv.ParseInt(f[0], 10, 64); err != nil {
			r.fail(i+1, "a bucket")
			break
		}
		for j, x := range f[1:] {
			if b.Figs[j], err = strconv.ParseInt(x, 10, 64); err != nil {
				r.fail(i+1, "a bucket")
			}
		}
		if b.Index > cur-slots && b.Index <= cur {
			out = append(out, b)
		}
	}
	return out, now, r.err
}

// HistoryKinds returns the kinds with a history, by their last write,
// newest first, at most limit. It costs one round trip, O(log k + limit).
func (c *Client) HistoryKinds(ctx context.Context, k Keys, limit int) ([]string, error) {
	var out []string
	err := c.Do(ctx, func(ctx context.Context, rdb redis.UniversalClient) (err error) {
		out, err = rdb.ZRevRange(ctx, k.HistKinds(), 0, int64(limit)-1).Result()
		return err
	})
	return out, err
}
