package durable

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// MaxWorkers is the most workers Workers returns.
const MaxWorkers = store.MaxProcs

// A WorkerInfo is a worker process (a Queue with handlers) as its last
// heartbeat left it in the registry.
type WorkerInfo struct {
	ID          string // WithWorkerID
	Host        string
	PID         int
	Started     time.Time // its first heartbeat, on Redis's clock
	Beat        time.Time // its last heartbeat, on Redis's clock
	Every       time.Duration
	Concurrency int      // WithConcurrency
	Shards      int      // WithShards
	Kinds       []string // the kinds it has handlers for
	Running     int      // attempts running at its last beat
	Held        int      // jobs leased ahead, in its wheel, at its last beat
	// Jobs are the attempts it ran at its last beat, at most 32.
	Jobs []WorkerJob
	// Closed is set once Close ran: it stopped cleanly.
	Closed bool
	// Gone is set when no heartbeat came for three periods and it did
	// not close: it died, hangs, or cannot reach Redis. Its jobs run
	// again where their leases end (WorkerJob.Again).
	Gone bool
}

// A WorkerJob is an attempt a worker ran at its last heartbeat.
type WorkerJob struct {
	ID      string
	Kind    string
	Attempt int
	Started time.Time // on Redis's clock, as the worker mapped it
	Shard   int
	// For a gone worker: Held is set while the job's lease still names
	// it, and Again is when that lease ends, so that another worker
	// claims the job (zero if the job is gone, or another took it).
	Held  bool
	Again time.Time
}

// Workers returns up to limit (at most MaxWorkers) workers of the queue
// that sent a heartbeat within the last hour, newest first, and Redis's
// clock. It costs one round trip, and one more for each shard holding
// jobs of a gone worker: O(limit·32) in all.
func (q *Queue) Workers(ctx context.Context, limit int) ([]WorkerInfo, time.Time, error) {
	if err := q.checkOp(ctx, "Workers", ""); err != nil {
		return nil, time.Time{}, err
	}
	if limit < 1 || limit > MaxWorkers {
		return nil, time.Time{}, fmt.Errorf("durable: Workers: limit %d not in [1, %d]", limit, MaxWorkers)
	}
	var ps []store.Proc
	var now int64
	err := q.doOn(ctx, &q.br, "procs", func(ctx context.Context) (err error) {
		ps, now, err = q.st.Procs(ctx, q.k, limit)
		return err
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("durable: Workers: %w", err)
	}
	out := make([]WorkerInfo, 0, len(ps))
	for _, p := range ps {
		out = append(out, workerInfo(p, now))
	}
	if err := q.standings(ctx, out); err != nil {
		return nil, time.Time{}, fmt.Errorf("durable: Workers: %w", err)
	}
	return out, time.UnixMicro(now), nil
}

// workerInfo decodes a registry entry read at now.
func workerInfo(p store.Proc, now int64) WorkerInfo {
	f := p.Fields
	num := func(k string) int64 { n, _ := strconv.ParseInt(f[k], 10, 64); return n }
	w := WorkerInfo{ID: p.Worker, Host: f["host"], PID: int(num("pid")), Beat: time.UnixMicro(p.Beat),
		Every: time.Duration(num("every")) * time.Microsecond, Concurrency: int(num("conc")), Shards: int(num("shards")),
		Running: int(num("running")), Held: int(num("held")), Closed: f["closed"] == "1"}
	if s := num("started"); s > 0 {
		w.Started = time.UnixMicro(s)
	}
	if f["kinds"] != "" {
		w.Kinds = strings.Split(f["kinds"], "\x1f")
	}
	every := max(w.Every, time.Second)
	w.Gone = !w.Closed && time.Duration(now-p.Beat)*time.Microsecond > goneAfter*every
	if f["jobs"] == "" {
		return w
	}
	for _, rec := range strings.Split(f["jobs"], "\x1e") {
		j := strings.Split(rec, "\x1f")
		if len(j) != 5 {
			continue
		}
		a, _ := strconv.Atoi(j[2])
		s, _ := strconv.ParseInt(j[3], 10, 64)
		sh, _ := strconv.Atoi(j[4])
		w.Jobs = append(w.Jobs, WorkerJob{ID: j[0], Kind: j[1], Attempt: a, Started: time.UnixMicro(s), Shard: sh})
	}
	return w
}

// standings reads, for the jobs of gone workers, whether each lease
// still names its worker and when it ends: one round trip a shard.
func (q *Queue) standings(ctx context.Context, ws []WorkerInfo) error {
	type ref struct{ w, j int }
	byShard := map[int][]ref{}
	for i, w := range ws {
		if !w.Gone {
			continue
		}
		for j, job := range w.Jobs {
			s := q.shardIndex(job.ID)
			byShard[s] = append(byShard[s], ref{i, j})
		}
	}
	for s, refs := range byShard {
		ids := make([]string, len(refs))
		for i, r := range refs {
			ids[i] = ws[r.w].Jobs[r.j].ID
		}
		var st []store.Standing
		err := q.doOn(ctx, q.brs[s], "leases", func(ctx context.Context) (err error) {
			st, _, err = q.st.Leases(ctx, q.shards[s], ids)
			return err
		})
		if err != nil {
			return err
		}
		for i, r := range refs {
			j := &ws[r.w].Jobs[r.j]
			if st[i].Run.Worker == ws[r.w].ID && st[i].Score >= 0 {
				j.Held, j.Again = true, time.UnixMicro(st[i].Score)
			}
		}
	}
	return nil
}
