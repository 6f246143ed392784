package main

import (
	"strconv"
	"strings"
	"time"
	"unicode"
)

// when writes a time in UTC with ms, and how far from now it is.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Until(t).Round(time.Millisecond)
	rel := "in " + d.String()
	if d < 0 {
		rel = (-d).String() + " ago"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z") + " (" + rel + ")"
}

// clean returns s as it is if it is plain printable text without tabs
// or newlines, else quoted: a job's data never reaches the terminal as
// control characters.
func clean(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar {
			return strconv.Quote(s)
		}
	}
	if s == "" || s != strings.TrimSpace(s) || strings.HasPrefix(s, `"`) {
		return strconv.Quote(s)
	}
	return s
}
