package store

import (
	"context"
	"strconv"
)

// This file holds the scripts of the workers' registry: Beat, which a
// process's Queue sends once a period, and Procs, which reads it back.
// The keys, beside those of keys.go (all in the queue's shard 0):
//
//	{name}:procs         sorted set  worker -> its last heartbeat, µs on the server's
//	                                 clock; trimmed past Keep, and to the newest MaxProcs
//	{name}:proc:<worker> hash        host, pid, started, every (µs between beats),
//	                                 conc, shards, kinds, running, held, closed (µs,
//	                                 once Close ran), jobs (up to MaxProcJobs of its
//	                                 running attempts: id US kind US attempt US started µs
//	                                 US shard, RS between jobs); expires Keep after the
//	                                 last beat

// Keep is how long, in µs, the registry keeps a worker after its last
// heartbeat: an hour, so that a worker that died is shown as gone, with
// the jobs it held, for that long.
const Keep = 3600_000_000

// MaxProcs bounds the workers the registry holds; MaxProcJobs, the
// running jobs each beat lists.
const (
	MaxProcs    = 1000
	MaxProcJobs = 32
)

// Procs returns the key of the registry's sorted set.
func (k Keys) Procs() string { return k.Prefix + "procs" }

// Proc returns the key of worker's hash in the registry.
func (k Keys) Proc(worker string) string { return k.Prefix + "proc:" + worker }

// beatScript writes worker's hash (the fields given, and beat: the
// server's now) and moves it to now in :procs, trimming the workers
// whose last beat is older than keep, and all but the newest MaxProcs.
// It returns the server's now.
//
//	{name}:procs          ZREMRANGEBYSCORE, ZADD worker, ZCARD, ZREMRANGEBYRANK
//	{name}:proc:<worker>  DEL, HSET, PEXPIRE keep
//	ARGV[1] -> prefix
//	ARGV[2] -> worker
//	ARGV[3] -> keep µs
//	ARGV[4] -> max workers
//	ARGV[5..] -> field, value, field, value, ...
var beatScript = newScript("beat", `
local now = clock()
local ps, pk, keep = prefix .. 'procs', prefix .. 'proc:' .. ARGV[2], tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', ps, '-inf', '(' .. fmt(now - keep))
redis.call('ZADD', ps, fmt(now), ARGV[2])
local over = redis.call('ZCARD', ps) - tonumber(ARGV[4])
if over > 0 then
  for _, w in ipairs(redis.call('ZRANGE', ps, 0, over - 1)) do redis.call('DEL', prefix .. 'proc:' .. w) end
  redis.call('ZREMRANGEBYRANK', ps, 0, over - 1)
end
redis.call('DEL', pk)
redis.call('HSET', pk, 'beat', fmt(now), unpack(ARGV, 5))
redis.call('PEXPIRE', pk, math.floor(keep / 1000))
return now
`)

// A Proc is one worker process's entry in the registry, as its last
// beat wrote it.
type Proc struct {
	Worker string
	Beat   int64             // µs on the server's clock
	Fields map[string]string // host, pid, ... as beatScript's table says
}

// Beat writes worker's entry in the registry of the queue whose shard 0
// is k: fields (name, value pairs; a name never "beat"), and the
// server's now as its heartbeat. It returns that now. It costs one round
// trip, O(len(fields) + log workers).
func (c *Client) Beat(ctx context.Context, k Keys, worker string, fields []string) (int64, error) {
	args := make([]any, 0, 4+len(fields))
	args = append(args, k.Prefix, worker, Keep, MaxProcs)
	for _, f := range fields {
		args = append(args, f)
	}
	return integer(beatScript.name, c.run(ctx, beatScript, k.all, args...))
}

// procsScript returns {now, worker, beat, {field, value, ...}, ...} for
// the limit workers of :procs whose beats are newest, newest first.
//
//	{name}:procs          ZRANGE REV WITHSCORES
//	{name}:proc:<worker>  HGETALL each
//	ARGV[1] -> prefix
//	ARGV[2] -> limit
var procsScript = newScript("procs", `
local out = {(clock())}
local z = redis.call('ZRANGE', prefix .. 'procs', 0, tonumber(ARGV[2]) - 1, 'REV', 'WITHSCORES')
for i = 1, #z, 2 do
  out[#out + 1] = z[i]
  out[#out + 1] = z[i + 1]
  out[#out + 1] = redis.call('HGETALL', prefix .. 'proc:' .. z[i])
end
return out
`)

// Procs reads the limit workers whose heartbeats are newest, and the
// server's now (µs). A worker whose hash expired comes with no Fields.
// It costs one round trip, O(limit·fields).
func (c *Client) Procs(ctx context.Context, k Keys, limit int) ([]Proc, int64, error) {
	r := decode(procsScript.name, c.run(ctx, procsScript, k.all, k.Prefix, limit))
	now := r.int(0)
	n := r.rest(1, 3)
	out := make([]Proc, 0, n)
	for i := 1; i < 1+3*n && r.err == nil; i += 3 {
		p := Proc{Worker: r.str(i), Beat: r.score(i + 1), Fields: map[string]string{}}
		kv := r.strs(i + 2)
		for j := 0; j+1 < len(kv); j += 2 {
			p.Fields[kv[j]] = kv[j+1]
		}
		out = append(out, p)
	}
	return out, now, r.err
}

// leasesScript returns {now, run, score, ...} for each id: its :run
// value and its :due score, each "" when absent.
//
//	KEYS[1] -> {name}:due  ZSCORE each
//	KEYS[3] -> {name}:run  HMGET
//	ARGV[1] -> prefix
//	ARGV[2..] -> ids
var leasesScript = newScript("leases", `
local out = {(clock())}
local ids = {}
for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return out end
local runs = redis.call('HMGET', KEYS[3], unpack(ids))
for k, id in ipairs(ids) do
  out[#out + 1] = runs[k] or ''
  out[#out + 1] = redis.call('ZSCORE', KEYS[1], id) or ''
end
return out
`)

// A Standing is how a job stands, read for a worker that listed it.
type Standing struct {
	Run   Token // its :run value; Worker "" if no lease names a worker
	Score int64 // its :due score (for a job under a lease, its end); -1 if none
}

// Leases reads the :run value and :due score of each of ids (at most
// MaxProcJobs·MaxProcs), and the server's now. It costs one round trip,
// O(len(ids)·log n).
func (c *Client) Leases(ctx context.Context, k Keys, ids []string) ([]Standing, int64, error) {
	args := make([]any, 0, 1+len(ids))
	args = append(args, k.Prefix)
	for _, id := range ids {
		args = append(args, id)
	}
	r := decode(leasesScript.name, c.run(ctx, leasesScript, k.all, args...))
	now := r.int(0)
	if n := r.rest(1, 2); r.err == nil && n != len(ids) {
		r.err = &ReplyError{leasesScript.name, strconv.Itoa(n) + " jobs for " + strconv.Itoa(len(ids)) + " IDs"}
	}
	out := make([]Standing, 0, len(ids))
	for i := 1; i < 1+2*len(ids) && r.err == nil; i += 2 {
		s := Standing{Score: -1}
		if run := r.str(i); run != "" {
			s.Run, _ = ParseRun(run)
		}
		if sc := r.str(i + 1); sc != "" {
			s.Score = r.score(i + 1)
		}
		out = append(out, s)
	}
	return out, now, r.err
}
