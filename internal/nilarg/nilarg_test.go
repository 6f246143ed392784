package nilarg_test

import (
	"io"
	"net"
	"testing"

	"github.com/timewheel/timewheel/internal/nilarg"
)

func TestIs(t *testing.T) {
	var conn net.Conn = (*net.TCPConn)(nil)
	var r io.Reader
	for _, c := range []struct {
		v    any
		nil  bool
		name string
	}{
		{nil, true, ""},
		{r, true, ""},
		{conn, true, " (a nil *net.TCPConn)"},
		{(func())(nil), true, " (a nil func())"},
		{new(int), false, ""},
		{3, false, ""},
	} {
		if got := nilarg.Is(c.v); got != c.nil {
			t.Errorf("Is(%#v) = %v", c.v, got)
		}
		if c.nil {
			if got := nilarg.Type(c.v); got != c.name {
				t.Errorf("Type(%#v) = %q; want %q", c.v, got, c.name)
			}
		}
	}
}
