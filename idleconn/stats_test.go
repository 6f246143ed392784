package idleconn_test

import (
	"net"
	"testing"

	"github.com/timewheel/timewheel/idleconn"
)

// TestListenerStats: connections accepted, closed by Close and closed for
// idleness.
func TestListenerStats(t *testing.T) {
	clk, w := virtualWheel(t)
	l, _ := newListener(t, w)
	var conns []net.Conn
	for range 3 {
		c, _ := tcpPair(t, l)
		conns = append(conns, c)
	}
	if st, want := l.Stats(), (idleconn.Stats{Accepted: 3, Open: 3}); st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	conns[0].Close()
	conns[0].Close() // closed already: not counted again
	clk.Advance(timeout)
	conns[1].Close() // closed for idleness already: not counted as closed
	if st, want := l.Stats(), (idleconn.Stats{Accepted: 3, Closed: 1, ClosedIdle: 2}); st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
}
