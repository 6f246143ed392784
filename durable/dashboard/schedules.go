package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/timewheel/timewheel/durable"
)

// This file holds the page of a queue's periodic schedules
// (?q=name&view=schedules) and their actions: pause, resume, and remove
// after a confirmation. A form names its schedule in sched64 (encodeID),
// so that any name comes back whole.

func init() {
	routes["schedules"] = route{tab: "schedules", get: (*handler).schedules}
	actions["pause-schedule"] = action{sched: true, run: schedAction("Paused", "paused", ": no run until it is resumed", (*durable.Schedules).Pause)}
	actions["resume-schedule"] = action{sched: true, run: schedAction("Resumed", "resumed", ": the runs it missed go to its missed policy", (*durable.Schedules).Resume)}
	actions["remove-schedule"] = action{sched: true, confirm: askRemove, run: schedAction("Removed", "removed", "", (*durable.Schedules).Remove)}
}

// schedulesPage is what the schedules section shows.
type schedulesPage struct {
	Rows []schedRow
}

// A schedRow is a schedule as its row shows it.
type schedRow struct {
	durable.ScheduleInfo
	NextAt, LastAt split
	NextZone       string        // Next in the schedule's Zone; "" for UTC
	Late           time.Duration // LastStart less LastRun: how late the last run started
}

// A split is a time as when writes it, cut in two lines: the time, and
// how far from now it is.
type split struct{ At, Rel string }

func stampOf(t time.Time) split {
	at, rel, ok := strings.Cut(when(t), " (")
	at = strings.TrimSuffix(at, ".000") // most instants are whole seconds
	if !ok {
		return split{At: at}
	}
	return split{at, "(" + rel}
}

// schedules is the page of the queue's schedules, under its figures,
// by their next instants. It costs Schedules.List: a round trip per
// shard and per 500 schedules.
func (h *handler) schedules(r *request, v *view) int {
	if status := h.cards(r.ctx, v, []*durable.Queue{r.q}); status != http.StatusOK {
		return status
	}
	list, err := r.q.Schedules().List(r.ctx)
	if err != nil {
		v.Err = err.Error()
		return errStatus(err)
	}
	slices.SortStableFunc(list, func(a, b durable.ScheduleInfo) int {
		return cmp.Or(a.Next.Compare(b.Next), strings.Compare(a.Name, b.Name))
	})
	p := &schedulesPage{}
	for _, s := range list {
		row := schedRow{ScheduleInfo: s, NextAt: stampOf(s.Next)}
		if !s.LastRun.IsZero() {
			row.LastAt = stampOf(s.LastRun)
			row.Late = s.LastStart.Sub(s.LastRun)
		}
		if loc, err := time.LoadLocation(s.Zone); s.Zone != "" && err == nil {
			row.NextZone = s.Next.In(loc).Format("2006-01-02 15:04:05 MST")
		}
		p.Rows = append(p.Rows, row)
	}
	v.Section, v.Data = "schedules", p
	return http.StatusOK
}

// querySched returns the schedule's name of a form: sched64 (encodeID)
// if given, else sched as typed. It returns an error for a sched64 that
// is not base64url, and for a name empty or over
// durable.MaxScheduleNameLen.
func querySched(f url.Values) (string, error) {
	name := f.Get("sched")
	if s := f.Get("sched64"); s != "" {
		v, err := queryID(url.Values{"id64": {s}})
		if err != nil {
			return "", fmt.Errorf("dashboard: sched64 %.40q is not a name the page encoded", s)
		}
		name = v
	}
	switch {
	case name == "":
		return "", fmt.Errorf("dashboard: %s needs a schedule's name", f.Get("action"))
	case len(name) > durable.MaxScheduleNameLen:
		return "", fmt.Errorf("dashboard: a schedule's name of %d bytes, over durable.MaxScheduleNameLen (%d)", len(name), durable.MaxScheduleNameLen)
	}
	return name, nil
}

// schedName is a schedule's name in a sentence: quoted, at most 80 runes.
func schedName(name string) string { return short(80, strconv.Quote(name)) }

// schedAction returns the run of an action that calls f on a schedule;
// one on no schedule says so.
func schedAction(did, verb, after string, f func(*durable.Schedules, context.Context, string) (bool, error)) func(context.Context, *durable.Queue, string, string) (string, bool, error) {
	return func(ctx context.Context, q *durable.Queue, name, _ string) (string, bool, error) {
		ok, err := f(q.Schedules(), ctx, name)
		if err != nil || !ok {
			return "No schedule " + schedName(name) + ": nothing " + verb + ".", false, err
		}
		return did + " schedule " + schedName(name) + after + ".", true, nil
	}
}

// askRemove asks to remove a schedule, saying what it is and what goes.
func askRemove(ctx context.Context, q *durable.Queue, name, _ string) (string, error) {
	s, ok, err := q.Schedules().Get(ctx, name)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "Remove schedule " + schedName(name) + "? There is no such schedule now: nothing would be done.", nil
	}
	next := "its next run, due " + when(s.Next) + ", is dropped"
	if s.Paused {
		next = "it is paused"
	}
	return fmt.Sprintf("Remove schedule %s (%s, kind %s)? It has run %d times; %s, and it never runs again. A run that has started goes on; one a worker holds within 100 ms of its instant is dropped there.",
		schedName(name), short(80, strconv.Quote(s.Spec)), short(80, strconv.Quote(s.Kind)), s.Counts.Runs, next), nil
}
