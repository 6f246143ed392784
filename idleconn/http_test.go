package idleconn_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel/idleconn"
)

// The HTTP test serves a real http.Server on loopback through an idleconn
// Listener whose wheel runs on a virtual clock, and drives 2,000
// keep-alive connections from two standard http.Clients: an idle group
// that makes one request and then waits, and a busy group that makes a
// request on every connection every 20 virtual seconds. Network I/O is
// real; only the clock is virtual, so the idle closes happen exactly when
// the test advances it, inside Advance.
const (
	httpIdle    = 1500
	httpBusy    = 500
	httpTimeout = 30 * time.Second
	// guard bounds each wait for real network events; it is a failure
	// guard, never how a timer is observed.
	guard = 2 * time.Minute
)

// barrier holds requests in the handler until n have arrived, so that a
// round of n concurrent requests needs n distinct connections.
type barrier struct {
	n, arrived atomic.Int64
	open       chan struct{}
}

func newBarrier(n int) *barrier {
	b := &barrier{open: make(chan struct{})}
	b.n.Store(int64(n))
	return b
}

func (b *barrier) wait(ctx context.Context) {
	if b.arrived.Add(1) == b.n.Load() {
		close(b.open)
	}
	select {
	case <-b.open:
	case <-ctx.Done():
	}
}

// httpFixture is the server, its connections, and the two client groups.
type httpFixture struct {
	t     *testing.T
	url   string
	gate  atomic.Pointer[barrier]
	idled chan struct{} // one per StateIdle: a response has been fully written

	mu    sync.Mutex
	conns map[string]*idleconn.Conn // server side, by client address

	groups [2]*clientGroup // idle, busy
}

// clientGroup is one http.Client whose dials are counted and whose
// connections report when they read the server's close.
type clientGroup struct {
	name      string
	client    *http.Client
	transport *http.Transport
	dials     atomic.Int64
	mu        sync.Mutex
	addrs     map[string]bool // local addresses of the dialled connections
	peerEOF   chan struct{}   // one per connection whose Read failed
}

func newClientGroup(name string, n int) *clientGroup {
	g := &clientGroup{name: name, addrs: map[string]bool{}, peerEOF: make(chan struct{}, 4*n)}
	var d net.Dialer
	g.transport = &http.Transport{
		MaxIdleConnsPerHost: 2 * n,
		MaxConnsPerHost:     2 * n,
		DisableCompression:  true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			g.dials.Add(1)
			g.mu.Lock()
			g.addrs[c.LocalAddr().String()] = true
			g.mu.Unlock()
			return &watchedConn{Conn: c, eof: g.peerEOF}, nil
		},
	}
	g.client = &http.Client{Transport: g.transport}
	return g
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

// round makes n concurrent requests from g, held in the handler until all
// have arrived, and waits until the server has finished every response.
func (f *httpFixture) round(g *clientGroup, n int) {
	f.t.Helper()
	f.gate.Store(newBarrier(n))
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", f.url, nil)
			resp, err := g.client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		f.t.Fatalf("%s request: %v", g.name, err)
	}
	f.await(f.idled, n, "responses written")
}

// await receives n signals from c, failing after the guard.
func (f *httpFixture) await(c <-chan struct{}, n int, what string) {
	f.t.Helper()
	deadline := time.NewTimer(guard)
	defer deadline.Stop()
	for i := range n {
		select {
		case <-c:
		case <-deadline.C:
			f.t.Fatalf("waiting for %s: %d of %d after %v", what, i, n, guard)
		}
	}
}

// check verifies the reason every server connection of g is closed with:
// want (nil for open).
func (f *httpFixture) check(step string, g *clientGroup, want error) {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	bad := 0
	for addr := range g.addrs {
		c := f.conns[addr]
		if c == nil {
			f.t.Fatalf("%s: no server connection for %s client %s", step, g.name, addr)
		}
		if c.Err() != want {
			bad++
		}
	}
	if bad > 0 {
		f.t.Fatalf("%s: %d of %d %s connections have Err() != %v", step, bad, len(g.addrs), g.name, want)
	}
}

func TestHTTPKeepAlive(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2,000 connections")
	}
	needFiles(t, 2*(httpIdle+httpBusy)+256)
	clk, w := virtualWheel(t)
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := idleconn.NewListener(nl, w, httpTimeout)
	if err != nil {
		t.Fatal(err)
	}
	f := &httpFixture{
		t:     t,
		url:   "http://" + nl.Addr().String() + "/",
		idled: make(chan struct{}, 2*(httpIdle+httpBusy)),
		conns: map[string]*idleconn.Conn{},
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			f.gate.Load().wait(r.Context())
			io.WriteString(rw, "ok")
		}),
		ConnState: func(c net.Conn, s http.ConnState) {
			switch s {
			case http.StateNew:
				f.mu.Lock()
				f.conns[c.RemoteAddr().String()] = c.(*idleconn.Conn)
				f.mu.Unlock()
			case http.StateIdle:
				f.idled <- struct{}{}
			}
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	idle, busy := newClientGroup("idle", httpIdle), newClientGroup("busy", httpBusy)
	defer func() {
		srv.Close()
		<-served
		idle.transport.CloseIdleConnections()
		busy.transport.CloseIdleConnections()
	}()

	// t=0: every connection is opened and serves one request.
	f.round(idle, httpIdle)
	f.round(busy, httpBusy)
	if idle.dials.Load() != httpIdle || busy.dials.Load() != httpBusy {
		t.Fatalf("dials: idle %d, busy %d; want %d, %d", idle.dials.Load(), busy.dials.Load(), httpIdle, httpBusy)
	}
	f.check("t=0", idle, nil)
	f.check("t=0", busy, nil)

	// t=20s: the busy group works again.
	clk.Advance(20 * time.Second)
	f.check("t=20s", idle, nil)
	f.round(busy, httpBusy)

	// The idle group's deadline is t=30s: open until then, closed at it.
	clk.Advance(10*time.Second - time.Nanosecond)
	f.check("t=30s-1ns", idle, nil)
	f.check("t=30s-1ns", busy, nil)
	clk.Advance(time.Nanosecond)
	f.check("t=30s", idle, idleconn.ErrIdleTimeout)
	f.check("t=30s", busy, nil)
	f.await(idle.peerEOF, httpIdle, "idle clients to read the server's close")

	// The busy group keeps working every 29s and is never closed: its
	// client never needs to dial again.
	for range 3 {
		f.round(busy, httpBusy)
		clk.Advance(httpTimeout - time.Second)
		f.check("busy round", busy, nil)
	}
	if busy.dials.Load() != httpBusy {
		t.Fatalf("busy group dialled %d times, want %d: a busy connection was closed", busy.dials.Load(), httpBusy)
	}

	// Once it stops, it is closed at its own deadline, 30s after its last
	// request.
	clk.Advance(time.Second - time.Nanosecond)
	f.check("busy group, 1ns before its deadline", busy, nil)
	clk.Advance(time.Nanosecond)
	f.check("busy group at its deadline", busy, idleconn.ErrIdleTimeout)
	f.await(busy.peerEOF, httpBusy, "busy clients to read the server's close")

	// A new request from the idle group gets a fresh connection.
	f.gate.Store(newBarrier(1))
	resp, err := idle.client.Get(f.url + "?after")
	if err == nil {
		resp.Body.Close()
	}
	if err != nil || idle.dials.Load() != httpIdle+1 {
		t.Fatalf("request after the idle close: %v, idle group dials %d, want %d", err, idle.dials.Load(), httpIdle+1)
	}
}
