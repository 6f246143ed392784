package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/timewheel/timewheel/durable"
)

// history prints the queue's (or a kind's) figures for the last minutes
// or hours, a row each, and their total.
func (c *cli) history(ctx context.Context, args []string) error {
	fs := c.flags("history")
	kind := fs.String("kind", "", "a kind's history (default: the whole queue's)")
	hourly := fs.Bool("hourly", false, "by hour over 30 days (default: by minute over a day)")
	last := fs.Int("last", 15, "how many minutes (hours) to print, the latest last")
	all := fs.Bool("all", false, "print the minutes (hours) where nothing started too")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 || *last < 1 || *last > 1440 {
		return fmt.Errorf("%w: history takes no arguments, and -last in [1, 1440]", errUsage)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	ps, err := c.q.History(ctx, *kind, *hourly)
	if err != nil {
		return err
	}
	ps = ps[max(0, len(ps)-*last):]
	unit, layout := "MINUTE", "2006-01-02 15:04"
	if *hourly {
		unit = "HOUR"
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s (UTC)\tSTARTED\tSUCCEEDED\tFAILED\tRETRIED\tDIED\tLATE p50\tp99\tmax\n", unit)
	row := func(label string, p durable.Point) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", label, p.Started, p.Succeeded, p.Failed, p.Retried, p.Died,
			lateText(p, "≤", p.Quantile(0.5)), lateText(p, "≤", p.Quantile(0.99)), lateText(p, "", p.LateMax))
	}
	for _, p := range ps {
		if *all || p.Started+p.Failed+p.Succeeded > 0 {
			row(p.At.UTC().Format(layout), p)
		}
	}
	row(fmt.Sprintf("total, %d %ss", len(ps), map[bool]string{false: "minute", true: "hour"}[*hourly]), durable.Sum(ps))
	return tw.Flush()
}

// lateText writes a lateness: "-" with no start, pre and d else (pre
// "≤" for a bucket's bound).
func lateText(p durable.Point, pre string, d time.Duration) string {
	switch {
	case p.Started == 0:
		return "-"
	case d < 0:
		b := durable.LatenessBounds()
		return ">" + b[len(b)-1].String()
	}
	return pre + d.Round(time.Microsecond).String()
}
