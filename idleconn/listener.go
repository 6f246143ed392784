package idleconn

import (
	"fmt"
	"github.com/timewheel/timewheel/internal/nilarg"
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
// The zero Listener wraps no listener and is not usable. Accept, Close,
// Addr and IdleTimeout panic with a message that says to make Listeners
// with NewListener, as every method of a nil *Listener does. The zero
// Listener's Stats reports that it has accepted nothing.
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
// *[TimeoutError] if d is not positive, and an error matching
// [timewheel.ErrClosed] if w is closed; l is then left as it was, open.
// It panics if l is nil (or a nil pointer) or w is a zero Wheel.
func NewListener(l net.Listener, w *timewheel.Wheel, d time.Duration) (*Listener, error) {
	if nilarg.Is(l) {
		panic(fmt.Sprintf("idleconn: NewListener called with nil net.Listener%s", nilarg.Type(l)))
	}
	if d <= 0 {
		return nil, &TimeoutError{Timeout: d}
	}
	w = wheelOrDefault(w)
	if err := closedWheel("NewListener", w); err != nil {
		return nil, err
	}
	return &Listener{nl: l, w: w, d: d}, nil
}

// Accept waits for and returns the next connection, a *[Conn] whose idle
// timeout starts now. Errors of the underlying listener are returned
// unchanged. If the listener's wheel has been closed, where the
// connection would never time out, Accept closes the connection it took
// and returns a *net.OpError matching [timewheel.ErrClosed] (an
// http.Server's Serve returns it). Apart from the wait, the complexity is
// O(1).
func (l *Listener) Accept() (net.Conn, error) {
	l.check("Accept")
	nc, err := l.nl.Accept()
	if err != nil {
		return nil, err
	}
	c := newConn(nc, l.w, l.d, &l.stats)
	// After the timer is set, as in NewConn.
	if err := closedWheel("Accept", l.w); err != nil {
		c.timer.Load().Stop()
		nc.Close()
		a := l.nl.Addr()
		return nil, &net.OpError{Op: "accept", Net: a.Network(), Addr: a, Err: err}
	}
	l.stats.add(accepted)
	return c, nil
}

// Close closes the listener, as the underlying listener's Close (a second
// call returns its error). Connections already accepted stay open.
func (l *Listener) Close() error {
	l.check("Close")
	return l.nl.Close()
}

// Addr returns the listener's network address.
func (l *Listener) Addr() net.Addr {
	l.check("Addr")
	return l.nl.Addr()
}

// IdleTimeout returns the idle timeout of the connections the listener
// hands out.
func (l *Listener) IdleTimeout() time.Duration {
	l.check("IdleTimeout")
	return l.d
}

// check panics, for method m, if l is nil or a zero Listener.
func (l *Listener) check(m string) {
	switch {
	case l == nil:
		panic("idleconn: " + m + " called on a nil *Listener")
	case l.nl == nil:
		panic("idleconn: " + m + " called on a zero Listener; make one with NewListener")
	}
}
