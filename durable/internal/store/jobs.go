package store

import "context"

// This file holds the scripts of one job by its ID: Schedule,
// Reschedule, Cancel and Lookup. Every script here takes a Keys' nine
// keys as KEYS (keys.go); the tables name those it reads or writes.

// scheduleScript adds a job unless its ID exists: 1 if added, 0 if not.
// A job due within the horizon is announced to one live worker.
//
//	KEYS[1] -> {name}:due      ZADD id
//	KEYS[2] -> {name}:job      HEXISTS, HSET id
//	KEYS[7] -> {name}:workers  read: the live worker to tell
//	ARGV[1] -> prefix
//	ARGV[2] -> id
//	ARGV[3] -> µs: the due time, or a delay from the server's now
//	ARGV[4] -> blob: kind NUL payload
//	ARGV[5] -> "1": ARGV[3] is a delay
//	ARGV[6] -> horizon µs
var scheduleScript = newScript("schedule", `
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return 0 end
local now, pick = clock()
local s = tonumber(ARGV[3])
if ARGV[5] == '1' then s = s + now end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
redis.call('ZADD', KEYS[1], fmt(s), ARGV[2])
notify(now, pick, s, tonumber(ARGV[6]), '')
return 1
`, luaNotify)

// Schedule adds the job id with blob (kind NUL payload), due at us µs
// (from the server's now if relative), unless id exists: it reports
// whether it added it. It costs one round trip, O(log n).
func (c *Client) Schedule(ctx context.Context, k Keys, id string, us int64, relative bool, blob []byte) (bool, error) {
	n, err := integer(scheduleScript.name, c.eval(ctx, scheduleScript, k.all, k.Prefix, id, us, blob, flag(relative), Horizon))
	return n == 1, err
}

// rescheduleScript moves a pending or dead job to a new due time: 1 if
// moved, 0 if no such job, -1 if it is running (or leased ahead and due
// within margin). A dead job comes back with its attempts forgotten; a job
// leased ahead is taken back from its worker, told so.
//
//	KEYS[1] -> {name}:due      ZADD id
//	KEYS[2] -> {name}:job      HGET id
//	KEYS[3] -> {name}:run      HGET, HSET or HDEL id
//	KEYS[4] -> {name}:dead     HDEL id
//	KEYS[7] -> {name}:workers  read
//	{name}:park:<kind>         ZREM id
//	{name}:lease:<worker>      ZREM id (taken back)
//	ARGV[1] -> prefix
//	ARGV[2] -> id
//	ARGV[3] -> µs: the new due time
//	ARGV[4] -> "1": ARGV[3] is a delay from now
//	ARGV[5] -> horizon µs
//	ARGV[6] -> margin µs
var rescheduleScript = newScript("reschedule", `
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
  unlease(w, {ARGV[2]})
end
local s = tonumber(ARGV[3])
if ARGV[4] == '1' then s = s + now end
if redis.call('HDEL', KEYS[4], ARGV[2]) == 1 then redis.call('HDEL', KEYS[3], ARGV[2]) end
redis.call('ZREM', prefix .. 'park:' .. kindof(b), ARGV[2])
redis.call('ZADD', KEYS[1], fmt(s), ARGV[2])
notify(now, pick, s, tonumber(ARGV[5]), '')
return 1
`, luaKind, luaHolder, luaUnlease, luaNotify)

// Rescheduled is the outcome of Reschedule.
type Rescheduled int

const (
	Moved   Rescheduled = 1  // the job is due at its new time
	Missing Rescheduled = 0  // no job has the ID
	Running Rescheduled = -1 // a worker runs it, or starts it within the margin
)

// Reschedule moves the pending or dead job id to us µs, taking it back
// from a worker that leased it ahead unless it is due within margin µs.
// It costs one round trip, O(log n).
func (c *Client) Reschedule(ctx context.Context, k Keys, id string, us, margin int64) (Rescheduled, error) {
	n, err := integer(rescheduleScript.name, c.eval(ctx, rescheduleScript, k.all, k.Prefix, id, us, "0", Horizon, margin))
	if err == nil && (n < -1 || n > 1) {
		err = &ReplyError{rescheduleScript.name, "not -1, 0 or 1"}
	}
	return Rescheduled(n), err
}

// cancelScript deletes a job, whatever its state, and tells the worker
// that holds it: 1 if it existed.
//
//	KEYS[1] -> {name}:due    ZREM id
//	KEYS[2] -> {name}:job    HGET, HDEL id
//	KEYS[3] -> {name}:run    HGET, HDEL id
//	KEYS[4] -> {name}:dead   HDEL id
//	{name}:park:<kind>       ZREM id
//	{name}:lease:<worker>    ZREM id
//	{name}:tries             HDEL id
//	ARGV[1] -> prefix
//	ARGV[2] -> id
var cancelScript = newScript("cancel", `
local b = redis.call('HGET', KEYS[2], ARGV[2])
if not b then return 0 end
local w = holder(redis.call('HGET', KEYS[3], ARGV[2]))
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREM', prefix .. 'park:' .. kindof(b), ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[2])
redis.call('HDEL', prefix .. 'tries', ARGV[2])
if w then
  unlease(w, {ARGV[2]})
  spublish(prefix .. 'ev:' .. w, 'c' .. ARGV[2])
end
return 1
`, luaKind, luaHolder, luaUnlease)

// Cancel deletes the job id whatever its state, telling the worker that
// holds it, and reports whether it existed. It costs one round trip,
// O(log n).
func (c *Client) Cancel(ctx context.Context, k Keys, id string) (bool, error) {
	n, err := integer(cancelScript.name, c.eval(ctx, cancelScript, k.all, k.Prefix, id))
	return n == 1, err
}

// lookupScript returns a job's {blob, score, run, dead, now}, each false
// when absent: the score in :due, or in its kind's park set.
//
//	KEYS[1] -> {name}:due   ZSCORE id
//	KEYS[2] -> {name}:job   HGET id
//	KEYS[3] -> {name}:run   HGET id
//	KEYS[4] -> {name}:dead  HGET id
//	{name}:park:<kind>      ZSCORE id
//	ARGV[1] -> prefix
//	ARGV[2] -> id
var lookupScript = newScript("lookup", `
local b = redis.call('HGET', KEYS[2], ARGV[2])
if not b then return {false, false, false, false, (clock())} end
local s = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not s then s = redis.call('ZSCORE', prefix .. 'park:' .. kindof(b), ARGV[2]) end
return {b, s, redis.call('HGET', KEYS[3], ARGV[2]), redis.call('HGET', KEYS[4], ARGV[2]), (clock())}
`, luaKind)

// A Found is a job as Lookup reads it.
type Found struct {
	Exists   bool
	Blob     string // kind NUL payload
	Score    int64  // its :due or park score; see HasScore
	HasScore bool   // false for a dead job
	Run      Token  // its :run value; Attempt 0 if none
	Dead     bool
	Err      string // the last error, when Dead
	Now      int64  // the server's clock, µs
}

// Lookup reads the job id. It costs one round trip, O(log n).
func (c *Client) Lookup(ctx context.Context, k Keys, id string) (Found, error) {
	r := decode(lookupScript.name, c.run(ctx, lookupScript, k.all, k.Prefix, id))
	var f Found
	f.Blob, f.Exists = r.opt(0)
	if s, ok := r.opt(1); ok {
		var err error
		if f.Score, err = ParseScore(s); err != nil {
			r.fail(1, "a score")
		}
		f.HasScore = true
	}
	if run, ok := r.opt(2); ok {
		if f.Run, ok = ParseRun(run); !ok {
			r.fail(2, "a :run value")
		}
	}
	f.Err, f.Dead = r.opt(3)
	f.Now = r.int(4)
	if r.rest(5, 1) != 0 {
		r.err = &ReplyError{lookupScript.name, "more than 5 fields"}
	}
	return f, r.err
}
