package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/timewheel/timewheel/durable"
)

func init() {
	register(command{"history", "[-kind k] [-hourly] [-last n] [-all]",
		"started, succeeded, failed, retried, died and lateness by minute (hour)", historyCmd})
}

// historyJSON is history -o json: the last n minutes (hours), those
// where nothing started too, and their total (its at the first's).
type historyJSON struct {
	Kind   string      `json:"kind"` // "" for the whole queue
	Hourly bool        `json:"hourly"`
	Points []pointJSON `json:"points"`
	Total  pointJSON   `json:"total"`
}

// pointJSON is a minute (hour). The lateness quantiles are bucket
// bounds; one past the last bound is -1, and null with no start.
type pointJSON struct {
	At         string   `json:"at,omitempty"` // RFC 3339, UTC
	Started    int64    `json:"started"`
	Succeeded  int64    `json:"succeeded"`
	Failed     int64    `json:"failed"`
	Retried    int64    `json:"retried"`
	Died       int64    `json:"died"`
	LateP50Sec *float64 `json:"late_p50_seconds"`
	LateP99Sec *float64 `json:"late_p99_seconds"`
	LateMaxSec *float64 `json:"late_max_seconds"`
}

func toPointJSON(p durable.Point) pointJSON {
	j := pointJSON{At: rfc(p.At), Started: p.Started, Succeeded: p.Succeeded, Failed: p.Failed, Retried: p.Retried, Died: p.Died}
	if p.Started > 0 {
		sec := func(d time.Duration) *float64 {
			s := d.Seconds()
			if d < 0 {
				s = -1
			}
			return &s
		}
		j.LateP50Sec, j.LateP99Sec, j.LateMaxSec = sec(p.Quantile(0.5)), sec(p.Quantile(0.99)), sec(p.LateMax)
	}
	return j
}

// historyCmd runs "history": the queue's (or a kind's) figures for the
// last minutes or hours, a row each, and their total.
func historyCmd(fs *flag.FlagSet) runFunc {
	kind := fs.String("kind", "", "a kind's history (default: the whole queue's)")
	hourly := fs.Bool("hourly", false, "by hour over 30 days (default: by minute over a day)")
	last := fs.Int("last", 15, "how many minutes (hours) to print, the latest last")
	all := fs.Bool("all", false, "print the minutes (hours) where nothing started too")
	return func(ctx context.Context, c *cli, args []string) error {
		if len(args) != 0 || *last < 1 || *last > 1440 {
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
		if c.json {
			out := historyJSON{Kind: *kind, Hourly: *hourly, Points: []pointJSON{}, Total: toPointJSON(durable.Sum(ps))}
			for _, p := range ps {
				out.Points = append(out.Points, toPointJSON(p))
			}
			return c.writeJSON(out)
		}
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
