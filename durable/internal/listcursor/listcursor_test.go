package listcursor

import (
	"strings"
	"testing"
)

// TestRoundTrip: every byte string, NUL and non-UTF-8 bytes included,
// comes back from Decode as Encode wrote it, as one shell word.
func TestRoundTrip(t *testing.T) {
	for _, raw := range []string{"", "a", "due|1700000000000000|job-1", "\x00\xff|x", strings.Repeat("é", 300)} {
		enc := Encode(raw)
		if strings.ContainsAny(enc, " \t\n'\"&?=/+") {
			t.Errorf("Encode(%q) = %q: not one word in a shell and a URL", raw, enc)
		}
		got, err := Decode(enc)
		if err != nil || got != raw {
			t.Errorf("Decode(Encode(%q)) = %q, %v", raw, got, err)
		}
	}
}

// TestDecodeRefuses: a string no list printed is an error naming it.
func TestDecodeRefuses(t *testing.T) {
	for _, s := range []string{"not a cursor", "a+b/c==", "%%"} {
		if _, err := Decode(s); err == nil || !strings.Contains(err.Error(), "listcursor:") {
			t.Errorf("Decode(%q): err %v, want one naming the package", s, err)
		}
	}
}
