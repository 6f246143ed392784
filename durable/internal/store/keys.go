package store

import (
	"strconv"
	"strings"
)

// The store's layout. Every key of a queue starts with one prefix,
// "{name}:", whose hash tag puts them all in one Redis Cluster slot; the
// scripts take the prefix's keys (a Keys) as KEYS, so that a queue spread
// over several prefixes (shards) runs the same scripts once per prefix.
//
//	{name}:due          sorted set  id -> when the job is next claimable, in µs
//	                                since the Unix epoch on the server's clock:
//	                                its due time (or retry time) while no worker
//	                                holds it; max(due, claim time) + lease once a
//	                                worker holds it; now + lease at each renewal
//	{name}:job          hash        id -> kind NUL payload
//	{name}:run          hash        id -> a Token, "attempt|worker|due", while a
//	                                worker holds the lease (due: the µs the
//	                                attempt is due, which may still be ahead;
//	                                a lease written by an older version is
//	                                "attempt|worker"), "attempt" once an attempt
//	                                has failed or was handed back
//	{name}:dead         hash        id -> the last error of a dead job
//	{name}:paused       set         the paused kinds; "" for the whole queue
//	{name}:park:<kind>  sorted set  id -> due µs: the jobs of a paused kind that
//	                                came due (a claim moves them here from :due;
//	                                Resume, or a claim once the kind is resumed,
//	                                moves them back)
//	{name}:parked       set         the kinds whose park set may hold jobs
//	{name}:workers      sorted set  worker -> µs until which it counts as live
//	                                (each claim and renewal moves it on)
//	{name}:lease:<worker> sorted set id -> the due µs of each job the worker
//	                                holds: its running jobs are those due by
//	                                now, while it is live (a claim deletes a
//	                                dead worker's set as it drops the worker)
//	{name}:layout       hash        shards -> the queue's shard count, version ->
//	                                the key scheme's (shard 0's key only)
//	{name}:ev           channel     to every worker: "p<kind>" paused, "r<kind>"
//	                                resumed, "n<µs>" a job due then that a full
//	                                worker passes on
//	{name}:ev:<worker>  channel     to one worker: "n<µs>" a job due within the
//	                                horizon (2 s) was added or moved, "c<id>" a job
//	                                it holds was cancelled or taken back
//
// The keys of what the pages show beside the jobs are with their
// scripts: the workers' registry ({name}:procs, {name}:proc:<worker>) in
// registry.go, the history ({name}:hist:...) in history.go, and the
// failed attempts' records ({name}:tries) in tries.go.
//
// A job exists while its :job field does. Its state, as read from the
// keys (Lookup does this; so may any reader, at the server's TIME now):
//
//   - dead: :dead holds it (it is in no sorted set);
//   - running: :run holds "attempt|worker|due" with due <= now, or
//     "attempt|worker", and its :due score is after now (a worker's
//     handler runs it, or starts it within a tick);
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

// Horizon is how far ahead of its due time a job is leased at the most,
// in µs, and so how soon a job must be due for Schedule to tell a worker
// of it whatever else :due holds: one no worker's armed claim would find
// in time.
const Horizon = 2_000_000

// Version is the key scheme's version, as the layout record holds it: 1
// is the scheme above. A record of a later version is refused.
const Version = 1

// Keys names the keys of one prefix, in the order every script takes
// them as KEYS. A Keys is immutable.
type Keys struct {
	Prefix string   // "{name}:"
	all    []string // due, job, run, dead, paused, parked, workers
}

// NewKeys returns the keys of prefix ("{name}:").
func NewKeys(prefix string) Keys {
	k := Keys{Prefix: prefix}
	for _, s := range []string{"due", "job", "run", "dead", "paused", "parked", "workers"} {
		k.all = append(k.all, prefix+s)
	}
	return k
}

func (k Keys) Due() string     { return k.all[0] }
func (k Keys) Job() string     { return k.all[1] }
func (k Keys) Run() string     { return k.all[2] }
func (k Keys) Dead() string    { return k.all[3] }
func (k Keys) Paused() string  { return k.all[4] }
func (k Keys) Parked() string  { return k.all[5] }
func (k Keys) Workers() string { return k.all[6] }

// Leases returns the key of the set of the jobs worker holds.
func (k Keys) Leases(worker string) string { return k.Prefix + "lease:" + worker }

// Layout returns the key of the layout record (shard 0's prefix only).
func (k Keys) Layout() string { return k.Prefix + "layout" }

// Park returns the key of kind's park set.
func (k Keys) Park(kind string) string { return k.Prefix + "park:" + kind }

// Ev returns the channel to every worker.
func (k Keys) Ev() string { return k.Prefix + "ev" }

// Inbox returns the channel of one worker.
func (k Keys) Inbox(worker string) string { return k.Prefix + "ev:" + worker }

// A Token is a lease as :run holds it while a worker holds the job:
// "attempt|worker|due". The scripts compare it whole: an ack, renewal or
// failure holds the lease only if :run still holds the same token.
type Token struct {
	Attempt int    // 1 for the first
	Worker  string // the worker's ID (WithWorkerID): never holds '|'
	Due     int64  // µs: when the attempt is due; 0 for a lease of an older version
}

// String returns the token as :run holds it.
func (t Token) String() string {
	return strconv.Itoa(t.Attempt) + "|" + t.Worker + "|" + strconv.FormatInt(t.Due, 10)
}

// ParseRun parses a :run value: "attempt" (no lease: Worker ""),
// "attempt|worker" or "attempt|worker|due". It reports false for
// anything else.
func ParseRun(r string) (Token, bool) {
	a, rest, _ := strings.Cut(r, "|")
	n, err := strconv.Atoi(a)
	if err != nil {
		return Token{}, false
	}
	t := Token{Attempt: n}
	t.Worker, rest, _ = strings.Cut(rest, "|")
	if rest != "" {
		if t.Due, err = strconv.ParseInt(rest, 10, 64); err != nil {
			return Token{}, false
		}
	}
	return t, true
}
