package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"

	"github.com/timewheel/timewheel/durable"
)

// This file holds the commands that change the queue: retry, delete,
// cancel, pause, resume and move. A job named that is not there (or, for
// retry and delete, not dead) is reported on stderr by run, and makes
// the exit status 3 once the others are done.

// deadCmd retries or deletes dead jobs: those named, or -all of -kind.
func deadCmd(verb string) func(*flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		all := fs.Bool("all", false, "every dead job (of -kind)")
		kind := fs.String("kind", "", "with -all: only the dead jobs of this kind")
		return func(ctx context.Context, c *cli, args []string) error {
			switch {
			case *all && len(args) > 0, !*all && len(args) == 0:
				return fmt.Errorf("%w: %s takes IDs or -all", errUsage, verb)
			case !*all && *kind != "":
				return fmt.Errorf("%w: -kind goes with -all", errUsage)
			}
			if err := c.open(ctx); err != nil {
				return err
			}
			past := map[string]string{"retry": "retried", "delete": "deleted"}[verb]
			if *all {
				var n int
				var err error
				if verb == "retry" {
					n, err = c.q.RetryAllDead(ctx, *kind)
				} else {
					n, err = c.q.DeleteAllDead(ctx, *kind)
				}
				if err != nil {
					return fmt.Errorf("%s %s, then: %w", past, deadJobs(n), err)
				}
				fmt.Fprintf(c.out, "%s %s\n", past, deadJobs(n))
				return nil
			}
			// One call an ID, so that each one not dead is named.
			n, missing := 0, []string{}
			for _, id := range args {
				var k int
				var err error
				if verb == "retry" {
					k, err = c.q.RetryDead(ctx, id)
				} else {
					k, err = c.q.DeleteDead(ctx, id)
				}
				if err != nil {
					return fmt.Errorf("%s %s, then: %w", past, deadJobs(n), err)
				}
				if k == 0 {
					missing = append(missing, clean(id))
				}
				n += k
			}
			fmt.Fprintf(c.out, "%s %s\n", past, deadJobs(n))
			return missed("dead job", missing, len(args))
		}
	}
}

// missed returns nil if no ID is missing, else an error wrapping
// errNotFound that names them (what: "job", "dead job").
func missed(what string, missing []string, of int) error {
	switch {
	case len(missing) == 0:
		return nil
	case len(missing) == 1 && of == 1:
		return notFoundf("no %s %s", what, missing[0])
	case len(missing) > 10:
		return notFoundf("%d of %d IDs named no %s: %s, …", len(missing), of, what, joinIDs(missing[:10]))
	}
	return notFoundf("%d of %d IDs named no %s: %s", len(missing), of, what, joinIDs(missing))
}

func joinIDs(ids []string) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += id
	}
	return s
}

func deadJobs(n int) string {
	if n == 1 {
		return "1 dead job"
	}
	return strconv.Itoa(n) + " dead jobs"
}

var cancelCmd = noFlags(func(ctx context.Context, c *cli, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: cancel takes IDs", errUsage)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	var missing []string
	for _, id := range args {
		ok, err := c.q.Cancel(ctx, id)
		if err != nil {
			return err
		}
		if ok {
			fmt.Fprintf(c.out, "cancelled %s\n", clean(id))
		} else {
			missing = append(missing, clean(id))
		}
	}
	return missed("job", missing, len(args))
})

func pauseCmd(pause bool) func(*flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		force := new(bool)
		if pause {
			force = fs.Bool("force", false, "pause a kind no worker handles and no job has, as yet")
		}
		return func(ctx context.Context, c *cli, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("%w: pause and resume take at most one kind", errUsage)
			}
			kind := ""
			if len(args) == 1 {
				kind = args[0]
				if kind == "" {
					return fmt.Errorf("%w: an empty kind (name none for the whole queue)", errUsage)
				}
			}
			what := "the whole queue"
			if kind != "" {
				what = "kind " + clean(kind)
			}
			if err := c.open(ctx); err != nil {
				return err
			}
			if pause {
				if kind != "" && !*force {
					if err := knownKind(ctx, c.q, kind); err != nil {
						return err
					}
				}
				if err := c.q.Pause(ctx, kind); err != nil {
					return err
				}
				fmt.Fprintf(c.out, "paused %s\n", what)
				return nil
			}
			paused, err := c.q.Paused(ctx)
			if err != nil {
				return err
			}
			if !slices.Contains(paused, kind) {
				return notFoundf("%s is not paused", what)
			}
			if err := c.q.Resume(ctx, kind); err != nil {
				return err
			}
			fmt.Fprintf(c.out, "resumed %s\n", what)
			return nil
		}
	}
}

// knownKind returns nil if kind is one a live or recent worker handles,
// one that ran in the last 30 days, or one a job of the queue has (as
// far as KindCounts reads); else a not-found error, so that a misspelled
// kind is not paused. It costs at most three round trips a shard.
func knownKind(ctx context.Context, q *durable.Queue, kind string) error {
	workers, _, err := q.Workers(ctx, 1000)
	if err != nil {
		return err
	}
	for _, w := range workers {
		if slices.Contains(w.Kinds, kind) {
			return nil
		}
	}
	ran, err := q.HistoryKinds(ctx, 1000)
	if err != nil {
		return err
	}
	if slices.Contains(ran, kind) {
		return nil
	}
	counts, err := q.KindCounts(ctx)
	if err != nil {
		return err
	}
	for _, k := range counts.Kinds {
		if k.Kind == kind {
			return nil
		}
	}
	return notFoundf("no worker handles kind %s and no job has it: check the name, or pause it with -force", clean(kind))
}

// moveCmd moves the jobs of shard 0 to the shards of -shards, and prints
// how many it moved and left.
var moveCmd = noFlags(func(ctx context.Context, c *cli, args []string) error {
	if len(args) != 0 {
		return fmt.Errorf("%w: move takes no arguments", errUsage)
	}
	if c.shards == 0 {
		return fmt.Errorf("%w: move needs -shards k, the count to move to", errUsage)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	moved, left, err := c.q.MoveToShards(ctx)
	if err != nil {
		return fmt.Errorf("moved %d, then: %w", moved, err)
	}
	fmt.Fprintf(c.out, "moved %d, left %d in shard 0 (due within 10 s, leased or parked: run move again later)\n", moved, left)
	return nil
})
