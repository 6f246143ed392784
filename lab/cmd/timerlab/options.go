package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/timewheel/timewheel/lab"
	"github.com/timewheel/timewheel/lab/workload"
)

// options is what the flags ask for.
type options struct {
	contenders []workload.Contender
	kinds      []workload.Kind
	sizes      []int
	budget     workload.Budget
	out        string
	json       bool
	repeat     int // runs to compare (-repeat); 1 for the ordinary report
}

var errHelp = errors.New("help requested")

// errNothing is returned when no contender asked for runs any workload
// asked for (package time has no far or expire workload, say).
var errNothing = errors.New("nothing to measure: none of the -only contenders runs any of the -workloads")

// defaultSizes are the sizes of a run without -sizes; -full adds 1e7.
var defaultSizes = []int{1e2, 1e3, 1e4, 1e5, 1e6}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("timerlab", flag.ContinueOnError)
	fs.SetOutput(stderr)
	full := fs.Bool("full", false, "add 1e7 pending timers for the structures that can take it (larger budgets; minutes)")
	asJSON := fs.Bool("json", false, "write the results as JSON on standard output instead of the tables")
	only := fs.String("only", "", "comma-separated contenders to run (default all): "+strings.Join(names(), ","))
	sizes := fs.String("sizes", "", "comma-separated numbers of pending timers (default 1e2,1e3,1e4,1e5,1e6)")
	kinds := fs.String("workloads", "", "comma-separated workloads to run (default all): "+kindNames())
	out := fs.String("out", "timerlab-out", "directory for the charts (empty: write none)")
	repeat := fs.Int("repeat", 1, "run the lab this many times and report how far the runs agree, instead of the tables (no charts)")
	budget := fs.Duration("budget", workload.DefaultBudget().Cell, "time one cell may take before it is over budget: CPU time of the lab's thread where it can be read (Linux), wall time elsewhere")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: timerlab [flags]\n\nMeasures every timer structure of the lab side by side and prints the tables.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return options{}, errHelp
		}
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *budget <= 0 {
		return options{}, fmt.Errorf("-budget: %v is not a positive duration", *budget)
	}
	if *repeat < 1 {
		return options{}, fmt.Errorf("-repeat: %d is not a positive number of runs", *repeat)
	}
	if *repeat > 1 && *asJSON {
		return options{}, errors.New("-repeat and -json: a repeated run reports agreement, not JSON; pick one")
	}
	o := options{out: *out, json: *asJSON, repeat: *repeat, budget: workload.DefaultBudget(), sizes: slices.Clone(defaultSizes)}
	if o.repeat > 1 {
		o.out = "" // charts of which run?
	}
	o.budget.Cell = *budget
	if *full {
		o.sizes = append(o.sizes, 1e7)
		o.budget.Fill *= 10
		o.budget.Far *= 10
	}
	var err error
	if *sizes != "" {
		if o.sizes, err = parseSizes(*sizes); err != nil {
			return options{}, err
		}
	}
	if o.contenders, err = pickContenders(*only); err != nil {
		return options{}, err
	}
	if o.kinds, err = pickKinds(*kinds); err != nil {
		return options{}, err
	}
	return o, nil
}

// parseSizes reads "1e3,100000" into sizes, ascending.
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 1 || v > 1e8 || v != float64(int(v)) {
			return nil, fmt.Errorf("-sizes: %q is not a number of timers from 1 to 1e8", f)
		}
		if !slices.Contains(sizes, int(v)) {
			sizes = append(sizes, int(v))
		}
	}
	slices.Sort(sizes)
	return sizes, nil
}

func names() []string {
	var ns []string
	for _, c := range lab.Contenders() {
		ns = append(ns, c.Name)
	}
	return ns
}

func kindNames() string {
	var ns []string
	for _, k := range workload.Kinds() {
		ns = append(ns, string(k))
	}
	return strings.Join(ns, ",")
}

// pickContenders returns the contenders named in a comma list, in the
// lab's order; all of them for "".
func pickContenders(list string) ([]workload.Contender, error) {
	all := lab.Contenders()
	if list == "" {
		return all, nil
	}
	want := strings.Split(list, ",")
	for _, w := range want {
		if !slices.Contains(names(), strings.TrimSpace(w)) {
			return nil, fmt.Errorf("-only: no contender %q; there are %s", w, strings.Join(names(), ", "))
		}
	}
	var cs []workload.Contender
	for _, c := range all {
		if slices.ContainsFunc(want, func(w string) bool { return strings.TrimSpace(w) == c.Name }) {
			cs = append(cs, c)
		}
	}
	return cs, nil
}

// pickKinds returns the workloads named in a comma list, in the lab's
// order; all of them for "".
func pickKinds(list string) ([]workload.Kind, error) {
	if list == "" {
		return workload.Kinds(), nil
	}
	var want []workload.Kind
	for _, f := range strings.Split(list, ",") {
		k, err := workload.ParseKind(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("-workloads: %v", err)
		}
		want = append(want, k)
	}
	var ks []workload.Kind
	for _, k := range workload.Kinds() {
		if slices.Contains(want, k) {
			ks = append(ks, k)
		}
	}
	return ks, nil
}
