package prose

import (
	"flag"
	"fmt"
	"path/filepath"
	"testing"
)

var report = flag.Bool("prose.report", false, "print each package's sentence statistics and its longest sentences")

func TestEnds(t *testing.T) {
	for w, want := range map[string]bool{
		"timer.": true, "fires.)": true, `"stop."`: true, "e.g.": false, "1.5": false,
		"wheel": false, "why?": true, "V.": false, "...": false, "O(1).": true,
	} {
		if got := ends(w); got != want {
			t.Errorf("ends(%q) = %v, want %v", w, got, want)
		}
	}
}

func TestGroupSplitsSentences(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\n// One two three. Four five,\n// six seven? Eight.\n//\n//\tcode that is not counted at all here\n//\n// Nine e.g. ten.\n//   - an item of\n//     five words\n//   - two words\nfunc F() {}\n"
	path := filepath.Join(dir, "p.go")
	if err := writeFile(path, src); err != nil {
		t.Fatal(err)
	}
	s, err := File(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, x := range s {
		got = append(got, x.Words)
	}
	if fmt.Sprint(got) != "[3 4 1 3 5 2]" {
		t.Fatalf("sentence lengths %v, want [3 4 1 3 5 2]", got)
	}
}

// budgets are the packages held to the house style's pace, by directory
// from the repository root, and whether subdirectories count. A package
// joins when its comments are brought to pace; run with -prose.report
// to see where each stands.
var budgets = []struct {
	dir       string
	recursive bool
}{
	{".", false},
	{"loop", false},
	{"queue", false},
	{"clock", false},
	{"wheelvar", false},
	{"internal", true},
	{"cron", false},
	{"idleconn", false},
	{"wheelctx", false},
	{"idleconn/idlehttp", false},
	{"cron/redisclaim", false},
	{"expiry", false},
}

// TestCommentPace holds the packages in budgets to comment sentences
// with a p90 of 35 words or fewer, and none over 80 (STYLE.md).
func TestCommentPace(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, b := range budgets {
		s, err := Dir(filepath.Join(root, b.dir), b.recursive)
		if err != nil {
			t.Fatal(err)
		}
		st := Summarize(s)
		if st.P90 > 35 || st.Longest.Words > 80 {
			t.Errorf("%s: p90 %d words, longest %d (%s): want p90 <= 35, none over 80", b.dir, st.P90, st.Longest.Words, st.Longest.Pos)
		}
	}
}

// TestReport prints, with -prose.report, every package's statistics.
func TestReport(t *testing.T) {
	if !*report {
		t.Skip("run with -prose.report")
	}
	root := filepath.Join("..", "..")
	for _, dir := range []string{".", "queue", "clock", "cron", "expiry", "idleconn", "loop", "wheelctx", "wheelvar", "internal"} {
		s, err := Dir(filepath.Join(root, dir), dir == "internal")
		if err != nil {
			t.Fatal(err)
		}
		st := Summarize(s)
		t.Logf("%-10s sentences %4d  mean %5.1f  p90 %3d  longest %3d at %s", dir, st.N, st.Mean, st.P90, st.Longest.Words, st.Longest.Pos)
	}
}
