package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/timewheel/timewheel/durable"
)

func init() {
	register(command{"workers", "[-limit n]", "the workers' heartbeats: live, closed or gone, with the jobs they run", workersCmd})
}

// workersJSON is workers -o json.
type workersJSON struct {
	RedisTime string       `json:"redis_time"`
	Workers   []workerJSON `json:"workers"`
}

type workerJSON struct {
	ID           string          `json:"id"`
	State        string          `json:"state"` // live, closed or gone
	Host         string          `json:"host"`
	PID          int             `json:"pid"`
	Started      string          `json:"started,omitempty"` // its first heartbeat: RFC 3339, UTC
	Beat         string          `json:"beat"`              // its last
	EverySeconds float64         `json:"every_seconds"`
	Concurrency  int             `json:"concurrency"`
	Shards       int             `json:"shards"`
	Kinds        []string        `json:"kinds"`
	Running      int             `json:"running"`
	Held         int             `json:"held"`
	Jobs         []workerJobJSON `json:"jobs"`
}

type workerJobJSON struct {
	ID       string `json:"id,omitempty"`
	IDBase64 string `json:"id_base64,omitempty"`
	Kind     string `json:"kind"`
	Attempt  int    `json:"attempt"`
	Started  string `json:"started"`
	// Of a gone worker: whether its lease still names it, and when that
	// lease ends.
	Held  bool   `json:"held,omitempty"`
	Again string `json:"runs_again,omitempty"`
}

// workersCmd runs "workers": the workers of the queue's registry, each
// live, closed or gone with what it ran at its last heartbeat; for a
// gone one, when each job it held runs again.
func workersCmd(fs *flag.FlagSet) runFunc {
	limit := fs.Int("limit", 50, "the most workers to print, newest heartbeat first")
	return func(ctx context.Context, c *cli, args []string) error {
		if len(args) != 0 || *limit < 1 || *limit > durable.MaxWorkers {
			return fmt.Errorf("%w: workers takes no arguments, and -limit in [1, %d]", errUsage, durable.MaxWorkers)
		}
		if err := c.open(ctx); err != nil {
			return err
		}
		ws, now, err := c.q.Workers(ctx, *limit)
		if err != nil {
			return err
		}
		if c.json {
			return c.writeJSON(toWorkersJSON(ws, now))
		}
		return c.workersText(ws, now)
	}
}

func toWorkersJSON(ws []durable.WorkerInfo, now time.Time) workersJSON {
	out := workersJSON{RedisTime: rfc(now), Workers: []workerJSON{}}
	for _, w := range ws {
		j := workerJSON{ID: w.ID, State: strings.ToLower(workerState(w)), Host: w.Host, PID: w.PID, Started: rfc(w.Started), Beat: rfc(w.Beat),
			EverySeconds: w.Every.Seconds(), Concurrency: w.Concurrency, Shards: w.Shards, Kinds: append([]string{}, w.Kinds...),
			Running: w.Running, Held: w.Held, Jobs: []workerJobJSON{}}
		for _, b := range w.Jobs {
			jj := workerJobJSON{Kind: b.Kind, Attempt: b.Attempt, Started: rfc(b.Started), Held: w.Gone && b.Held}
			text(b.ID, &jj.ID, &jj.IDBase64)
			if jj.Held {
				jj.Again = rfc(b.Again)
			}
			j.Jobs = append(j.Jobs, jj)
		}
		out.Workers = append(out.Workers, j)
	}
	return out
}

// rfc writes t in RFC 3339 in UTC, "" for the zero time.
func rfc(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func (c *cli) workersText(ws []durable.WorkerInfo, now time.Time) error {
	if len(ws) == 0 {
		fmt.Fprintln(c.out, "no worker has sent a heartbeat within the last hour")
		return nil
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tSTATE\tLAST BEAT\tUP\tRUNNING\tHELD\tCONC\tHOST\tPID\tKINDS")
	jobs := 0
	for _, w := range ws {
		jobs += len(w.Jobs)
		up := "-"
		if !w.Started.IsZero() {
			up = w.Beat.Sub(w.Started).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s ago\t%s\t%d\t%d\t%d\t%s\t%d\t%s\n", clean(w.ID), workerState(w), now.Sub(w.Beat).Round(100*time.Millisecond),
			up, w.Running, w.Held, w.Concurrency, clean(w.Host), w.PID, clean(strings.Join(w.Kinds, ",")))
	}
	if err := tw.Flush(); err != nil || jobs == 0 {
		return err
	}
	fmt.Fprintln(c.out)
	fmt.Fprintln(tw, "WORKER\tJOB\tKIND\tATTEMPT\tSTARTED\tRUNS AGAIN")
	for _, w := range ws {
		for _, j := range w.Jobs {
			again := "-"
			switch {
			case !w.Gone:
			case j.Held:
				again = "at " + whenAt(j.Again, now) + ", its lease's end"
			default:
				again = "no longer held by it (done, or taken again)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s ago\t%s\n", clean(w.ID), clean(j.ID), clean(j.Kind), j.Attempt, now.Sub(j.Started).Round(time.Millisecond), again)
		}
	}
	return tw.Flush()
}

func workerState(w durable.WorkerInfo) string {
	switch {
	case w.Gone:
		return "GONE"
	case w.Closed:
		return "closed"
	}
	return "live"
}

// whenAt writes t in UTC with ms, and how far from now it is.
func whenAt(t, now time.Time) string {
	d := t.Sub(now).Round(time.Millisecond)
	rel := "in " + d.String()
	if d < 0 {
		rel = (-d).String() + " ago"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z") + " (" + rel + ")"
}
