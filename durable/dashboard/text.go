package dashboard

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/timewheel/timewheel/durable"
)

// This file holds how the page writes what a job holds, and how its
// links and forms carry a job's ID.

// encodeID returns id as links and forms carry it, in id64: base64url
// without padding, so that any bytes (a NUL, bytes that are not UTF-8,
// which a browser would replace with U+FFFD) come back whole.
func encodeID(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

// queryID returns the ID of a query or form: id64 if given (encodeID),
// else id as typed. It returns an error for an id64 that is not base64url,
// and for an ID empty or over durable.MaxIDLen.
func queryID(v url.Values) (string, error) {
	id := v.Get("id")
	if s := v.Get("id64"); s != "" {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			return "", fmt.Errorf("dashboard: id64 %.40q is not an ID the page encoded", s)
		}
		id = string(b)
	}
	switch {
	case id == "":
		return "", fmt.Errorf("dashboard: no job ID")
	case len(id) > durable.MaxIDLen:
		return "", fmt.Errorf("dashboard: an ID of %d bytes, over durable.MaxIDLen (%d)", len(id), durable.MaxIDLen)
	}
	return id, nil
}

// idText returns an ID (or a kind) as the page shows it: as it is if it
// is printable UTF-8, else Go-quoted, so that a NUL or a byte that is not
// UTF-8 shows as itself.
func idText(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// redact returns a job's error as the page shows it: through
// Options.Redact if set; else, with payloads hidden, with the payload
// replaced where the error quotes it.
func (h *handler) redact(err string, payload []byte) string {
	switch {
	case h.opts.Redact != nil:
		return h.opts.Redact(err)
	case !h.opts.Payloads && len(payload) > 0:
		return strings.ReplaceAll(err, string(payload), "[payload hidden]")
	}
	return err
}

// dur writes a duration for a person: rounded to ms, or s above 10 s.
func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < 10*time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// when writes a time in UTC with ms, and how far from now it is.
func when(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	d := time.Until(t)
	if d < 0 {
		return t.UTC().Format("2006-01-02 15:04:05.000") + " (" + dur(-d) + " ago)"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000") + " (in " + dur(d) + ")"
}

// payloadText returns a payload as text: as it is if it is UTF-8, else
// Go-quoted. html/template escapes either.
func payloadText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strconv.Quote(string(b))
}

// short cuts s to n runes, with an ellipsis.
func short(n int, s string) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}
