package idleconn_test

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/idleconn"
)

const timeout = 10 * time.Second

// virtualWheel returns a wheel on a virtual clock that runs callbacks
// inline: when Advance returns, every idle close due has happened.
func virtualWheel(t testing.TB) (*clock.Virtual, *timewheel.Wheel) {
	t.Helper()
	clk := clock.NewVirtual(time.Unix(1e9, 0))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	t.Cleanup(func() { w.Close() })
	return clk, w
}

// pipe returns a wrapped server end and the plain client end of a
// net.Pipe, closed at cleanup.
func pipe(t *testing.T, w *timewheel.Wheel) (*idleconn.Conn, net.Conn) {
	t.Helper()
	server, client := net.Pipe()
	c, err := idleconn.NewConn(server, w, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); client.Close() })
	return c, client
}

// wantErr checks that c.Err() is want, reporting the step.
func wantErr(t *testing.T, step string, c *idleconn.Conn, want error) {
	t.Helper()
	if got := c.Err(); got != want {
		t.Fatalf("%s: Err() = %v, want %v", step, got, want)
	}
}

// wantClosedOp checks that err is a *net.OpError for op matching
// net.ErrClosed, and ErrIdleTimeout exactly when idle is set.
func wantClosedOp(t *testing.T, err error, op string, idle bool) {
	t.Helper()
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != op {
		t.Fatalf("%s error = %#v, want a *net.OpError with Op %q", op, err, op)
	}
	if !errors.Is(err, net.ErrClosed) {
		t.Errorf("%s error %v does not match net.ErrClosed", op, err)
	}
	if errors.Is(err, idleconn.ErrIdleTimeout) != idle {
		t.Errorf("%s error %v: errors.Is(err, ErrIdleTimeout) = %v, want %v", op, err, !idle, idle)
	}
}

func TestNonPositiveTimeoutRefused(t *testing.T) {
	_, w := virtualWheel(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, d := range []time.Duration{0, -5 * time.Second} {
		server, client := net.Pipe()
		c, err := idleconn.NewConn(server, w, d)
		checkRefused(t, "NewConn", d, c == nil, err)
		l, err := idleconn.NewListener(ln, w, d)
		checkRefused(t, "NewListener", d, l == nil, err)
		server.Close()
		client.Close()
	}
}

func checkRefused(t *testing.T, fn string, d time.Duration, isNil bool, err error) {
	t.Helper()
	var te *idleconn.TimeoutError
	if !errors.As(err, &te) || te.Timeout != d || !isNil {
		t.Fatalf("%s(%v): err = %v, nil result = %v; want a *TimeoutError and nil", fn, d, err, isNil)
	}
	want := "idleconn: non-positive idle timeout " + d.String()
	if err.Error() != want {
		t.Errorf("%s(%v): error text %q, want %q", fn, d, err, want)
	}
}

func TestIdleCloseAtDeadline(t *testing.T) {
	clk, w := virtualWheel(t)
	c, client := pipe(t, w)

	clk.Advance(timeout - time.Nanosecond)
	wantErr(t, "just before the deadline", c, nil)
	clk.Advance(time.Nanosecond)
	wantErr(t, "at the deadline", c, idleconn.ErrIdleTimeout)
	if w.Len() != 0 {
		t.Errorf("after the idle close, %d timers pending, want 0", w.Len())
	}

	// The peer sees the close; every later operation fails like on a
	// closed net.Conn, and says why.
	if _, err := client.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("peer Read after idle close: %v, want EOF", err)
	}
	_, err := c.Read(make([]byte, 1))
	wantClosedOp(t, err, "read", true)
	n, err := c.Write([]byte("late"))
	if n != 0 {
		t.Errorf("Write after idle close wrote %d bytes", n)
	}
	wantClosedOp(t, err, "write", true)
	wantClosedOp(t, c.Close(), "close", true)
	wantErr(t, "after Close", c, idleconn.ErrIdleTimeout)
}

// TestActivityPostpones checks that a Read returning data, or a Write,
// moves the deadline to a full timeout after it, and only then.
func TestActivityPostpones(t *testing.T) {
	for _, op := range []string{"read", "write"} {
		t.Run("op="+op, func(t *testing.T) {
			clk, w := virtualWheel(t)
			c, client := pipe(t, w)
			clk.Advance(4 * time.Second)
			activity(t, op, c, client)
			clk.Advance(timeout - 4*time.Second) // the first firing: re-arms for 4s
			wantErr(t, "at the original deadline", c, nil)
			clk.Advance(4*time.Second - time.Nanosecond)
			wantErr(t, "just before the postponed deadline", c, nil)
			clk.Advance(time.Nanosecond)
			wantErr(t, "at the postponed deadline", c, idleconn.ErrIdleTimeout)
		})
	}
}

// activity makes one Read ("read") or Write ("write") on c, with the peer
// client doing the other half.
func activity(t *testing.T, op string, c *idleconn.Conn, client net.Conn) {
	t.Helper()
	local, peer := func() error { _, err := c.Read(make([]byte, 1)); return err },
		func() error { _, err := client.Write([]byte("x")); return err }
	if op == "write" {
		local, peer = func() error { _, err := c.Write([]byte("x")); return err },
			func() error { _, err := client.Read(make([]byte, 1)); return err }
	}
	errc := make(chan error, 1)
	go func() { errc <- peer() }()
	if err := local(); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("peer of %s: %v", op, err)
	}
}

func TestCloseTwice(t *testing.T) {
	clk, w := virtualWheel(t)
	c, _ := pipe(t, w)
	if err := c.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	wantErr(t, "after Close", c, net.ErrClosed)
	if w.Len() != 0 {
		t.Errorf("after Close, %d timers pending, want 0", w.Len())
	}
	wantClosedOp(t, c.Close(), "close", false)
	_, err := c.Read(make([]byte, 1))
	wantClosedOp(t, err, "read", false)
	_, err = c.Write([]byte("x"))
	wantClosedOp(t, err, "write", false)
	clk.Advance(2 * timeout)
	wantErr(t, "long after Close", c, net.ErrClosed)
}

func TestReadInProgressEndsOnIdleClose(t *testing.T) {
	clk, w := virtualWheel(t)
	c, _ := pipe(t, w)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		errc <- err
	}()
	clk.Advance(timeout)
	wantClosedOp(t, <-errc, "read", true)
}

// enteredConn signals when a Write reaches the underlying connection.
type enteredConn struct {
	net.Conn
	entered chan struct{}
}

func (c *enteredConn) Write(b []byte) (int, error) {
	c.entered <- struct{}{}
	return c.Conn.Write(b)
}

// TestWriteInProgressNotInterrupted: a Write blocked on a slow peer is
// activity; the idle timer waits for it and all its data arrives.
func TestWriteInProgressNotInterrupted(t *testing.T) {
	clk, w := virtualWheel(t)
	server, client := net.Pipe()
	defer client.Close()
	ec := &enteredConn{Conn: server, entered: make(chan struct{}, 1)}
	c, err := idleconn.NewConn(ec, w, timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	data := make([]byte, 64<<10)
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := c.Write(data)
		done <- result{n, err}
	}()
	<-ec.entered // the Write is in progress, blocked until the peer reads
	clk.Advance(5 * timeout)
	wantErr(t, "five timeouts into a Write", c, nil)

	got, err := io.ReadAll(io.LimitReader(client, int64(len(data))))
	if err != nil || len(got) != len(data) {
		t.Fatalf("peer read %d bytes, %v; want %d", len(got), err, len(data))
	}
	if r := <-done; r.n != len(data) || r.err != nil {
		t.Fatalf("Write = %d, %v; want %d, nil", r.n, r.err, len(data))
	}
	// The end of the Write was the last activity.
	clk.Advance(timeout - time.Nanosecond)
	wantErr(t, "just before a timeout after the Write", c, nil)
	clk.Advance(time.Nanosecond)
	wantErr(t, "a timeout after the Write", c, idleconn.ErrIdleTimeout)
}

func TestSetBusy(t *testing.T) {
	clk, w := virtualWheel(t)
	c, _ := pipe(t, w)
	c.SetBusy(true)
	clk.Advance(3 * timeout)
	wantErr(t, "busy for three timeouts", c, nil)
	c.SetBusy(false) // counts as activity
	clk.Advance(timeout - time.Nanosecond)
	wantErr(t, "just before a timeout after SetBusy(false)", c, nil)
	clk.Advance(time.Nanosecond)
	wantErr(t, "a timeout after SetBusy(false)", c, idleconn.ErrIdleTimeout)
}

// TestWheelClosedLater: a connection whose wheel is closed after NewConn
// stays open, its timer dropped with the wheel's (NewConn on a closed
// wheel is an error: see TestConstructorMisuse).
func TestWheelClosedLater(t *testing.T) {
	clk, w := virtualWheel(t)
	c, _ := pipe(t, w)
	w.Close()
	clk.Advance(10 * timeout)
	wantErr(t, "on a wheel closed after NewConn", c, nil)
}

// TestNewConnOnClosedWheelLeavesConnOpen: the refused connection is the
// caller's, untouched.
func TestNewConnOnClosedWheelLeavesConnOpen(t *testing.T) {
	_, w := virtualWheel(t)
	w.Close()
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	if _, err := idleconn.NewConn(server, w, timeout); !errors.Is(err, timewheel.ErrClosed) {
		t.Fatalf("NewConn on a closed wheel: %v, want timewheel.ErrClosed", err)
	}
	go client.Write([]byte("x"))
	if _, err := server.Read(make([]byte, 1)); err != nil {
		t.Fatalf("Read on the refused connection: %v", err)
	}
}

// nopConn is a net.Conn whose Read and Write succeed at once.
type nopConn struct{ net.Conn }

func (nopConn) Read(b []byte) (int, error)  { return len(b), nil }
func (nopConn) Write(b []byte) (int, error) { return len(b), nil }
func (nopConn) Close() error                { return nil }
func (nopConn) LocalAddr() net.Addr         { return &net.TCPAddr{} }
func (nopConn) RemoteAddr() net.Addr        { return &net.TCPAddr{} }

// TestNeverEarlyNeverLate drives random activity on whole milliseconds and
// checks after every step that the connection is closed exactly when it
// has been idle for the timeout: never before, and at the first tick
// after.
func TestNeverEarlyNeverLate(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		clk, w := virtualWheel(t)
		start := clk.Now()
		c, err := idleconn.NewConn(nopConn{}, w, timeout)
		if err != nil {
			t.Fatal(err)
		}
		last := start
		for step := 0; c.Err() == nil; step++ {
			clk.Advance(time.Duration(r.IntN(int(timeout/time.Millisecond))) * time.Millisecond)
			now := clk.Now()
			idle := now.Sub(last)
			if closed := c.Err() != nil; closed != (idle >= timeout) {
				t.Fatalf("seed %d step %d: idle %v of %v, closed = %v", seed, step, idle, timeout, closed)
			}
			if c.Err() == nil && r.IntN(3) > 0 {
				if r.IntN(2) == 0 {
					c.Read(make([]byte, 1))
				} else {
					c.Write([]byte("x"))
				}
				last = now
			}
		}
	}
}

// TestConcurrentUse hammers Read, Write, SetBusy and Close from several
// goroutines while the clock advances, for the race detector.
func TestConcurrentUse(t *testing.T) {
	clk, w := virtualWheel(t)
	for range 50 {
		c, err := idleconn.NewConn(nopConn{}, w, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Go(func() {
				for i := range 200 {
					switch (g + i) % 3 {
					case 0:
						c.Read(make([]byte, 1))
					case 1:
						c.Write([]byte("x"))
					default:
						c.SetBusy(i%2 == 0)
					}
				}
			})
		}
		wg.Go(func() {
			for range 20 {
				clk.Advance(time.Millisecond)
			}
		})
		wg.Wait()
		c.SetBusy(false)
		clk.Advance(time.Millisecond)
		if err := c.Err(); err != idleconn.ErrIdleTimeout {
			t.Fatalf("after the storm and a quiet timeout: Err() = %v", err)
		}
	}
}
