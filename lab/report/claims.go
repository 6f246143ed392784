package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/timewheel/timewheel/lab/workload"
)

// claimed are the workloads the reference documents claim costs for.
var claimed = []workload.Kind{workload.Schedule, workload.Cancel, workload.Expire}

// Check is one claim held to the steps counted: whether the class fitted
// to a structure's steps is the class the claim predicts.
type Check struct {
	Structure string
	Workload  workload.Kind
	Claim     workload.Claim
	Fit       workload.Fit
	Match     Match
	Note      int // the number of its footnote, for a disagreement; 0 otherwise
}

// Match says how a claim stands against the steps.
type Match int

// The ways a claim stands.
const (
	Untold    Match = iota // too few sizes counted to fit a class
	Agrees                 // the steps' class is the claim's
	Disagrees              // it is not, in either direction
)

// Mark returns the agreement as the tables print it: ✓, ✗ or ?.
func (a Match) Mark() string { return [...]string{"?", "✓", "✗"}[a] }

// Checks holds every claim of every structure the run counted against its
// steps, structures in the layout's order, then schedule, cancel and
// expire; disagreements are numbered from 1.
func Checks(r *Results, l Layout) []Check {
	var out []Check
	note := 0
	for _, c := range l.Contenders {
		if c.Claims == nil || !c.Counts() {
			continue
		}
		for _, k := range claimed {
			cl := c.Claims.Get(k)
			if !l.has(k) || cl.Class == workload.Unknown {
				continue
			}
			f := r.StepFit(c.Name, k)
			x := Check{Structure: c.Name, Workload: k, Claim: cl, Fit: f}
			switch {
			case f.Class == workload.Unknown:
				x.Match = Untold
			case f.Class == cl.Class:
				x.Match = Agrees
			default:
				note++
				x.Match, x.Note = Disagrees, note
			}
			out = append(out, x)
		}
	}
	return out
}

// Disagrees reports whether the steps disagree with the claim.
func (x Check) Disagrees() bool { return x.Match == Disagrees }

// Reason returns the one line that explains a disagreement, the lab's own
// where it knows one.
func (x Check) Reason() string {
	why := x.Claim.Why
	if why == "" {
		why = "no reason known to the lab"
	}
	return fmt.Sprintf("%s %s: claimed %s (%s), counted %s: %s", x.Structure, x.Workload, x.Claim.Cost, x.Claim.Source, x.Fit.Class, why)
}

// claimWidth is the width of one workload's column in the claims table.
const claimWidth = 38

// Claims writes every structure's claims beside the class of its steps,
// marked ✓ where they agree and ✗ where they do not, then a line for
// each disagreement with the reason the lab knows. It writes nothing if
// the run counted no claimed workload. It returns the checks it wrote.
func Claims(w io.Writer, r *Results, l Layout) []Check {
	checks := Checks(r, l)
	if len(checks) == 0 {
		return nil
	}
	ks := l.kinds(claimed)
	fmt.Fprintln(w, "claimed against counted: what the reference documents claim (and which: 001, 002, 004) beside the class of the steps")
	fmt.Fprintln(w, "(expire: per timer fired, k timers due; ✓ agrees, ✗ disagrees, ? too few sizes counted)")
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s", "structure")
	for _, k := range ks {
		fmt.Fprintf(&b, " │ %-*s", claimWidth, string(k)+": claimed, counted")
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	fmt.Fprintln(w, strings.Repeat("─", 10)+strings.Repeat("─┼─"+strings.Repeat("─", claimWidth), len(ks)))
	for i := 0; i < len(checks); {
		name := checks[i].Structure
		b.Reset()
		fmt.Fprintf(&b, "%-10s", name)
		for _, k := range ks {
			text := ""
			if i < len(checks) && checks[i].Structure == name && checks[i].Workload == k {
				x := checks[i]
				text = padRight(x.Claim.Cost+" "+x.Claim.Source, 13) + " " + padRight(x.Fit.String(), 19) + " " + x.Match.Mark()
				if x.Note > 0 {
					text += fmt.Sprint(x.Note)
				}
				i++
			}
			fmt.Fprintf(&b, " │ %s", padRight(text, claimWidth))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	for _, x := range checks {
		if x.Match == Disagrees {
			fmt.Fprintf(w, "✗%d %s\n", x.Note, x.Reason())
		}
	}
	return checks
}
