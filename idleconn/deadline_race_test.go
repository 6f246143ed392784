package idleconn_test

import (
	"net"
	"testing"
	"time"

	"github.com/timewheel/timewheel/idleconn"
)

// gatedTCP holds the application's SetReadDeadline(zero) call between
// the Conn's closed check and the underlying call, to force the
// interleaving with an idle close. CloseWrite is promoted from *net.TCPConn,
// so the idle close half-closes and lingers.
type gatedTCP struct {
	*net.TCPConn
	entered, proceed chan struct{}
}

func (g *gatedTCP) SetReadDeadline(t time.Time) error {
	if t.IsZero() {
		close(g.entered)
		<-g.proceed
	}
	return g.TCPConn.SetReadDeadline(t)
}

// TestSetReadDeadlineRacingIdleClose: an application SetReadDeadline that
// passed the closed check just before the idle decision lands after the
// idle close's past read deadline; it must not undo it: Read still
// returns the idle-close error, not the peer's data.
func TestSetReadDeadlineRacingIdleClose(t *testing.T) {
	clk, w := virtualWheel(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedTCP{TCPConn: nc.(*net.TCPConn), entered: make(chan struct{}), proceed: make(chan struct{})}
	c, err := idleconn.NewConn(g, w, timeout)
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	defer c.Close()

	errc := make(chan error, 1)
	go func() { errc <- c.SetReadDeadline(time.Time{}) }()
	<-g.entered          // passed the closed check, not yet applied
	clk.Advance(timeout) // idle close: CloseWrite, past read deadline, linger
	wantErr(t, "at the idle deadline", c, idleconn.ErrIdleTimeout)
	close(g.proceed)
	setErr := <-errc

	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	type result struct {
		n   int
		err error
	}
	rc := make(chan result, 1)
	go func() {
		n, err := c.Read(make([]byte, 1))
		rc <- result{n, err}
	}()
	select {
	case r := <-rc:
		if r.err == nil {
			t.Fatalf("after the idle close, Read returned %d bytes and no error (the racing SetReadDeadline returned %v and cleared the idle close's past deadline)", r.n, setErr)
		}
		wantClosedOp(t, r.err, "read", true)
	case <-time.After(5 * time.Second): // a failure guard, not a timer wait
		c.Close()
		t.Fatalf("Read blocked after the idle close (the racing SetReadDeadline returned %v)", setErr)
	}
}
