package idlehttp_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/idleconn"
	"github.com/timewheel/timewheel/idleconn/idlehttp"
)

const timeout = 30 * time.Second

// guard bounds each wait for a real network event; it is a failure
// guard, never how a timer is observed (timers run on a virtual clock).
const guard = time.Minute

// fixture is an http.Server on loopback behind an idleconn Listener whose
// wheel runs on a virtual clock and fires inline: when Advance returns,
// every idle close due has happened. Its handler blocks until released,
// the test moving the clock meanwhile, and its client counts the
// connections it dials.
type fixture struct {
	t        *testing.T
	clk      *clock.Virtual
	srv      *httptest.Server
	entered  chan struct{} // one per request reaching the handler
	release  chan struct{} // one per request allowed to answer
	idle     chan struct{} // one per StateIdle, from the chained hook
	conns    chan *idleconn.Conn
	peerEOF  chan struct{} // one per client connection whose Read failed
	dials    atomic.Int64
	client   *http.Client
	hijacked chan net.Conn
}

// newFixture serves on an idleconn Listener, with idlehttp.KeepAlive if
// keepAlive is set, over TLS if tls is set.
func newFixture(t *testing.T, keepAlive, tls bool) *fixture {
	t.Helper()
	f := &fixture{
		t:        t,
		clk:      clock.NewVirtual(time.Unix(1e9, 0)),
		entered:  make(chan struct{}, 4),
		release:  make(chan struct{}, 4),
		idle:     make(chan struct{}, 4),
		conns:    make(chan *idleconn.Conn, 4),
		peerEOF:  make(chan struct{}, 4),
		hijacked: make(chan net.Conn, 1),
	}
	w := timewheel.New(timewheel.WithClock(f.clk), timewheel.WithExecutor(timewheel.Inline()))
	t.Cleanup(func() { w.Close() })
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := idleconn.NewListener(nl, w, timeout)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.handle))
	f.srv.Listener.Close()
	f.srv.Listener = ln
	f.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	f.srv.Config.ConnState = func(c net.Conn, s http.ConnState) { // the user's own hook
		switch s {
		case http.StateNew:
			ic, ok := c.(*idleconn.Conn)
			if !ok {
				ic = c.(interface{ NetConn() net.Conn }).NetConn().(*idleconn.Conn)
			}
			f.conns <- ic
		case http.StateIdle:
			f.idle <- struct{}{}
		}
	}
	if keepAlive {
		idlehttp.KeepAlive(f.srv.Config)
	}
	if tls {
		f.srv.StartTLS()
	} else {
		f.srv.Start()
	}
	tr := f.srv.Client().Transport.(*http.Transport).Clone()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		f.dials.Add(1)
		return &watchedConn{Conn: c, eof: f.peerEOF}, nil
	}
	f.client = &http.Client{Transport: tr}
	t.Cleanup(func() {
		close(f.release) // a handler still waiting answers
		f.srv.Close()
		tr.CloseIdleConnections()
	})
	return f
}

// watchedConn signals once when a Read fails: for an idle keep-alive
// connection, that is the client seeing the server's close.
type watchedConn struct {
	net.Conn
	once sync.Once
	eof  chan<- struct{}
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.once.Do(func() { c.eof <- struct{}{} })
	}
	return n, err
}

// handle waits to be released and answers "done"; "/hijack" hijacks the
// connection and hands it to the test.
func (f *fixture) handle(w http.ResponseWriter, r *http.Request) {
	f.entered <- struct{}{}
	if r.URL.Path == "/hijack" {
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		f.hijacked <- c
		return
	}
	select {
	case <-f.release:
	case <-r.Context().Done():
		return
	}
	io.WriteString(w, "done")
}

// get makes a request in the background; its result comes on the channel.
func (f *fixture) get(path string) <-chan error {
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+path, nil)
		resp, err := f.client.Do(req)
		if err != nil {
			errc <- err
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && string(body) != "done" {
			err = fmt.Errorf("body %q", body)
		}
		errc <- err
	}()
	return errc
}

// wait receives from c, failing after the guard.
func wait[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(guard):
		t.Fatalf("waiting for %s: nothing after %v", what, guard)
		panic("unreachable")
	}
}

// wantErr checks the reason c is closed with.
func wantErr(t *testing.T, step string, c *idleconn.Conn, want error) {
	t.Helper()
	if got := c.Err(); got != want {
		t.Fatalf("%s: server connection Err() = %v, want %v", step, got, want)
	}
}

// TestKeepAlive serves a handler silent for three idle timeouts, over
// HTTP and HTTPS: with KeepAlive its connection is not cut, the response
// arrives whole, and the connection is closed exactly one idle timeout
// after it; without KeepAlive the idle timeout measures silence in both
// directions and cuts the handler's connection.
func TestKeepAlive(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(fmt.Sprintf("keepalive/tls=%v", tls), func(t *testing.T) {
			f := newFixture(t, true, tls)
			res := f.get("/")
			c := wait(t, f.conns, "the server connection")
			wait(t, f.entered, "the request in the handler")
			f.clk.Advance(3 * timeout)
			wantErr(t, "a handler silent for three timeouts", c, nil)
			f.release <- struct{}{}
			if err := wait(t, res, "the response"); err != nil {
				t.Fatalf("slow request: %v", err)
			}
			wait(t, f.idle, "the connection to go idle")

			f.clk.Advance(timeout - time.Nanosecond)
			wantErr(t, "idle for a timeout less 1ns", c, nil)
			f.clk.Advance(time.Nanosecond)
			wantErr(t, "idle for a timeout", c, idleconn.ErrIdleTimeout)
			wait(t, f.peerEOF, "the client to read the server's close")

			f.release <- struct{}{}
			if err := wait(t, f.get("/"), "the next response"); err != nil {
				t.Fatalf("request after the idle close: %v", err)
			}
			if n := f.dials.Load(); n != 2 {
				t.Fatalf("client dialled %d times, want 2: one per connection", n)
			}
		})
		t.Run(fmt.Sprintf("both directions/tls=%v", tls), func(t *testing.T) {
			f := newFixture(t, false, tls)
			res := f.get("/")
			c := wait(t, f.conns, "the server connection")
			wait(t, f.entered, "the request in the handler")
			f.clk.Advance(timeout)
			wantErr(t, "a handler silent for a timeout", c, idleconn.ErrIdleTimeout)
			if err := wait(t, res, "the failed request"); err == nil {
				t.Fatal("the request whose connection was cut succeeded")
			}
		})
	}
}

// TestKeepAliveHijacked: a hijacked connection stays busy, however long
// it is silent, until its handler says otherwise.
func TestKeepAliveHijacked(t *testing.T) {
	f := newFixture(t, true, false)
	f.get("/hijack")
	c := wait(t, f.conns, "the server connection")
	hc := wait(t, f.hijacked, "the hijacked connection")
	defer hc.Close()
	f.clk.Advance(3 * timeout)
	wantErr(t, "hijacked, silent for three timeouts", c, nil)
	hc.(*idleconn.Conn).SetBusy(false)
	f.clk.Advance(timeout)
	wantErr(t, "a timeout after SetBusy(false)", c, idleconn.ErrIdleTimeout)
}

func TestKeepAliveNilServer(t *testing.T) {
	defer func() {
		const want = "idlehttp: KeepAlive called with a nil *http.Server"
		if r := recover(); r != want {
			t.Fatalf("panic %v, want %q", r, want)
		}
	}()
	idlehttp.KeepAlive(nil)
}

// TestKeepAliveTwice: a second KeepAlive chains a second hook, which
// changes nothing; the first hook set is still called once per change.
func TestKeepAliveTwice(t *testing.T) {
	var calls atomic.Int64
	srv := &http.Server{ConnState: func(net.Conn, http.ConnState) { calls.Add(1) }}
	idlehttp.KeepAlive(srv)
	idlehttp.KeepAlive(srv)
	srv.ConnState(nil, http.StateActive)
	srv.ConnState(&net.TCPConn{}, http.StateIdle)
	if n := calls.Load(); n != 2 {
		t.Fatalf("the hook set before KeepAlive was called %d times, want 2", n)
	}
}
