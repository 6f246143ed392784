// Package prose measures the comments of Go source files: how long their
// sentences are, in words. The house style asks for comment sentences a
// reader takes in at once, as in the code held up as models (x/time/rate,
// the runtime): a p90 of 35 words or fewer, and none over 80. The test of
// this package holds the library to it, and Sentences lets a change be
// checked the same way.
package prose

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// Sentence is one sentence of a comment: its words and where it starts.
type Sentence struct {
	Pos   token.Position
	Words int
	Text  string
}

// File returns the sentences of the comments of the Go source in path.
// Code in comments is left out: lines indented by a tab or spaces after
// the comment marker, as gofmt lays out code blocks and lists. So are
// directives (//go:, //line), lines of a table and a list item's marker.
func File(path string) ([]Sentence, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []Sentence
	for _, g := range f.Comments {
		out = append(out, group(fset, g)...)
	}
	return out, nil
}

// Dir returns the sentences of the non-test Go files in dir and, if
// recursive, in the directories below it that are in the same module
// (none with a go.mod of its own, none named testdata).
func Dir(dir string, recursive bool) ([]Sentence, error) {
	var out []Sentence
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == dir {
				return nil
			}
			if !recursive || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		s, err := File(path)
		out = append(out, s...)
		return err
	})
	return out, err
}

// group splits one comment group into sentences.
func group(fset *token.FileSet, g *ast.CommentGroup) []Sentence {
	var out []Sentence
	var words []string
	var start token.Pos
	flush := func() {
		if len(words) > 0 {
			out = append(out, Sentence{Pos: fset.Position(start), Words: len(words), Text: strings.Join(words, " ")})
		}
		words = words[:0]
	}
	for _, c := range g.List {
		text := c.Text
		if !strings.HasPrefix(text, "//") {
			flush() // a /* */ block: measured as one paragraph
			text = strings.TrimSuffix(strings.TrimPrefix(text, "/*"), "*/")
		} else {
			text = text[2:]
		}
		line := strings.TrimPrefix(text, " ")
		switch {
		case strings.HasPrefix(text, "go:") || strings.HasPrefix(text, "line "),
			strings.HasPrefix(line, "\t"), // code, as gofmt indents it
			strings.HasPrefix(line, "|"):
			flush()
			continue
		case strings.TrimSpace(line) == "":
			flush() // a paragraph ends a sentence
			continue
		}
		// A list item (gofmt indents "  - " and "  1. ") starts a
		// sentence; its indented continuation lines go on with it.
		item := strings.TrimLeft(line, " ")
		if marker, rest, ok := strings.Cut(item, " "); ok && (marker == "-" || marker == "#" || isNumbered(marker)) {
			flush()
			line = rest
		} else {
			line = item
		}
		for _, w := range strings.Fields(line) {
			if len(words) == 0 {
				start = c.Pos()
			}
			words = append(words, w)
			if ends(w) {
				flush()
			}
		}
	}
	flush()
	return out
}

// isNumbered reports whether marker numbers a list item: "1." or "2)".
func isNumbered(marker string) bool {
	if len(marker) < 2 || (marker[len(marker)-1] != '.' && marker[len(marker)-1] != ')') {
		return false
	}
	for _, r := range marker[:len(marker)-1] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// ends reports whether word ends a sentence: a full stop, a question or
// an exclamation mark, possibly inside a closing bracket or quote. An
// abbreviation such as "e.g." or a number such as "1.5" does not.
func ends(word string) bool {
	w := strings.TrimRight(word, `)"'”’]`)
	if w == "" {
		return false
	}
	last := w[len(w)-1]
	if last != '.' && last != '?' && last != '!' {
		return false
	}
	if strings.HasSuffix(w, "...") {
		return false
	}
	switch strings.ToLower(strings.TrimLeft(w, `("'“‘[`)) {
	case "e.g.", "i.e.", "etc.", "vs.", "cf.", "no.":
		return false
	}
	core := strings.TrimRight(w, ".?!")
	if n := len(core); n > 0 && unicode.IsUpper(rune(core[n-1])) && n <= 2 {
		return false // an initial, as in "V. Lauck"
	}
	return true
}

// Stats summarises sentence lengths: their number, mean, 90th percentile
// and the longest.
type Stats struct {
	N       int
	Mean    float64
	P90     int
	Longest Sentence
}

// Summarize returns the Stats of s.
func Summarize(s []Sentence) Stats {
	if len(s) == 0 {
		return Stats{}
	}
	lens := make([]int, len(s))
	sum := 0
	st := Stats{N: len(s)}
	for i, x := range s {
		lens[i] = x.Words
		sum += x.Words
		if x.Words > st.Longest.Words {
			st.Longest = x
		}
	}
	slices.Sort(lens)
	st.Mean = float64(sum) / float64(len(s))
	st.P90 = lens[(len(lens)*9+9)/10-1]
	return st
}
