package store

import "context"

// This file holds the scripts of pausing: Pause, Resume, Unpark and
// Paused.

// pauseScript pauses kind ("" for the whole queue) and tells every
// worker: 1 if it was not paused.
//
//	KEYS[5] -> {name}:paused  SADD kind
//	ARGV[1] -> prefix (its channel {name}:ev: "p<kind>")
//	ARGV[2] -> kind
var pauseScript = newScript("pause", `
local n = redis.call('SADD', KEYS[5], ARGV[2])
spublish(prefix .. 'ev', 'p' .. ARGV[2])
return n
`)

// Pause pauses kind ("" for the queue) and tells every worker; it
// reports whether the kind was not paused. It costs one round trip.
func (c *Client) Pause(ctx context.Context, k Keys, kind string) (bool, error) {
	n, err := integer(pauseScript.name, c.run(ctx, pauseScript, k.all, k.Prefix, kind))
	return n == 1, err
}

// resumeScript resumes kind ("" for the whole queue), tells every worker,
// and moves up to n of its parked jobs back to :due; it returns how many
// it left parked.
//
//	KEYS[1] -> {name}:due     ZADD the unparked
//	KEYS[5] -> {name}:paused  SREM kind
//	KEYS[6] -> {name}:parked  SREM kind once its park set is empty
//	{name}:park:<kind>        ZRANGE, ZREM, ZCARD
//	ARGV[1] -> prefix (its channel {name}:ev: "r<kind>")
//	ARGV[2] -> kind
//	ARGV[3] -> n
var resumeScript = newScript("resume", `
redis.call('SREM', KEYS[5], ARGV[2])
spublish(prefix .. 'ev', 'r' .. ARGV[2])
if ARGV[2] == '' then return 0 end
return unpark(ARGV[2], tonumber(ARGV[3]))
`, luaUnpark)

// Resume resumes kind, tells every worker, and moves up to n of its
// parked jobs back to :due; it returns how many it left parked (Unpark
// moves those). It costs one round trip, O(n log n).
func (c *Client) Resume(ctx context.Context, k Keys, kind string, n int) (int, error) {
	left, err := integer(resumeScript.name, c.run(ctx, resumeScript, k.all, k.Prefix, kind, n))
	return int(left), err
}

// unparkScript moves up to n parked jobs of kind back to :due unless the
// kind is paused again, and returns how many it left parked (0 if
// paused).
//
//	KEYS[1] -> {name}:due     ZADD the unparked
//	KEYS[5] -> {name}:paused  SISMEMBER kind
//	KEYS[6] -> {name}:parked  SREM kind once its park set is empty
//	{name}:park:<kind>        ZRANGE, ZREM, ZCARD
//	ARGV[1] -> prefix
//	ARGV[2] -> kind
//	ARGV[3] -> n
var unparkScript = newScript("unpark", `
if redis.call('SISMEMBER', KEYS[5], ARGV[2]) == 1 then return 0 end
return unpark(ARGV[2], tonumber(ARGV[3]))
`, luaUnpark)

// Unpark moves up to n parked jobs of kind back to :due unless kind is
// paused again, and returns how many it left parked (0 if paused). It
// costs one round trip, O(n log n).
func (c *Client) Unpark(ctx context.Context, k Keys, kind string, n int) (int, error) {
	left, err := integer(unparkScript.name, c.run(ctx, unparkScript, k.all, k.Prefix, kind, n))
	return int(left), err
}

// pausedScript returns the paused kinds.
//
//	KEYS[5] -> {name}:paused  SMEMBERS
//	ARGV[1] -> prefix
var pausedScript = newScript("paused", `
return redis.call('SMEMBERS', KEYS[5])
`)

// Paused returns the paused kinds, "" for the queue, in no set order. It
// costs one round trip, O(kinds).
func (c *Client) Paused(ctx context.Context, k Keys) ([]string, error) {
	cmd := c.run(ctx, pausedScript, k.all, k.Prefix)
	if cmd.Err() != nil {
		return nil, cmd.Err()
	}
	r := &reply{script: pausedScript.name, v: []any{cmd.Val()}}
	kinds := r.strs(0)
	return kinds, r.err
}
