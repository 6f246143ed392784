package idleconn_test

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/idleconn"
)

// lingerPair returns a wrapped server end and the plain client end of a
// loopback TCP connection, the Conn timed on the wheel of clk. The client
// has a small receive buffer, and has sent bytes the server has not read:
// a plain close of the server socket then makes the kernel answer with a
// RST. Both ends are closed at cleanup.
func lingerPair(t *testing.T) (c *idleconn.Conn, client net.Conn, clk *clock.Virtual, w *timewheel.Wheel) {
	t.Helper()
	clk, w = virtualWheel(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	client.(*net.TCPConn).SetReadBuffer(4096)
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c, err = idleconn.NewConn(nc, w, timeout)
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := client.Write([]byte("pipelined request")); err != nil {
		t.Fatal(err)
	}
	return c, client, clk, w
}

// wantReleased checks whether the socket under c has been closed for good.
func wantReleased(t *testing.T, step string, c *idleconn.Conn, want bool) {
	t.Helper()
	err := c.NetConn().SetDeadline(time.Time{})
	if got := errors.Is(err, net.ErrClosed); got != want {
		t.Fatalf("%s: underlying connection closed = %v (SetDeadline: %v), want %v", step, got, err, want)
	}
}

// TestIdleCloseOverTCPDeliversWrittenData: a connection closed for
// idleness never loses data the application wrote, even when the peer has
// sent bytes the application never read (which turns a plain close into a
// RST) and has not read the answer yet. The idle close half-closes the
// socket at once (the peer reads every byte written, then EOF) and
// releases it a linger delay later, on the wheel.
func TestIdleCloseOverTCPDeliversWrittenData(t *testing.T) {
	c, client, clk, w := lingerPair(t)
	const n = 64 << 10
	want := make([]byte, n)
	for i := range want {
		want[i] = byte(i)
	}
	if _, err := c.Write(want); err != nil {
		t.Fatal(err)
	}
	clk.Advance(timeout)
	wantErr(t, "at the idle deadline", c, idleconn.ErrIdleTimeout)
	client.SetReadDeadline(time.Now().Add(guard)) // a failure guard: the read waits for the data
	got, err := io.ReadAll(client)
	if len(got) != n || err != nil {
		t.Fatalf("client read %d of the %d bytes the server wrote before its idle close, then %v (ECONNRESET: %v)",
			len(got), n, err, errors.Is(err, syscall.ECONNRESET))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("client read byte %d = %d, want %d", i, got[i], want[i])
		}
	}

	// Closed for the application from the idle decision on, although the
	// socket lingers: the unread request is not returned.
	_, err = c.Read(make([]byte, 1))
	wantClosedOp(t, err, "read", true)
	_, err = c.Write([]byte("late"))
	wantClosedOp(t, err, "write", true)
	wantClosedOp(t, c.SetReadDeadline(time.Time{}), "set", true)
	wantReleased(t, "during the linger", c, false)

	// The socket is released at the end of the linger, by the same timer.
	clk.Advance(idleconn.Linger - time.Nanosecond)
	wantReleased(t, "just before the end of the linger", c, false)
	clk.Advance(time.Nanosecond)
	wantReleased(t, "at the end of the linger", c, true)
	if w.Len() != 0 {
		t.Errorf("after the linger, %d timers pending, want 0", w.Len())
	}
	wantClosedOp(t, c.Close(), "close", true)
	wantErr(t, "after Close", c, idleconn.ErrIdleTimeout)
}

// TestCloseDuringLingerReleases: Close during the linger after an idle
// close returns the idle-close error, releases the socket at once and
// stops the timer.
func TestCloseDuringLingerReleases(t *testing.T) {
	c, _, clk, w := lingerPair(t)
	clk.Advance(timeout)
	wantErr(t, "at the idle deadline", c, idleconn.ErrIdleTimeout)
	if w.Len() != 1 {
		t.Fatalf("during the linger, %d timers pending, want 1", w.Len())
	}
	wantClosedOp(t, c.Close(), "close", true)
	wantReleased(t, "after Close during the linger", c, true)
	if w.Len() != 0 {
		t.Errorf("after Close during the linger, %d timers pending, want 0", w.Len())
	}
	wantClosedOp(t, c.Close(), "close", true)
	clk.Advance(idleconn.Linger)
	wantErr(t, "after the linger", c, idleconn.ErrIdleTimeout)
}

// TestTCPReadInProgressEndsOnIdleClose: a Read blocked on a TCP
// connection returns the idle-close error at the idle decision, not at the
// end of the linger.
func TestTCPReadInProgressEndsOnIdleClose(t *testing.T) {
	c, client, clk, _ := lingerPair(t)
	if _, err := io.ReadFull(c, make([]byte, len("pipelined request"))); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		errc <- err
	}()
	clk.Advance(timeout) // the Read may or may not have started: it must fail either way
	select {
	case err := <-errc:
		wantClosedOp(t, err, "read", true)
	case <-time.After(guard): // a failure guard, not a timer wait
		t.Fatal("Read still blocked after the idle close")
	}
	client.SetReadDeadline(time.Now().Add(guard))
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("client Read after the idle close = %d, %v; want 0, EOF", n, err)
	}
}
