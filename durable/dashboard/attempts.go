package dashboard

import (
	"time"

	"github.com/timewheel/timewheel/durable"
)

// A job's page (the job route) shows its past attempts under it: the
// failed ones the store keeps, and those with no record (attempts.html's
// "attempts"). It costs one round trip more.

// attemptsView is what the section of a job's past attempts shows.
type attemptsView struct {
	Attempts []durable.AttemptInfo
	Err      string // why they could not be read
}

// attempts adds the past attempts of job, as Lookup returned it, to v:
// their errors redacted as the job's is.
func (h *handler) attempts(r *request, v *view, job durable.Info) {
	as, err := r.q.Attempts(r.ctx, job.ID, job)
	av := &attemptsView{Attempts: as}
	if err != nil {
		av.Err = err.Error()
	}
	for i := range as {
		as[i].Err = h.redact(as[i].Err, job.Payload)
	}
	v.Section, v.Data = "attempts", av
}

// ranFor writes how long an attempt ran: to the µs under a ms.
func ranFor(a durable.AttemptInfo) string {
	if d := a.Ended.Sub(a.Started); d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return dur(a.Ended.Sub(a.Started))
}
