package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/timewheel/timewheel/durable"
)

// workers prints the workers of the queue's registry: each live, closed
// or gone one with what it ran at its last heartbeat; for a gone one,
// when each job it held runs again.
func (c *cli) workers(ctx context.Context, args []string) error {
	fs := c.flags("workers")
	limit := fs.Int("limit", 50, "the most workers to print, newest heartbeat first")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 || *limit < 1 || *limit > durable.MaxWorkers {
		return fmt.Errorf("%w: workers takes no arguments, and -limit in [1, %d]", errUsage, durable.MaxWorkers)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	ws, now, err := c.q.Workers(ctx, *limit)
	if err != nil {
		return err
	}
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

// kinds prints the queue's jobs by kind and state.
func (c *cli) kinds(ctx context.Context, args []string) error {
	if len(args) != 0 {
		return fmt.Errorf("%w: kinds takes no arguments", errUsage)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	kc, err := c.q.KindCounts(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tPENDING\tRUNNING\tDEAD")
	for _, k := range kc.Kinds {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", clean(k.Kind), k.Pending, k.Running, k.Dead)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if kc.Counted < kc.Jobs {
		fmt.Fprintf(c.out, "counted %d of the %d jobs (at most %d a shard)\n", kc.Counted, kc.Jobs, durable.KindsBudget)
	}
	return nil
}

// attempts prints a job's past attempts under inspect's table.
func (c *cli) attempts(ctx context.Context, info durable.Info) error {
	as, err := c.q.Attempts(ctx, info.ID, info)
	if err != nil || len(as) == 0 {
		return err
	}
	w := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	defer w.Flush()
	fmt.Fprintln(w, "past attempts (the failed ones; the store keeps the last 10):")
	for _, a := range as {
		if a.Lost {
			fmt.Fprintf(w, "  #%d\tno record: its worker stopped, or lost the lease, before it ended\n", a.Attempt)
			continue
		}
		end := "failed"
		if a.Died {
			end = "died"
		}
		fmt.Fprintf(w, "  #%d\t%s on %s at %s, ran %v: %s\n", a.Attempt, end, clean(a.Worker), a.Started.UTC().Format("2006-01-02T15:04:05.000Z"),
			a.Ended.Sub(a.Started).Round(10*time.Microsecond), clean(a.Err))
	}
	return nil
}
