package store

import (
	"context"
	"strconv"
)

// This file holds the scripts of periodic schedules (durable's
// schedule.go says what they are for). A schedule lives in the shard of
// its runs, whose IDs all hash as the schedule's name does, so that its
// scripts touch one prefix:
//
//	{name}:sched               sorted set  schedule -> the µs of its head: the
//	                                       instant whose run is the next to come
//	{name}:sched:<s>           hash        the schedule s: def (its definition,
//	                                       opaque here), blob (kind NUL payload),
//	                                       ver (bumped by each change), paused
//	                                       ("1" while paused), head, headID (the
//	                                       head's µs and its run's job ID),
//	                                       last, lastID, lastAt (the latest run
//	                                       started: its instant, ID, and the
//	                                       server's µs then), ended (lastID once
//	                                       it returned nil), rel (a delayed run
//	                                       let go), and the counts runs, missed,
//	                                       skipped, delayed
//	{name}:sched:<s>:wait      list        the IDs of the runs delayed until the
//	                                       run before them ends, oldest first; a
//	                                       run let go is a new job, its ID + "+d"
//	{name}:sched:waiting       set         the schedules whose wait list may
//	                                       hold runs
//
// A schedule's runs are ordinary jobs in :due and :job. The scripts
// below take a Keys' nine keys as KEYS, as every script does, and name
// the schedule's keys from the prefix.

// luaSched holds the functions the schedule scripts share: the
// schedule's key, adding a run's job (as scheduleScript does), dropping
// a pending run no worker holds, and letting a delayed run go.
var luaSched = `local function skey(name) return prefix .. 'sched:' .. name end
local function addjob(id, s, blob, now, pick)
  if redis.call('HEXISTS', KEYS[2], id) == 1 then return 0 end
  redis.call('HSET', KEYS[2], id, blob)
  redis.call('ZADD', KEYS[1], fmt(s), id)
  notify(now, pick, s, ` + strconv.Itoa(Horizon) + `, '')
  return 1
end
local function droppending(id)
  if not id then return end
  local b = redis.call('HGET', KEYS[2], id)
  if not b or redis.call('HEXISTS', KEYS[4], id) == 1 then return false end
  local r = redis.call('HGET', KEYS[3], id)
  if r then
    -- Only a run leased ahead, not due within 100 ms, is taken back from
    -- its worker (as Reschedule does); a retry or a running one stays.
    local w, d = holder(r)
    if not (w and d and d > clock() + 100000) then return false end
    spublish(prefix .. 'ev:' .. w, 'c' .. id)
    unlease(w, {id})
    redis.call('HDEL', KEYS[3], id)
  end
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', prefix .. 'park:' .. kindof(b), id)
  return true
end
-- dropahead drops the pending runs no worker holds of ARGV[from...],
-- pairs of µs and ID, and returns the earliest it dropped.
local function dropahead(from)
  for i = from, #ARGV, 2 do
    if droppending(ARGV[i + 1]) then
      local us, id = ARGV[i], ARGV[i + 1]
      for j = i + 2, #ARGV, 2 do droppending(ARGV[j + 1]) end
      return us, id
    end
  end
end
local function letgo(name, now, pick)
  local k = skey(name)
  local w = redis.call('LPOP', k .. ':wait')
  if redis.call('LLEN', k .. ':wait') == 0 then redis.call('SREM', prefix .. 'sched:waiting', name) end
  if not w then return 0 end
  w = w .. '+d'
  redis.call('HSET', k, 'rel', w)
  addjob(w, now, redis.call('HGET', k, 'blob'), now, pick)
  return 1
end
local function live(id)
  return id and redis.call('HEXISTS', KEYS[2], id) == 1 and redis.call('HEXISTS', KEYS[4], id) == 0
end
`

// schedFields are the fields of a schedule's hash that a Sched holds, in
// the order the scripts return them.
var schedFields = []any{"def", "blob", "ver", "paused", "head", "headID", "last", "lastID", "lastAt", "runs", "missed", "skipped", "delayed"}

// luaRecord returns a schedule's record: its fields (schedFields), whether
// its head's job exists, and how many runs wait.
var luaRecord = `local FIELDS = {` + luaFields() + `}
local function record(name)
  local k = skey(name)
  local h = redis.call('HMGET', k, unpack(FIELDS))
  h[#h + 1] = live(h[6]) and 1 or 0
  h[#h + 1] = redis.call('LLEN', k .. ':wait')
  return h
end
`

// A Sched is a schedule's record as the store holds it.
type Sched struct {
	Name       string
	Def        string // its definition, as the caller encoded it
	Blob       string // its runs' kind NUL payload
	Ver        int64  // bumped by each change of Def or Blob
	Paused     bool
	Head       int64  // µs: the instant of the next run to come
	HeadID     string // that run's job ID
	HeadExists bool   // its job exists, not dead
	Last       int64  // µs: the instant of the latest run started; 0 if none
	LastID     string
	LastAt     int64 // µs on the server's clock: when it started
	Runs       int64 // runs started
	Missed     int64 // instants dropped by the missed policy
	Skipped    int64 // runs skipped by the overlap policy
	Delayed    int64 // runs delayed by the overlap policy
	Waiting    int64 // runs delayed now
}

// sched decodes a record (luaRecord's) from field i of r; it reports
// false for a schedule that does not exist.
func (r *reply) sched(i int, name string) (Sched, bool) {
	if !r.has(i) {
		r.fail(i, "a schedule's record")
		return Sched{}, false
	}
	v, ok := r.v[i].([]any)
	if !ok || len(v) != len(schedFields)+2 {
		r.fail(i, "a schedule's record")
		return Sched{}, false
	}
	f := &reply{script: r.script, v: v}
	s := Sched{Name: name}
	var exists bool
	s.Def, exists = f.opt(0)
	s.Blob, _ = f.opt(1)
	s.Ver = f.num(2)
	_, s.Paused = f.opt(3)
	s.Head = f.num(4)
	s.HeadID, _ = f.opt(5)
	s.Last = f.num(6)
	s.LastID, _ = f.opt(7)
	s.LastAt = f.num(8)
	s.Runs, s.Missed, s.Skipped, s.Delayed = f.num(9), f.num(10), f.num(11), f.num(12)
	s.HeadExists = f.int(13) == 1
	s.Waiting = f.int(14)
	if f.err != nil && r.err == nil {
		r.err = f.err
	}
	return s, exists
}

// num returns field i, a decimal string or nil (0).
func (r *reply) num(i int) int64 {
	s, ok := r.opt(i)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.fail(i, "a decimal")
	}
	return n
}

// schedArgs returns ARGV for a schedule script: the prefix, then args.
func schedArgs(k Keys, args ...any) []any {
	return append([]any{k.Prefix}, args...)
}

// getSchedScript returns {record, now} of a schedule.
//
//	KEYS[2] -> {name}:job   HEXISTS head
//	KEYS[4] -> {name}:dead  HEXISTS head
//	{name}:sched:<s>        HMGET; :wait LLEN
//	ARGV[1] -> prefix
//	ARGV[2] -> s
var getSchedScript = newScript("sched-get", `
return {record(ARGV[2]), (clock())}
`, luaKind, luaHolder, luaUnlease, luaNotify, luaSched, luaRecord)

// GetSched reads the schedule name and the server's clock in µs; it
// reports false for no such schedule. It costs one round trip, O(1).
func (c *Client) GetSched(ctx context.Context, k Keys, name string) (Sched, bool, int64, error) {
	r := decode(getSchedScript.name, c.run(ctx, getSchedScript, k.all, schedArgs(k, name)...))
	s, ok := r.sched(0, name)
	now := r.int(1)
	return s, ok, now, r.err
}

// listSchedScript returns {now, name, record, name, record, ...} for the
// schedules ranked from ARGV[2] to ARGV[3] by their heads.
//
//	{name}:sched  ZRANGE by rank
//	ARGV[2], ARGV[3] -> the first and last ranks
var listSchedScript = newScript("sched-list", `
local out = {(clock())}
for _, n in ipairs(redis.call('ZRANGE', prefix .. 'sched', ARGV[2], ARGV[3])) do
  out[#out + 1] = n
  out[#out + 1] = record(n)
end
return out
`, luaKind, luaHolder, luaUnlease, luaNotify, luaSched, luaRecord)

// ListScheds returns up to limit schedules from rank from on, by their
// heads, and the server's clock in µs. It costs one round trip,
// O(log n + limit).
func (c *Client) ListScheds(ctx context.Context, k Keys, from, limit int) ([]Sched, int64, error) {
	r := decode(listSchedScript.name, c.run(ctx, listSchedScript, k.all, schedArgs(k, from, from+limit-1)...))
	now := r.int(0)
	var out []Sched
	for i := 1; r.has(i); i += 2 {
		s, _ := r.sched(i+1, r.str(i))
		out = append(out, s)
	}
	return out, now, r.err
}

// upsertSchedScript adds or changes a schedule: 0 if it held def and
// blob already (nothing changed), 1 if added, 2 if changed. A change
// drops the pending head run no worker holds and makes the given head;
// a paused schedule gets no run until Resume.
//
//	KEYS[1] -> {name}:due  ZADD, ZREM head
//	KEYS[2] -> {name}:job  HSET, HDEL head
//	KEYS[3], KEYS[4]       read: a head held, or dead, is kept
//	{name}:sched, {name}:sched:<s>
//	ARGV[2] -> s
//	ARGV[3] -> def
//	ARGV[4] -> blob
//	ARGV[5] -> µs: the first instant
//	ARGV[6] -> its run's ID
//	ARGV[7...] -> the runs made ahead by the old definition: µs, ID, ...
var upsertSchedScript = newScript("sched-upsert", `
local k = skey(ARGV[2])
local h = redis.call('HMGET', k, 'def', 'blob', 'headID', 'paused')
if h[1] == ARGV[3] and h[2] == ARGV[4] then return 0 end
local now, pick = clock()
redis.call('HINCRBY', k, 'ver', 1)
redis.call('HSET', k, 'def', ARGV[3], 'blob', ARGV[4], 'head', ARGV[5], 'headID', ARGV[6])
droppending(h[3])
dropahead(7)
redis.call('ZADD', prefix .. 'sched', ARGV[5], ARGV[2])
if not h[4] then addjob(ARGV[6], tonumber(ARGV[5]), ARGV[4], now, pick) end
if h[1] then return 2 end
return 1
`, luaKind, luaHolder, luaUnlease, luaNotify, luaSched)

// Upserted is the outcome of UpsertSched.
type Upserted int

const (
	Unchanged Upserted = 0
	Added     Upserted = 1
	Changed   Upserted = 2
)

// UpsertSched adds the schedule name with def and blob, its first run
// due at first µs with the ID firstID, or changes it if its def or blob
// differ (see upsertSchedScript). It costs one round trip, O(log n).
func (c *Client) UpsertSched(ctx context.Context, k Keys, name, def string, blob []byte, first int64, firstID string, ahead []Run) (Upserted, error) {
	n, err := integer(upsertSchedScript.name, c.eval(ctx, upsertSchedScript, k.all, runArgs(schedArgs(k, name, def, blob, first, firstID), ahead)...))
	return Upserted(n), err
}

// advanceSchedScript moves a schedule's head from the run expected to a
// new one, and adds that run's job: 1 if it did; 0 if the head had moved
// on already; -1 if there is no such schedule; -2 if its version is not
// the one given; -3 if it is paused (unless resuming, which unpauses it).
//
//	KEYS[1] -> {name}:due  ZADD the new head
//	KEYS[2] -> {name}:job  HSET the new head
//	{name}:sched, {name}:sched:<s>
//	ARGV[2] -> s
//	ARGV[3] -> the ID of the head expected
//	ARGV[4] -> µs: the new head's instant
//	ARGV[5] -> its ID
//	ARGV[6] -> instants the missed policy dropped
//	ARGV[7] -> the version the new head was computed by
//	ARGV[8] -> "1": resume
var advanceSchedScript = newScript("sched-advance", `
local k = skey(ARGV[2])
local h = redis.call('HMGET', k, 'ver', 'paused', 'headID', 'blob')
if not h[1] then return -1 end
if h[1] ~= ARGV[7] then return -2 end
if ARGV[8] == '1' then redis.call('HDEL', k, 'paused') elseif h[2] then return -3 end
if h[3] ~= ARGV[3] then return 0 end
local now, pick = clock()
redis.call('HSET', k, 'head', ARGV[4], 'headID', ARGV[5])
redis.call('ZADD', prefix .. 'sched', ARGV[4], ARGV[2])
if ARGV[6] ~= '0' then redis.call('HINCRBY', k, 'missed', ARGV[6]) end
addjob(ARGV[5], tonumber(ARGV[4]), h[4], now, pick)
return 1
`, luaKind, luaHolder, luaUnlease, luaNotify, luaSched)

// Advanced is the outcome of AdvanceSched.
type Advanced int

const (
	AdvancedOn  Advanced = 1
	HeadMoved   Advanced = 0
	NoSched     Advanced = -1
	StaleVer    Advanced = -2
	SchedPaused Advanced = -3
)

// AdvanceArgs are AdvanceSched's.
type AdvanceArgs struct {
	Name     string
	From     string // the head's ID expected
	To       int64  // µs: the new head's instant
	ToID     string
	Missed   int   // instants dropped between them
	Ver      int64 // the version To was computed by
	Resuming bool  // unpause the schedule
}

// AdvanceSched moves the head of a schedule on (see advanceSchedScript).
// It costs one round trip, O(log n).
func (c *Client) AdvanceSched(ctx context.Context, k Keys, a AdvanceArgs) (Advanced, error) {
	n, err := integer(advanceSchedScript.name, c.eval(ctx, advanceSchedScript, k.all,
		schedArgs(k, a.Name, a.From, a.To, a.ToID, a.Missed, a.Ver, flag(a.Resuming))...))
	return Advanced(n), err
}

// fireSchedScript decides, as a run's handler is about to start, whether
// it runs: {action, headID, ver}, the action one of the Fired values.
// It records a run that starts.
//
//	KEYS[2] -> {name}:job   HEXISTS the run before
//	KEYS[4] -> {name}:dead  HEXISTS the run before
//	{name}:sched:<s>, :wait, {name}:sched:waiting
//	ARGV[2] -> s
//	ARGV[3] -> µs: the run's instant
//	ARGV[4] -> its ID
//	ARGV[5] -> its attempt
//	ARGV[6] -> µs: the instant after it
//	ARGV[7] -> grace µs
//	ARGV[8] -> missed policy: "s" skip, "l" run the last, "a" run all
//	ARGV[9] -> overlap policy: "s" skip, "d" delay, "a" allow
var fireSchedScript = newScript("sched-fire", `
local k = skey(ARGV[2])
local h = redis.call('HMGET', k, 'headID', 'paused', 'last', 'lastID', 'ended', 'rel', 'ver')
if not h[7] then return {0, false, 0} end
local now = clock()
local t, id = tonumber(ARGV[3]), ARGV[4]
local function start(act, force)
  if force or not h[3] or tonumber(h[3]) <= t then
    redis.call('HSET', k, 'last', ARGV[3], 'lastID', id, 'lastAt', fmt(now))
  end
  redis.call('HINCRBY', k, 'runs', 1)
  return {act, h[1], tonumber(h[7])}
end
if h[6] == id then
  redis.call('HDEL', k, 'rel')
  return start(1, true)
end
if tonumber(ARGV[5]) > 1 then return start(1) end
if h[2] then
  redis.call('HINCRBY', k, 'missed', 1)
  return {5, h[1], tonumber(h[7])}
end
local grace = tonumber(ARGV[7])
local late = now - t > grace
-- Under "run the last", a later instant missed too is the one to run:
-- the claim of this run made it (or one later still).
local later = tonumber(ARGV[6]) <= now - grace
if late and (ARGV[8] == 's' or (ARGV[8] == 'l' and later)) then
  redis.call('HINCRBY', k, 'missed', 1)
  return {2, h[1], tonumber(h[7])}
end
if h[4] and h[4] ~= id and h[5] ~= h[4] and tonumber(h[3]) < t and live(h[4]) then
  if ARGV[9] == 'a' then return start(1) end
  if ARGV[9] == 's' and not (late and ARGV[8] == 'a') then
    redis.call('HINCRBY', k, 'skipped', 1)
    return {3, h[1], tonumber(h[7])}
  end
  redis.call('RPUSH', k .. ':wait', id)
  redis.call('SADD', prefix .. 'sched:waiting', ARGV[2])
  redis.call('HINCRBY', k, 'delayed', 1)
  return {4, h[1], tonumber(h[7])}
end
return start(1)
`, luaKind, luaHolder, luaUnlease, luaNotify, luaSched)

// Fired is what FireSched decided for a run.
type Fired int

const (
	FireGone    Fired = 0 // the schedule was removed: the run does not run
	FireRun     Fired = 1 // it runs (recorded as the latest run)
	FireMissed  Fired = 2 // dropped by the missed policy
	FireSkipped Fired = 3 // dropped by the overlap policy
	FireDelayed Fired = 4 // waits for the run before it, as a new job with the same ID
	FirePaused  Fired = 5 // the schedule is paused
)

// FireArgs are FireSched's.
type FireArgs struct {
	Name    string
	At      int64 // µs: the run's instant
	ID      string
	Attempt int
	Next    int64 // µs: the instant after At
	Grace   int64 // µs
	Missed  byte  // 's', 'l' or 'a'
	Overlap byte  // 's', 'd' or 'a'
}

// FireSched decides whether a run starts (see fireSchedScript), and
// returns the schedule's head and version as they were. It costs one
// round trip, O(1).
func (c *Client) FireSched(ctx context.Context, k Keys, a FireArgs) (Fired, string, int64, error) {
	r := decode(fireSchedScript.name, c.eval(ctx, fireSchedScript, k.all,
		schedArgs(k, a.Name, a.At, a.ID, a.Attempt, a.Next, a.Grace, string(a.Missed), string(a.Overlap))...))
	act := r.int(0)
	head, _ := r.opt(1)
	ver := r.int(2)
	if r.err == nil && (act < 0 || act > 5) {
		r.err = &ReplyError{fireSchedScript.name, "an action not in 0..5"}
	}
	return Fired(act), head, ver, r.err
}

// doneSchedScript records that a run returned nil, and lets the first
// run delayed behind it go (a new job of its ID, due now): 1 if it let
// one go.
//
//	KEYS[1], KEYS[2]  ZADD, HSET the run let go
//	{name}:sched:<s>, :wait, {name}:sched:waiting
//	ARGV[2] -> s
//	ARGV[3] -> the run's ID
var doneSchedScript = newScript("sched-done", `
local k = skey(ARGV[2])
if redis.call('HGET', k, 'lastID') ~= ARGV[3] then return 0 end
redis.call('HSET', k, 'ended', ARGV[3])
local now, pick = clock()
return letgo(ARGV[2], now, pick)
`, luaKind, luaHolder, luaUnlease, luaNotify, luaSched)

// DoneSched records that the run id of name returned nil, and reports
// whether it let a delayed run go. It costs one round trip, O(log n).
func (c *Client) DoneSched(ctx context.Context, k Keys, name, id string) (bool, error) {
	n, err := integer(doneSchedScript.name, c.eval(ctx, doneSchedScript, k.all, schedArgs(k, name, id)...))
	return n == 1, err
}

// pauseSchedScript pauses or resumes a schedule's record: 1 if it
// exists, 0 if not, 2 (nothing done) if its head is past the runs given,
// made by claims since the caller read it. Pausing drops its pending
// head run that no worker holds; the caller's AdvanceSched with Resuming
// makes the runs again.
//
//	KEYS[1], KEYS[2]  ZREM, HDEL the head
//	{name}:sched:<s>
//	ARGV[2] -> s
//	ARGV[3] -> µs: the last instant the runs given cover
//	ARGV[4...] -> its runs made ahead, earliest first: µs, ID, ...
var pauseSchedScript = newScript("sched-pause", `
local k = skey(ARGV[2])
local h = redis.call('HMGET', k, 'headID', 'head')
local id = h[1]
if not id then return 0 end
if tonumber(h[2]) > tonumber(ARGV[3]) then return 2 end
redis.call('HSET', k, 'paused', '1')
local us, first = dropahead(4)
if droppending(id) and not first then return 1 end
if first then
  redis.call('HSET', k, 'head', us, 'headID', first)
  redis.call('ZADD', prefix .. 'sched', us, ARGV[2])
end
return 1
`, luaKind, luaHolder, luaUnlease, luaNotify, luaSched)

// A Run is a run made ahead: its instant in µs and its job's ID.
type Run struct {
	At int64
	ID string
}

// runArgs appends runs to args, as the scripts take them.
func runArgs(args []any, runs []Run) []any {
	for _, r := range runs {
		args = append(args, r.At, r.ID)
	}
	return args
}

// Dropped is the outcome of PauseSched and RemoveSched.
type Dropped int

const (
	NoSchedToDrop Dropped = 0 // no such schedule
	DroppedAhead  Dropped = 1 // done
	// HeadPast: nothing done, as the schedule's head is later than the
	// runs given cover. Claims made more runs since the caller read the
	// schedule; the caller reads it again.
	HeadPast Dropped = 2
)

// PauseSched pauses the schedule name, dropping its runs made ahead
// (ahead, earliest first, covering the instants up to upto µs) that no
// worker holds; the earliest dropped becomes the head. It costs one
// round trip, O(len(ahead) log n).
func (c *Client) PauseSched(ctx context.Context, k Keys, name string, ahead []Run, upto int64) (Dropped, error) {
	n, err := integer(pauseSchedScript.name, c.eval(ctx, pauseSchedScript, k.all, runArgs(schedArgs(k, name, upto), ahead)...))
	return Dropped(n), err
}

// removeSchedScript deletes a schedule and its pending runs that no
// worker holds: 1 if it existed, 0 if not, 2 (nothing done) if its head
// is past the runs given. A run held or running goes on, and finds the
// schedule gone when it starts.
//
//	KEYS[1], KEYS[2]  ZREM, HDEL the runs
//	{name}:sched, {name}:sched:<s>, :wait, {name}:sched:waiting
//	ARGV[2] -> s
//	ARGV[3] -> µs: the last instant the runs given cover
//	ARGV[4...] -> its runs made ahead: µs, ID, ...
var removeSchedScript = newScript("sched-remove", `
local k = skey(ARGV[2])
local h = redis.call('HMGET', k, 'headID', 'head')
local id = h[1]
if not id then return 0 end
if tonumber(h[2]) > tonumber(ARGV[3]) then return 2 end
droppending(id)
dropahead(4)
redis.call('DEL', k, k .. ':wait')
redis.call('ZREM', prefix .. 'sched', ARGV[2])
redis.call('SREM', prefix .. 'sched:waiting', ARGV[2])
return 1
`, luaKind, luaHolder, luaUnlease, luaNotify, luaSched)

// RemoveSched deletes the schedule name and its runs made ahead (ahead,
// covering the instants up to upto µs) that no worker holds. It costs
// one round trip, O(len(ahead) log n).
func (c *Client) RemoveSched(ctx context.Context, k Keys, name string, ahead []Run, upto int64) (Dropped, error) {
	n, err := integer(removeSchedScript.name, c.eval(ctx, removeSchedScript, k.all, runArgs(schedArgs(k, name, upto), ahead)...))
	return Dropped(n), err
}

// tendSchedScript is the safety net: it lets go the delayed runs whose
// run before them has ended without a DoneSched (dead, or a worker gone
// with its ack), and returns {now, name, record, ...} for up to ARGV[2]
// schedules whose head instant has passed with no job of it (the head
// ran, but the run after it was never made): the caller advances them.
//
//	KEYS[2], KEYS[4]  HEXISTS
//	{name}:sched, {name}:sched:<s>, :wait, {name}:sched:waiting
//	ARGV[2] -> the most schedules to return, and to let go runs of
var tendSchedScript = newScript("sched-tend", `
local now, pick = clock()
local n = tonumber(ARGV[2])
for _, s in ipairs(redis.call('SRANDMEMBER', prefix .. 'sched:waiting', n)) do
  if not live(redis.call('HGET', skey(s), 'lastID')) then letgo(s, now, pick) end
end
local out = {now}
local names = redis.call('ZRANGE', prefix .. 'sched', '-inf', fmt(now), 'BYSCORE', 'LIMIT', 0, 4 * n)
for _, s in ipairs(names) do
  local r = record(s)
  if not r[4] and r[#r - 1] == 0 then
    out[#out + 1] = s
    out[#out + 1] = r
    if #out > 2 * n then break end
  end
end
return out
`, luaKind, luaHolder, luaUnlease, luaNotify, luaSched, luaRecord)

// TendScheds lets go the delayed runs whose run before them ended
// unseen, and returns up to n schedules whose chain of runs broke (see
// tendSchedScript), and the server's clock in µs. It costs one round
// trip, O(log m + 4n).
func (c *Client) TendScheds(ctx context.Context, k Keys, n int) ([]Sched, int64, error) {
	r := decode(tendSchedScript.name, c.eval(ctx, tendSchedScript, k.all, schedArgs(k, n)...))
	now := r.int(0)
	var out []Sched
	for i := 1; r.has(i); i += 2 {
		s, _ := r.sched(i+1, r.str(i))
		out = append(out, s)
	}
	return out, now, r.err
}

// luaFields returns schedFields as a Lua table's items.
func luaFields() string {
	s := ""
	for i, f := range schedFields {
		if i > 0 {
			s += ", "
		}
		s += "'" + f.(string) + "'"
	}
	return s
}
