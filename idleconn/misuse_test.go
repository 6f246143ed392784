package idleconn_test

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/idleconn"
	"github.com/timewheel/timewheel/internal/misusetest"
)

// conns are the ways of holding a Conn that is not one made by NewConn or
// Accept.
var conns = []struct {
	name string
	make func() *idleconn.Conn
	is   string // how the panic names it
}{
	{"var Conn", func() *idleconn.Conn { var c idleconn.Conn; return &c }, "a zero Conn; make one with NewConn or a Listener's Accept"},
	{"new(Conn)", func() *idleconn.Conn { return new(idleconn.Conn) }, "a zero Conn; make one with NewConn or a Listener's Accept"},
	{"nil *Conn", func() *idleconn.Conn { return nil }, "a nil *Conn"},
}

// connMethods calls every method of Conn.
var connMethods = []struct {
	name string
	call func(c *idleconn.Conn) error
}{
	{"Read", func(c *idleconn.Conn) error { _, err := c.Read(make([]byte, 1)); return err }},
	{"Write", func(c *idleconn.Conn) error { _, err := c.Write([]byte("x")); return err }},
	{"ReadFrom", func(c *idleconn.Conn) error { _, err := c.ReadFrom(strings.NewReader("x")); return err }},
	{"SetBusy", func(c *idleconn.Conn) error { c.SetBusy(true); return nil }},
	{"Close", func(c *idleconn.Conn) error { return c.Close() }},
	{"Err", func(c *idleconn.Conn) error { return c.Err() }},
	{"IdleTimeout", func(c *idleconn.Conn) error { c.IdleTimeout(); return nil }},
	{"NetConn", func(c *idleconn.Conn) error { c.NetConn(); return nil }},
	{"LocalAddr", func(c *idleconn.Conn) error { c.LocalAddr(); return nil }},
	{"RemoteAddr", func(c *idleconn.Conn) error { c.RemoteAddr(); return nil }},
	{"SetDeadline", func(c *idleconn.Conn) error { return c.SetDeadline(time.Time{}) }},
	{"SetReadDeadline", func(c *idleconn.Conn) error { return c.SetReadDeadline(time.Time{}) }},
	{"SetWriteDeadline", func(c *idleconn.Conn) error { return c.SetWriteDeadline(time.Time{}) }},
	{"CloseWrite", func(c *idleconn.Conn) error { return c.CloseWrite() }},
}

// TestZeroConn: every method of a Conn not made by the package panics,
// naming the method and saying where Conns come from.
func TestZeroConn(t *testing.T) {
	var ms []misusetest.Case
	for _, form := range conns {
		for _, m := range connMethods {
			ms = append(ms, misusetest.Case{
				Name: form.name + "/" + m.name,
				Call: func(*testing.T) error { return m.call(form.make()) },
				Want: "panic: idleconn: " + m.name + " called on " + form.is,
			})
		}
	}
	misusetest.Run(t, ms)
}

// listeners are the ways of holding a Listener not made by NewListener.
var listeners = []struct {
	name string
	make func() *idleconn.Listener
	is   string
}{
	{"var Listener", func() *idleconn.Listener { var l idleconn.Listener; return &l }, "a zero Listener; make one with NewListener"},
	{"new(Listener)", func() *idleconn.Listener { return new(idleconn.Listener) }, "a zero Listener; make one with NewListener"},
	{"nil *Listener", func() *idleconn.Listener { return nil }, "a nil *Listener"},
}

// TestZeroListener: Accept, Close, Addr and IdleTimeout of a Listener not
// made by NewListener panic; Stats of a zero Listener reports that it has
// accepted nothing.
func TestZeroListener(t *testing.T) {
	methods := []struct {
		name string
		call func(l *idleconn.Listener) error
	}{
		{"Accept", func(l *idleconn.Listener) error { _, err := l.Accept(); return err }},
		{"Close", func(l *idleconn.Listener) error { return l.Close() }},
		{"Addr", func(l *idleconn.Listener) error { l.Addr(); return nil }},
		{"IdleTimeout", func(l *idleconn.Listener) error { l.IdleTimeout(); return nil }},
		{"Stats", func(l *idleconn.Listener) error {
			if st := l.Stats(); st != (idleconn.Stats{}) {
				return fmt.Errorf("Stats() = %+v, want zero", st)
			}
			return nil
		}},
	}
	var ms []misusetest.Case
	for _, form := range listeners {
		for _, m := range methods {
			want := "panic: idleconn: " + m.name + " called on " + form.is
			if m.name == "Stats" && form.name != "nil *Listener" {
				want = "ok"
			}
			ms = append(ms, misusetest.Case{Name: form.name + "/" + m.name, Call: func(*testing.T) error { return m.call(form.make()) }, Want: want})
		}
	}
	misusetest.Run(t, ms)
}

// closedWheel returns a wheel on a virtual clock, closed.
func closedWheel(t *testing.T) *timewheel.Wheel {
	t.Helper()
	_, w := virtualWheel(t)
	w.Close()
	return w
}

// newConn wraps the server end of a net.Pipe with w and d, closing both
// ends at cleanup, and returns NewConn's error.
func newConn(t *testing.T, w *timewheel.Wheel, d time.Duration) (*idleconn.Conn, error) {
	t.Helper()
	server, client := net.Pipe()
	t.Cleanup(func() { server.Close(); client.Close() })
	c, err := idleconn.NewConn(server, w, d)
	if (c == nil) == (err == nil) {
		t.Fatalf("NewConn = %v, %v: want exactly one of them nil", c, err)
	}
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// newListenerErr wraps a loopback listener with w and d, closing it at
// cleanup, and returns NewListener's error.
func newListenerErr(t *testing.T, w *timewheel.Wheel, d time.Duration) (*idleconn.Listener, error) {
	t.Helper()
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nl.Close() })
	l, err := idleconn.NewListener(nl, w, d)
	if (l == nil) == (err == nil) {
		t.Fatalf("NewListener = %v, %v: want exactly one of them nil", l, err)
	}
	return l, err
}

// TestConstructorMisuse: nil, zero and closed wheels, and the extremes of
// the idle timeout, given to NewConn and NewListener.
func TestConstructorMisuse(t *testing.T) {
	const closedWheelErr = "on a closed wheel, where connections never time out: timewheel: wheel closed"
	var ms []misusetest.Case
	for _, fn := range []string{"NewConn", "NewListener"} {
		construct := func(t *testing.T, w *timewheel.Wheel, d time.Duration) error {
			if fn == "NewConn" {
				_, err := newConn(t, w, d)
				return err
			}
			_, err := newListenerErr(t, w, d)
			return err
		}
		zeroWheelOp := "Now" // the first method of the wheel fn calls
		if fn == "NewListener" {
			zeroWheelOp = "Err"
		}
		for _, d := range []time.Duration{0, -time.Nanosecond, math.MinInt64} {
			ms = append(ms, misusetest.Case{
				Name: fmt.Sprintf("%s/timeout %d", fn, d),
				Call: func(t *testing.T) error { return construct(t, nil, d) },
				Want: "error: idleconn: non-positive idle timeout " + d.String(),
			})
		}
		ms = append(ms,
			misusetest.Case{
				Name: fn + "/nil wheel is the default wheel",
				Call: func(t *testing.T) error { return construct(t, nil, time.Hour) },
				Want: "ok",
			},
			misusetest.Case{
				Name: fn + "/zero wheel",
				Call: func(t *testing.T) error { return construct(t, new(timewheel.Wheel), time.Hour) },
				Want: "panic: timewheel: " + zeroWheelOp + " called on a zero Wheel; make one with New",
			},
			misusetest.Case{
				Name: fn + "/closed wheel",
				Call: func(t *testing.T) error { return construct(t, closedWheel(t), time.Hour) },
				Want: "error: idleconn: " + fn + " " + closedWheelErr,
				Is:   timewheel.ErrClosed,
			},
			misusetest.Case{
				Name: fn + "/timeout MaxInt64",
				Call: func(t *testing.T) error { return construct(t, nil, math.MaxInt64) },
				Want: "ok",
			},
		)
	}
	ms = append(ms,
		misusetest.Case{
			Name: "NewConn/nil net.Conn",
			Call: func(*testing.T) error { _, err := idleconn.NewConn(nil, nil, time.Hour); return err },
			Want: "panic: idleconn: NewConn called with nil net.Conn",
		},
		misusetest.Case{
			Name: "NewListener/nil net.Listener",
			Call: func(*testing.T) error { _, err := idleconn.NewListener(nil, nil, time.Hour); return err },
			Want: "panic: idleconn: NewListener called with nil net.Listener",
		},
		misusetest.Case{
			// Package net's methods crash on a nil *net.TCPConn: refused
			// at once, rather than in a timer callback later.
			Name: "NewConn/nil *net.TCPConn",
			Call: func(*testing.T) error { _, err := idleconn.NewConn((*net.TCPConn)(nil), nil, time.Hour); return err },
			Want: "panic: idleconn: NewConn called with nil net.Conn (a nil *net.TCPConn)",
		},
		misusetest.Case{
			Name: "NewListener/nil *net.TCPListener",
			Call: func(*testing.T) error {
				_, err := idleconn.NewListener((*net.TCPListener)(nil), nil, time.Hour)
				return err
			},
			Want: "panic: idleconn: NewListener called with nil net.Listener (a nil *net.TCPListener)",
		},
	)
	misusetest.Run(t, ms)
}

// TestTimeoutExtremes: a sub-tick timeout closes the connection at the
// first tick after it; the longest one never in practice.
func TestTimeoutExtremes(t *testing.T) {
	for _, tc := range []struct {
		d       time.Duration
		advance time.Duration
		want    error
	}{
		{time.Nanosecond, time.Millisecond - time.Nanosecond, nil},
		{time.Nanosecond, time.Millisecond, idleconn.ErrIdleTimeout},
		{math.MaxInt64, 100 * 365 * 24 * time.Hour, nil},
	} {
		t.Run(fmt.Sprintf("d=%v,advance=%v", tc.d, tc.advance), func(t *testing.T) {
			clk, w := virtualWheel(t)
			c, err := idleconn.NewConn(nopConn{}, w, tc.d)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			clk.Advance(tc.advance)
			wantErr(t, "after the advance", c, tc.want)
		})
	}
}

// TestOperationMisuse: calls a Conn or Listener refuses with an error, or
// that are the caller's mistake.
func TestOperationMisuse(t *testing.T) {
	misusetest.Run(t, []misusetest.Case{
		{
			Name: "Conn.Close twice",
			Call: func(t *testing.T) error {
				_, w := virtualWheel(t)
				c, _ := pipe(t, w)
				if err := c.Close(); err != nil {
					return err
				}
				return c.Close()
			},
			Want: "error: close pipe pipe->pipe: use of closed network connection",
			Is:   net.ErrClosed,
		},
		readFromNil(false),
		readFromNil(true),
		{
			Name: "Listener.Close twice, as net's",
			Call: func(t *testing.T) error {
				_, w := virtualWheel(t)
				l, _ := newListener(t, w)
				l.Close()
				err := l.Close()
				if !errors.Is(err, net.ErrClosed) {
					return fmt.Errorf("second Close: %v, want net.ErrClosed", err)
				}
				return nil
			},
			Want: "ok",
		},
		{
			Name: "Accept on a wheel closed after NewListener",
			Call: func(t *testing.T) error {
				_, w := virtualWheel(t)
				l, nl := newListener(t, w)
				w.Close()
				go func() {
					if c, err := net.Dial("tcp", nl.Addr().String()); err == nil {
						c.Close()
					}
				}()
				c, err := l.Accept()
				if c != nil {
					c.Close()
					return errors.New("Accept returned a connection")
				}
				return errors.New(strings.Replace(err.Error(), nl.Addr().String(), "ADDR", 1))
			},
			Want: "error: accept tcp ADDR: idleconn: Accept on a closed wheel, where connections never time out: timewheel: wheel closed",
		},
		{
			Name: "(*TimeoutError)(nil).Error",
			Call: func(*testing.T) error { return errors.New((*idleconn.TimeoutError)(nil).Error()) },
			Want: "error: <nil>",
		},
	})
}

// readFromNil is ReadFrom(nil) on an open Conn, or a closed one.
func readFromNil(closed bool) misusetest.Case {
	name := "Conn.ReadFrom(nil)"
	if closed {
		name += " on a closed Conn"
	}
	return misusetest.Case{
		Name: name,
		Call: func(t *testing.T) error {
			_, w := virtualWheel(t)
			c, _ := pipe(t, w)
			if closed {
				c.Close()
			}
			_, err := c.ReadFrom(nil)
			return err
		},
		Want: "panic: idleconn: ReadFrom called with a nil io.Reader",
	}
}

// TestAcceptOnClosedWheelClosesTheConnection: the connection Accept takes
// from the underlying listener on a closed wheel is closed, and the error
// matches timewheel.ErrClosed.
func TestAcceptOnClosedWheelClosesTheConnection(t *testing.T) {
	_, w := virtualWheel(t)
	l, nl := newListener(t, w)
	client, err := net.Dial("tcp", nl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	w.Close()
	c, err := l.Accept()
	if c != nil || !errors.Is(err, timewheel.ErrClosed) {
		t.Fatalf("Accept = %v, %v; want nil and an error matching timewheel.ErrClosed", c, err)
	}
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("client Read = %d, %v; want 0, EOF: the accepted connection was not closed", n, err)
	}
}
