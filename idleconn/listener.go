package idleconn

import (
	"net"
	"time"

	"github.com/timewheel/timewheel"
)

// Listener is a net.Listener whose Accept returns connections that close
// themselves when idle: each is a *[Conn] with the listener's idle
// timeout, timed on the listener's wheel. Serve an http.Server on it to
// close idle keep-alive connections (see the package documentation for
// how it combines with http.Server's own timeouts).
//
// A Listener is safe for concurrent use, like the net.Listener it wraps.
type Listener struct {
	nl    net.Listener
	w     *timewheel.Wheel
	d     time.Duration
	stats counters
}

// NewListener returns l wrapped so that every connection it accepts is
// closed after being idle for d, timed on the wheel w (nil means
// [timewheel.Default]). A wheel with a coarse tick (WithTick) suits idle
// timeouts, which need no millisecond precision. NewListener returns a
// *[TimeoutError] if d is not positive, and panics if l is nil.
func NewListener(l net.Listener, w *timewheel.Wheel, d time.Duration) (*Listener, error) {
	if l == nil {
		panic("idleconn: NewListener called with nil net.Listener")
	}
	if d <= 0 {
		return nil, &TimeoutError{Timeout: d}
	}
	if w == nil {
		w = timewheel.Default()
	}
	return &Listener{nl: l, w: w, d: d}, nil
}

// Accept waits for and returns the next connection, a *[Conn] whose idle
// timeout starts now. Errors of the underlying listener are returned
// unchanged. Apart from the wait, the complexity is O(1).
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.nl.Accept()
	if err != nil {
		return nil, err
	}
	l.stats.add(accepted)
	return newConn(c, l.w, l.d, &l.stats), nil
}

// Close closes the listener. Connections already accepted stay open.
func (l *Listener) Close() error { return l.nl.Close() }

// Addr returns the listener's network address.
func (l *Listener) Addr() net.Addr { return l.nl.Addr() }

// IdleTimeout returns the idle timeout of the connections the listener
// hands out.
func (l *Listener) IdleTimeout() time.Duration { return l.d }
