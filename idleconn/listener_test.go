package idleconn_test

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/idleconn"
)

// tcpPair returns a connection accepted by l and the client end dialled to
// it, both closed at cleanup.
func tcpPair(t *testing.T, l net.Listener) (accepted, client net.Conn) {
	t.Helper()
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := l.Accept()
		ch <- result{c, err}
	}()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.c.Close(); client.Close() })
	return r.c, client
}

// newListener returns a Listener on a loopback port with w and timeout,
// closed when the test ends, and the net.Listener it wraps.
func newListener(t *testing.T, w *timewheel.Wheel) (*idleconn.Listener, net.Listener) {
	t.Helper()
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := idleconn.NewListener(nl, w, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, nl
}

func TestListener(t *testing.T) {
	clk, w := virtualWheel(t)
	l, nl := newListener(t, w)
	if l.Addr() != nl.Addr() || l.IdleTimeout() != timeout {
		t.Fatalf("Addr, IdleTimeout = %v, %v; want %v, %v", l.Addr(), l.IdleTimeout(), nl.Addr(), timeout)
	}
	accepted, client := tcpPair(t, l)
	c, ok := accepted.(*idleconn.Conn)
	if !ok {
		t.Fatalf("Accept returned a %T, want *idleconn.Conn", accepted)
	}
	if c.RemoteAddr().String() != client.LocalAddr().String() || c.IdleTimeout() != timeout {
		t.Fatalf("accepted conn: RemoteAddr %v, IdleTimeout %v", c.RemoteAddr(), c.IdleTimeout())
	}
	if _, ok := c.NetConn().(*net.TCPConn); !ok {
		t.Fatalf("NetConn() is a %T, want *net.TCPConn", c.NetConn())
	}

	// Data from the client is activity; its absence for the timeout closes
	// the connection, and the client reads EOF.
	clk.Advance(timeout / 2)
	if _, err := client.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	clk.Advance(timeout - time.Nanosecond)
	wantErr(t, "a timeout after the data, less 1ns", c, nil)
	clk.Advance(time.Nanosecond)
	wantErr(t, "a timeout after the data", c, idleconn.ErrIdleTimeout)
	if n, err := client.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("client Read after idle close = %d, %v; want 0, EOF", n, err)
	}
}

func TestListenerAcceptError(t *testing.T) {
	_, w := virtualWheel(t)
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := idleconn.NewListener(nl, w, timeout)
	l.Close()
	if c, err := l.Accept(); c != nil || err == nil {
		t.Fatalf("Accept on a closed listener = %v, %v; want nil and an error", c, err)
	}
}

// TestReadFromAndCloseWrite: copying into the Conn goes through the TCP
// connection's own ReadFrom, counts as activity, and CloseWrite half-closes.
func TestReadFromAndCloseWrite(t *testing.T) {
	clk, w := virtualWheel(t)
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := idleconn.NewListener(nl, w, timeout)
	defer l.Close()
	accepted, client := tcpPair(t, l)
	c := accepted.(*idleconn.Conn)

	clk.Advance(timeout / 2)
	payload := strings.Repeat("x", 100<<10)
	if n, err := io.Copy(c, strings.NewReader(payload)); n != int64(len(payload)) || err != nil {
		t.Fatalf("io.Copy = %d, %v", n, err)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatalf("CloseWrite: %v", err)
	}
	got, err := io.ReadAll(client)
	if err != nil || !bytes.Equal(got, []byte(payload)) {
		t.Fatalf("client read %d bytes, %v", len(got), err)
	}
	clk.Advance(timeout - time.Nanosecond)
	wantErr(t, "a timeout after the copy, less 1ns", c, nil)
	clk.Advance(time.Nanosecond)
	wantErr(t, "a timeout after the copy", c, idleconn.ErrIdleTimeout)
	_, err = c.ReadFrom(strings.NewReader("late"))
	wantClosedOp(t, err, "readfrom", true)
}

func TestCloseWriteUnsupported(t *testing.T) {
	_, w := virtualWheel(t)
	c, _ := pipe(t, w)
	if err := c.CloseWrite(); err == nil {
		t.Fatal("CloseWrite on a net.Pipe conn succeeded")
	}
}
