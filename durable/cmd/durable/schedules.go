package main

import (
	"context"
	"fmt"
	"text/tabwriter"
)

func init() {
	register(command{"schedules", "[list] | schedules pause|resume|remove NAME...", "periodic schedules", noFlags(schedulesCmd)})
}

// schedulesCmd runs "schedules [list]" and "schedules
// pause|resume|remove NAME...": the queue's periodic schedules with
// their next instants, last runs and counts, or a change to some.
func schedulesCmd(ctx context.Context, c *cli, args []string) error {
	verb := "list"
	if len(args) > 0 {
		verb, args = args[0], args[1:]
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	sc := c.q.Schedules()
	var f func(context.Context, string) (bool, error)
	switch verb {
	case "list":
		if len(args) > 0 {
			return fmt.Errorf("%w: schedules list takes no arguments", errUsage)
		}
		return c.listSchedules(ctx)
	case "pause":
		f = sc.Pause
	case "resume":
		f = sc.Resume
	case "remove":
		f = sc.Remove
	default:
		return fmt.Errorf("%w: schedules takes list, pause, resume or remove, not %q", errUsage, verb)
	}
	if len(args) == 0 {
		return fmt.Errorf("%w: schedules %s needs a schedule's name", errUsage, verb)
	}
	for _, name := range args {
		ok, err := f(ctx, name)
		if err != nil {
			return err
		}
		if !ok {
			return notFoundf("no schedule %s", clean(name))
		}
		fmt.Fprintf(c.out, "%sd %s\n", verb, clean(name))
	}
	return nil
}

// listSchedules writes the schedules, a line each.
func (c *cli) listSchedules(ctx context.Context) error {
	list, err := c.q.Schedules().List(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSPEC\tKIND\tNEXT\tLAST RUN\tRUNS\tMISSED\tSKIPPED\tDELAYED\tPOLICIES")
	for _, s := range list {
		next := when(s.Next)
		if s.Paused {
			next = "paused"
		}
		spec := s.Spec
		if s.Zone != "" {
			spec += " (" + s.Zone + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\tmissed: %v, overlap: %v\n", clean(s.Name), clean(spec), clean(s.Kind),
			next, when(s.LastRun), s.Counts.Runs, s.Counts.Missed, s.Counts.Skipped, s.Counts.Delayed, s.Missed, s.Overlap)
	}
	return w.Flush()
}
