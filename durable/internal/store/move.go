package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// This file holds the scripts of the queue's layout: the layout record,
// and MoveToShards' Snap, Put and Drop.

// layoutScript reads the queue's layout record, writing it first if the
// queue has none: with shards (0: read only) if no job of shard 0 exists
// yet, and as 1 shard, without writing it, if one does (a queue made
// before the record). It returns {shards, version, written}, shards 0
// for a read of a queue that has neither.
//
//	KEYS[1] -> {name}:due     EXISTS
//	KEYS[2] -> {name}:job     EXISTS
//	KEYS[4] -> {name}:dead    EXISTS
//	ARGV[1] -> prefix ({name}:layout: HGET, HSET)
//	ARGV[2] -> shards (0: read only)
//	ARGV[3] -> version
var layoutScript = newScript("layout", `
local lk = prefix .. 'layout'
local r = redis.call('HMGET', lk, 'shards', 'version')
if r[1] then return {tonumber(r[1]), tonumber(r[2]) or 1, 0} end
if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[4]) > 0 then return {1, 1, 0} end
if ARGV[2] == '0' then return {0, 0, 0} end
redis.call('HSET', lk, 'shards', ARGV[2], 'version', ARGV[3])
return {tonumber(ARGV[2]), tonumber(ARGV[3]), 1}
`)

// A Layout is a queue's layout record.
type Layout struct {
	Shards  int  // 0: no record, and no job (a read of a new name)
	Version int  // the key scheme's
	Written bool // this call wrote it
}

// Layout returns the layout record of the queue whose shard 0 is k,
// writing shards (and Version) first for a queue with no record and no
// job; shards 0 reads only. A queue with jobs but no record (made before
// the record) reads as 1 shard. It costs one round trip, O(1).
func (c *Client) Layout(ctx context.Context, k Keys, shards int) (Layout, error) {
	r := decode(layoutScript.name, c.run(ctx, layoutScript, k.all, k.Prefix, shards, Version))
	l := Layout{Shards: int(r.int(0)), Version: int(r.int(1)), Written: r.int(2) == 1}
	if r.rest(3, 1) != 0 {
		r.err = &ReplyError{layoutScript.name, "more than 3 fields"}
	}
	if r.err == nil && l.Version > Version {
		return l, fmt.Errorf("durable: queue %q: its layout in Redis is of version %d, past this durable's %d", k.Prefix, l.Version, Version)
	}
	return l, r.err
}

// SetLayout writes the layout record of the queue whose shard 0 is k:
// shards, and the version. It costs one round trip, O(1).
func (c *Client) SetLayout(ctx context.Context, k Keys, shards int) error {
	return c.Do(ctx, func(ctx context.Context, rdb redis.UniversalClient) error {
		return rdb.HSet(ctx, k.Layout(), "shards", shards, "version", Version).Err()
	})
}

// snapScript returns the job id's {blob, score, run, dead} (each "" when
// absent) if MoveToShards may move it: dead, or pending, due more than
// margin ahead, and held by no lease. Else it returns nil.
//
//	KEYS[1] -> {name}:due   ZSCORE id
//	KEYS[2] -> {name}:job   HGET id
//	KEYS[3] -> {name}:run   HGET id
//	KEYS[4] -> {name}:dead  HGET id
//	ARGV[1] -> prefix
//	ARGV[2] -> id
//	ARGV[3] -> margin µs
var snapScript = newScript("snap", `
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

// A Snapshot is a job as Snap read it, to move: each field "" when
// absent.
type Snapshot struct {
	Blob, Score, Run, Dead string
}

func (s Snapshot) args() []any { return []any{s.Blob, s.Score, s.Run, s.Dead} }

// Snap reads the job id if MoveToShards may move it (dead, or pending,
// due more than margin µs ahead and held by no lease), and reports
// whether it may. It costs one round trip, O(log n).
func (c *Client) Snap(ctx context.Context, k Keys, id string, margin int64) (Snapshot, bool, error) {
	cmd := c.run(ctx, snapScript, k.all, k.Prefix, id, margin)
	if cmd.Err() == redis.Nil {
		return Snapshot{}, false, nil
	}
	r := decode(snapScript.name, cmd)
	s := Snapshot{r.str(0), r.str(1), r.str(2), r.str(3)}
	if r.rest(4, 1) != 0 {
		r.err = &ReplyError{snapScript.name, "more than 4 fields"}
	}
	return s, r.err == nil, r.err
}

// putScript adds the job id as snapScript read it in another shard: 1 if
// added, or if the same job is there already (an earlier try's copy); 0
// if another job holds the ID. A pending job first in :due is announced
// to one live worker.
//
//	KEYS[1] -> {name}:due      ZSCORE, ZADD id
//	KEYS[2] -> {name}:job      HGET, HSET id
//	KEYS[3] -> {name}:run      HSET id
//	KEYS[4] -> {name}:dead     HGET, HSET id
//	KEYS[7] -> {name}:workers  read
//	ARGV[1] -> prefix
//	ARGV[2] -> id
//	ARGV[3..6] -> blob, score, run, dead ("" for none)
//	ARGV[7] -> horizon µs
var putScript = newScript("put", `
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

// Put adds the job id as s holds it, and reports whether the shard holds
// it now (added, or there already from an earlier try); false if another
// job holds the ID. It waits for the replicas (Replication): a shortfall
// is an error wrapping ErrNotReplicated with the outcome. It costs one
// round trip, O(log n).
func (c *Client) Put(ctx context.Context, k Keys, id string, s Snapshot) (bool, error) {
	return c.yesNo(ctx, putScript, k, append([]any{k.Prefix, id}, append(s.args(), Horizon)...))
}

// dropScript deletes the job id if it is still as snapScript read it: 1
// if deleted, 0 if it changed or is gone.
//
//	KEYS[1] -> {name}:due   ZSCORE, ZREM id
//	KEYS[2] -> {name}:job   HGET, HDEL id
//	KEYS[3] -> {name}:run   HGET, HDEL id
//	KEYS[4] -> {name}:dead  HGET, HDEL id
//	{name}:tries            HDEL id
//	ARGV[1] -> prefix
//	ARGV[2] -> id
//	ARGV[3..6] -> blob, score, run, dead ("" for none)
var dropScript = newScript("drop", `
if redis.call('HGET', KEYS[2], ARGV[2]) ~= ARGV[3] or
  (redis.call('ZSCORE', KEYS[1], ARGV[2]) or '') ~= ARGV[4] or
  (redis.call('HGET', KEYS[3], ARGV[2]) or '') ~= ARGV[5] or
  (redis.call('HGET', KEYS[4], ARGV[2]) or '') ~= ARGV[6] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[2])
redis.call('HDEL', prefix .. 'tries', ARGV[2])
return 1
`)

// Drop deletes the job id if it is still as s holds it, and reports
// whether it did. It waits for the replicas as Put does. It costs one
// round trip, O(log n).
func (c *Client) Drop(ctx context.Context, k Keys, id string, s Snapshot) (bool, error) {
	return c.yesNo(ctx, dropScript, k, append([]any{k.Prefix, id}, s.args()...))
}

// yesNo runs a write whose reply is 1 or 0, returning the outcome with a
// shortfall of replicas too.
func (c *Client) yesNo(ctx context.Context, s *script, k Keys, args []any) (bool, error) {
	cmd := c.eval(ctx, s, k.all, args...)
	var short error
	if err := cmd.Err(); IsNotReplicated(err) {
		short = err
		cmd.SetErr(nil)
	}
	n, err := integer(s.name, cmd)
	if err == nil && n != 0 && n != 1 {
		err = &ReplyError{s.name, "not 0 or 1: " + strconv.FormatInt(n, 10)}
	}
	if err != nil {
		return false, err
	}
	return n == 1, short
}

// Scan returns a batch of the IDs of shard k's :due (dead false) or
// :dead from cursor (0 to start), and the next cursor (0 when done). It
// costs one round trip, O(count).
func (c *Client) Scan(ctx context.Context, k Keys, dead bool, cursor uint64, count int64) (ids []string, next uint64, err error) {
	err = c.Do(ctx, func(ctx context.Context, rdb redis.UniversalClient) error {
		var kv []string
		var err error
		if dead {
			kv, next, err = rdb.HScan(ctx, k.Dead(), cursor, "", count).Result()
		} else {
			kv, next, err = rdb.ZScan(ctx, k.Due(), cursor, "", count).Result()
		}
		for i := 0; i < len(kv); i += 2 { // id, then score or error
			ids = append(ids, kv[i])
		}
		return err
	})
	return ids, next, err
}
