package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/internal/listcursor"
)

// This file holds the commands that read: stats, list and inspect (with
// the job's past attempts), each written as text for a person or, with
// -o json, as one JSON object.

// statsJSON is stats -o json.
type statsJSON struct {
	Queue            string   `json:"queue"`
	Pending          int64    `json:"pending"`
	Due              int64    `json:"due"`
	OldestDueSeconds float64  `json:"oldest_due_seconds"`
	Running          int64    `json:"running"`
	Dead             int64    `json:"dead"`
	Paused           []string `json:"paused"` // "" is the whole queue
	RedisTime        string   `json:"redis_time"`
}

var statsCmd = noFlags(func(ctx context.Context, c *cli, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: stats takes no arguments", errUsage)
	}
	if err := c.open(ctx); err != nil {
		return err
	}
	n, err := c.q.Counts(ctx)
	if err != nil {
		return err
	}
	paused, err := c.q.Paused(ctx)
	if err != nil {
		return err
	}
	if c.json {
		return c.writeJSON(statsJSON{Queue: c.q.Name(), Pending: n.Pending, Due: n.Due, OldestDueSeconds: n.Lateness.Seconds(),
			Running: n.Running, Dead: n.Dead, Paused: append([]string{}, paused...), RedisTime: n.At.UTC().Format(time.RFC3339Nano)})
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "queue\t%s\n", clean(c.q.Name()))
	fmt.Fprintf(tw, "pending\t%d\n", n.Pending)
	fmt.Fprintf(tw, "due\t%d\t(claimable now, not yet claimed)\n", n.Due)
	fmt.Fprintf(tw, "oldest due\t%v\t(how long the earliest claimable job has waited)\n", n.Lateness.Round(time.Millisecond))
	fmt.Fprintf(tw, "running\t%d\n", n.Running)
	fmt.Fprintf(tw, "dead\t%d\n", n.Dead)
	fmt.Fprintf(tw, "paused\t%s\n", pausedText(paused))
	fmt.Fprintf(tw, "redis time\t%s\n", n.At.UTC().Format(time.RFC3339Nano))
	return tw.Flush()
})

// jobJSON is a job in list -o json and inspect -o json. A field that is
// not UTF-8 (an ID, kind, payload or error may hold any bytes) comes as
// base64 in its _base64 twin instead.
type jobJSON struct {
	ID            string `json:"id,omitempty"`
	IDBase64      string `json:"id_base64,omitempty"`
	Kind          string `json:"kind"`
	State         string `json:"state"`
	Due           string `json:"due,omitempty"`        // pending: RFC 3339, UTC
	LeaseEnds     string `json:"lease_ends,omitempty"` // running
	Attempts      int    `json:"attempts"`
	Worker        string `json:"worker,omitempty"`
	Error         string `json:"error,omitempty"`
	ErrorBase64   string `json:"error_base64,omitempty"`
	PayloadBytes  int    `json:"payload_bytes"`
	Payload       string `json:"payload,omitempty"` // with -payload
	PayloadBase64 string `json:"payload_base64,omitempty"`
}

func toJSON(in durable.Info, payload bool) jobJSON {
	j := jobJSON{Kind: in.Kind, State: in.State.String(), Attempts: in.Attempt, Worker: in.Worker, PayloadBytes: len(in.Payload)}
	text(in.ID, &j.ID, &j.IDBase64)
	text(in.Err, &j.Error, &j.ErrorBase64)
	if payload {
		text(string(in.Payload), &j.Payload, &j.PayloadBase64)
	}
	t := ""
	if !in.Due.IsZero() {
		t = in.Due.UTC().Format(time.RFC3339Nano)
	}
	switch in.State {
	case durable.Pending:
		j.Due = t
	case durable.Running:
		j.LeaseEnds = t
	}
	return j
}

// text sets *plain to s if it is UTF-8, else *b64 to its base64.
func text(s string, plain, b64 *string) {
	if utf8.ValidString(s) {
		*plain = s
	} else {
		*b64 = base64.StdEncoding.EncodeToString([]byte(s))
	}
}

// listJSON is list -o json.
type listJSON struct {
	Jobs []jobJSON `json:"jobs"`
	Next string    `json:"next_cursor"` // "" on the last page
}

func (c *cli) writeJSON(v any) error {
	e := json.NewEncoder(c.out)
	e.SetIndent("", "  ")
	return e.Encode(v)
}

func listCmd(fs *flag.FlagSet) runFunc {
	limit := fs.Int("limit", 20, "jobs a page, 1 to 1000")
	cursor := fs.String("cursor", "", "the next page's cursor, as a list (or the dashboard's next page link) printed it")
	payload := fs.Bool("payload", false, "print the payloads")
	return func(ctx context.Context, c *cli, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%w: list takes one state: pending, running or dead", errUsage)
		}
		state, err := durable.ParseState(args[0])
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if *limit < 1 || *limit > durable.MaxList {
			return fmt.Errorf("%w: -limit %d not in [1, %d]", errUsage, *limit, durable.MaxList)
		}
		raw, err := listcursor.Decode(*cursor)
		if err != nil {
			return fmt.Errorf("%w: -cursor: %v", errUsage, err)
		}
		if err := c.open(ctx); err != nil {
			return err
		}
		jobs, next, err := c.q.List(ctx, state, raw, *limit)
		if errors.Is(err, durable.ErrCursor) {
			return fmt.Errorf("%w: -cursor %.60q is not one a list of %v jobs printed", errUsage, *cursor, state)
		}
		if err != nil {
			return err
		}
		if c.json {
			out := listJSON{Jobs: []jobJSON{}, Next: listcursor.Encode(next)}
			for _, j := range jobs {
				out.Jobs = append(out.Jobs, toJSON(j, *payload))
			}
			return c.writeJSON(out)
		}
		return c.listText(state, jobs, next, *payload)
	}
}

func (c *cli) listText(state durable.State, jobs []durable.Info, next string, payload bool) error {
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	head := "ID\tKIND\tDUE\tATTEMPTS"
	switch state {
	case durable.Running:
		head = "ID\tKIND\tLEASE ENDS\tATTEMPT\tWORKER"
	case durable.Dead:
		head = "ID\tKIND\tATTEMPTS\tERROR"
	}
	if payload {
		head += "\tPAYLOAD"
	}
	fmt.Fprintln(tw, head)
	for _, j := range jobs {
		var row string
		if state == durable.Dead {
			row = fmt.Sprintf("%s\t%s\t%d\t%s", clean(j.ID), clean(j.Kind), j.Attempt, clean(j.Err))
		} else {
			row = fmt.Sprintf("%s\t%s\t%s\t%d", clean(j.ID), clean(j.Kind), when(j.Due), j.Attempt)
			if state == durable.Running {
				row += "\t" + clean(j.Worker)
			}
		}
		if payload {
			row += "\t" + clean(string(j.Payload))
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(jobs) == 0 {
		fmt.Fprintf(c.out, "(no %v job%s)\n", state, map[bool]string{true: " on this page", false: ""}[next != ""])
	}
	if next != "" {
		fmt.Fprintf(c.out, "next page: -cursor %s\n", listcursor.Encode(next))
	}
	return nil
}

func inspectCmd(fs *flag.FlagSet) runFunc {
	payload := fs.Bool("payload", false, "print the payload")
	return func(ctx context.Context, c *cli, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%w: inspect takes one ID", errUsage)
		}
		if err := c.open(ctx); err != nil {
			return err
		}
		info, ok, err := c.q.Lookup(ctx, args[0])
		if err != nil {
			return err
		}
		if !ok {
			return notFoundf("no job %s", clean(args[0]))
		}
		as, err := c.q.Attempts(ctx, info.ID, info)
		if err != nil {
			return err
		}
		if c.json {
			out := inspectJSON{jobJSON: toJSON(info, *payload), Attempts: []attemptJSON{}}
			for _, a := range as {
				out.Attempts = append(out.Attempts, toAttemptJSON(a))
			}
			return c.writeJSON(out)
		}
		tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "id\t%s\n", clean(info.ID))
		fmt.Fprintf(tw, "kind\t%s\n", clean(info.Kind))
		fmt.Fprintf(tw, "state\t%v\n", info.State)
		switch info.State {
		case durable.Pending:
			fmt.Fprintf(tw, "due\t%s\n", when(info.Due))
		case durable.Running:
			fmt.Fprintf(tw, "lease ends\t%s\n", when(info.Due))
		}
		fmt.Fprintf(tw, "attempts\t%d\n", info.Attempt)
		if info.Worker != "" {
			fmt.Fprintf(tw, "worker\t%s\n", clean(info.Worker))
		}
		if info.State == durable.Dead {
			fmt.Fprintf(tw, "error\t%s\n", clean(info.Err))
		}
		fmt.Fprintf(tw, "payload\t%d bytes\n", len(info.Payload))
		if *payload {
			fmt.Fprintf(tw, "\t%s\n", clean(string(info.Payload)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		return c.attemptsText(as)
	}
}

// inspectJSON is inspect -o json: the job, and its past attempts.
type inspectJSON struct {
	jobJSON
	Attempts []attemptJSON `json:"past_attempts"`
}

// attemptJSON is one of a job's past attempts (durable.AttemptInfo).
type attemptJSON struct {
	Attempt     int    `json:"attempt"`
	Lost        bool   `json:"lost,omitempty"` // no record: its worker stopped, or lost the lease, before it ended
	Died        bool   `json:"died,omitempty"`
	Worker      string `json:"worker,omitempty"`
	Started     string `json:"started,omitempty"` // RFC 3339, UTC
	Ended       string `json:"ended,omitempty"`
	Error       string `json:"error,omitempty"`
	ErrorBase64 string `json:"error_base64,omitempty"`
}

func toAttemptJSON(a durable.AttemptInfo) attemptJSON {
	j := attemptJSON{Attempt: a.Attempt, Lost: a.Lost, Died: a.Died, Worker: a.Worker, Started: rfc(a.Started), Ended: rfc(a.Ended)}
	text(a.Err, &j.Error, &j.ErrorBase64)
	return j
}

// attemptsText prints a job's past attempts under inspect's table, not
// in it, so that the table keeps its width.
func (c *cli) attemptsText(as []durable.AttemptInfo) error {
	if len(as) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
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
	return w.Flush()
}

// pausedText writes the paused kinds, "" standing for the whole queue.
func pausedText(kinds []string) string {
	if len(kinds) == 0 {
		return "none"
	}
	var b []string
	for _, k := range kinds {
		if k == "" {
			b = append(b, "(the whole queue)")
		} else {
			b = append(b, clean(k))
		}
	}
	return strings.Join(b, ", ")
}
