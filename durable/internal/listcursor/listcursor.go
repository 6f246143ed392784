// Package listcursor is the one cursor format of the command
// (durable/cmd/durable) and the dashboard (durable/dashboard): a cursor
// of durable.Queue.List in base64url without padding. It is one word in
// a shell and in a URL, so a cursor that one prints the other takes.
package listcursor

import (
	"encoding/base64"
	"fmt"
)

// Encode returns List's cursor raw as the command and the dashboard show
// it; "" stays "". It costs O(len(raw)).
func Encode(raw string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// Decode returns the List cursor that Encode wrote as s; "" stays "". It
// returns an error naming s if s is not base64url. A cursor that decodes
// may still be one List refuses (durable.ErrCursor). It costs O(len(s)).
func Decode(s string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("listcursor: %.60q is not a cursor a list printed", s)
	}
	return string(b), nil
}
