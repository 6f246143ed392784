package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/timewheel/timewheel/lab/workload"
)

// TestBadBudget: a zero or negative -budget is an error naming the value,
// not a run that reports every cell over budget.
func TestBadBudget(t *testing.T) {
	for _, v := range []string{"-1s", "0"} {
		_, err := parseOptions([]string{"-budget", v}, io.Discard)
		if err == nil {
			t.Errorf("-budget %s: accepted, want an error naming it", v)
		} else if !strings.Contains(err.Error(), v) {
			t.Errorf("-budget %s: error %q does not name the value", v, err)
		}
	}
}

// TestBadValuesNamed checks that every rejected value is named in the
// error (TestBadFlags checks only that there is an error).
func TestBadValuesNamed(t *testing.T) {
	for _, tc := range []struct{ flag, value, named string }{
		{"-sizes", "abc", "abc"},
		{"-sizes", "0", "0"},
		{"-sizes", "1e3,2.5", "2.5"},
		{"-sizes", "1e10", "1e10"},
		{"-only", "nosuch", "nosuch"},
		{"-only", "heap,", `""`},
		{"-workloads", "nosuch", "nosuch"},
		{"-repeat", "0", "0"},
		{"-repeat", "-3", "-3"},
	} {
		_, err := parseOptions([]string{tc.flag, tc.value}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.named) {
			t.Errorf("%s %q: error %v, want one naming %s", tc.flag, tc.value, err, tc.named)
		}
	}
}

// TestNothingToMeasure: a choice of contenders and workloads that measures
// nothing is an error, not an empty report that exits 0.
func TestNothingToMeasure(t *testing.T) {
	if err := run([]string{"-only", "time", "-workloads", "far", "-out", ""}, io.Discard, io.Discard); err != errNothing {
		t.Fatalf("-only time -workloads far: %v, want %v", err, errNothing)
	}
}

// TestRepeatWithJSON: -repeat reports agreement, which has no JSON form;
// asking for both is an error, not a silent choice of one.
func TestRepeatWithJSON(t *testing.T) {
	if _, err := parseOptions([]string{"-repeat", "2", "-json"}, io.Discard); err == nil || !strings.Contains(err.Error(), "-repeat and -json") {
		t.Fatalf("-repeat 2 -json: %v, want an error naming both", err)
	}
}

// TestHelpSaysWhatTheHeaderSays: -h and the report's header name the same
// clock for the budget.
func TestHelpSaysWhatTheHeaderSays(t *testing.T) {
	var usage bytes.Buffer
	if _, err := parseOptions([]string{"-h"}, &usage); err != errHelp {
		t.Fatalf("-h: %v", err)
	}
	if !strings.Contains(usage.String(), "CPU time of the lab's thread") || strings.Contains(usage.String(), "wall time one cell") {
		t.Errorf("-h does not say the budget is CPU time:\n%s", usage.String())
	}
	if workload.CPUClock() && clockName() != "the lab thread's CPU time" {
		t.Errorf("header's clock: %q", clockName())
	}
}
