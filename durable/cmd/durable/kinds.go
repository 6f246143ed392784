package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/timewheel/timewheel/durable"
)

func init() {
	register(command{"kinds", "", "the jobs by kind and state", noFlags(kindsCmd)})
}

// kindsJSON is kinds -o json.
type kindsJSON struct {
	Kinds   []kindJSON `json:"kinds"`
	Counted int64      `json:"counted"` // the jobs counted: at most durable.KindsBudget a shard
	Jobs    int64      `json:"jobs"`    // the jobs the queue holds
}

type kindJSON struct {
	Kind    string `json:"kind"`
	Pending int64  `json:"pending"`
	Running int64  `json:"running"`
	Dead    int64  `json:"dead"`
}

// kindsCmd runs "kinds": the queue's jobs by kind and state.
func kindsCmd(ctx context.Context, c *cli, args []string) error {
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
	if c.json {
		out := kindsJSON{Kinds: []kindJSON{}, Counted: kc.Counted, Jobs: kc.Jobs}
		for _, k := range kc.Kinds {
			out.Kinds = append(out.Kinds, kindJSON{k.Kind, k.Pending, k.Running, k.Dead})
		}
		return c.writeJSON(out)
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
