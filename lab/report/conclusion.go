package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/timewheel/timewheel/lab/workload"
)

// use is a use of timers the conclusion speaks to, and the workload that
// measures it.
type use struct {
	what string
	kind workload.Kind
}

// uses are the conclusion's questions: which structure for timeouts that
// are mostly cancelled, for bursts of expiries, for far deadlines.
var uses = []use{
	{"timeouts that are mostly cancelled (churn: cancel one, schedule one)", workload.Churn},
	{"bursts of expiries (expire: 1,000 timers due at once)", workload.Expire},
	{"far deadlines (far: 10 minutes to a day out, a whole life each)", workload.Far},
}

// engine is the structure the conclusion measures the winners against.
const engine = "wheel"

// Conclusion writes, for each use of timers, which structure to use at
// each size the run measured and where the choice changes. It computes
// that from the run's cells:
//   - the cheapest structure at each size and those the run cannot tell
//     from it (see rank), with its cost;
//   - what a winner costs elsewhere when its steps grow as n or worse on
//     a claimed workload, and its caveat;
//   - how far the engine is from the cheapest.
//
// It returns the sentences it wrote.
func Conclusion(w io.Writer, r *Results, l Layout) []string {
	var lines []string
	for _, u := range uses {
		if s := conclude(r, l, u); s != "" {
			lines = append(lines, s)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	fmt.Fprintln(w, "conclusion, computed from this run's cells (the cheapest structure at each size; ≈: the run cannot tell them apart):")
	for _, s := range lines {
		fmt.Fprintln(w, "- "+s)
	}
	return lines
}

// conclude returns the sentence for one use, "" if the run did not
// measure its workload.
func conclude(r *Results, l Layout, u use) string {
	if !l.has(u.kind) {
		return ""
	}
	var spans []span
	var measured []int
	winners := map[string]bool{}
	var gaps []float64 // the engine's cost over the cheapest's, size by size
	for _, n := range l.Sizes {
		var cells []workload.Result
		for _, c := range l.Contenders {
			if x, ok := r.ok(c.Name, u.kind, n); ok && c.Claims != nil {
				cells = append(cells, x)
			}
		}
		if len(cells) == 0 {
			continue
		}
		measured = append(measured, n)
		st := rank(cells)
		for _, name := range st.same {
			winners[name] = true
		}
		key := strings.Join(st.same, " ≈ ")
		unit := u.kind.Unit()
		spans = addSpan(spans, key, n, st.best.Value, func(lo, hi float64) string {
			return fmt.Sprintf("%s (%s %s)", key, between(lo, hi), unit)
		})
		if x, ok := r.ok(engine, u.kind, n); ok {
			gaps = append(gaps, Ratio(x, st.best))
		}
	}
	if len(spans) == 0 {
		return ""
	}
	s := u.what + ": " + join(spans, measured) + "."
	for _, name := range sortedKeys(winners) {
		if note := caveats(r, l, name); note != "" {
			s += " " + note + "."
		}
	}
	if len(gaps) > 0 {
		lo, hi := slices.Min(gaps), slices.Max(gaps)
		if winners[engine] && hi <= 1 {
			s += fmt.Sprintf(" The engine, %s, is the cheapest at every size.", engine)
		} else {
			s += fmt.Sprintf(" The engine, %s, costs %s the cheapest.", engine, times(max(lo, 1), max(hi, 1)))
		}
	}
	return s
}

// caveats returns what a winner costs besides: its caveat, and each
// claimed workload whose steps grow as n or faster, with its largest
// cost measured; "" if nothing.
func caveats(r *Results, l Layout, name string) string {
	var c workload.Contender
	for _, x := range l.Contenders {
		if x.Name == name {
			c = x
		}
	}
	var notes []string
	for _, k := range claimed {
		if !c.Counted(k) {
			continue
		}
		f := r.StepFit(name, k)
		if f.Class < workload.ON {
			continue
		}
		note := fmt.Sprintf("%s's %s counts %s steps", name, k, f.Class)
		for _, n := range slices.Backward(l.Sizes) {
			if x, ok := r.ok(name, k, n); ok {
				note += fmt.Sprintf(" (%s %s at %s)", Compact(x.Value), k.Unit(), SizeLabel(n))
				break
			}
		}
		notes = append(notes, note)
	}
	if c.Caveat != "" {
		notes = append(notes, name+" "+c.Caveat)
	}
	return strings.Join(notes, "; ")
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
