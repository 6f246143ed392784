// Command keepalive is an HTTP server whose keep-alive connections are
// closed when idle, by an idleconn Listener on a timewheel, and a client
// that watches it happen: two requests on one kept-alive connection, a
// pause longer than the idle timeout, and a third request that needs a new
// connection. It runs for about two seconds:
//
//	go run ./examples/keepalive
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/idleconn"
	"github.com/timewheel/timewheel/idleconn/idlehttp"
)

func main() {
	w := timewheel.New(timewheel.WithTick(10 * time.Millisecond)) // idle timeouts need no finer tick
	defer w.Close()
	if err := run(os.Stdout, w, time.Sleep); err != nil {
		log.Fatal(err)
	}
}

const idleTimeout = time.Second

// server is an http.Server on an idleconn Listener that numbers its
// connections.
type server struct {
	srv   *http.Server
	mu    sync.Mutex
	conns map[string]*conn // guarded by mu; by remote address
	moved sync.Cond        // signalled when a connection changes state
}

type conn struct {
	id int
	c  *idleconn.Conn
	st http.ConnState // guarded by server.mu
}

func newServer(ln *idleconn.Listener) *server {
	s := &server{conns: map[string]*conn{}}
	s.moved.L = &s.mu
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.hello),
		ReadHeaderTimeout: 10 * time.Second, // idleconn does not guard against slow clients
		ConnState: func(c net.Conn, st http.ConnState) {
			ic := c.(*idleconn.Conn)
			s.mu.Lock()
			defer s.mu.Unlock()
			addr := c.RemoteAddr().String()
			if st == http.StateNew {
				s.conns[addr] = &conn{id: len(s.conns) + 1, c: ic}
			}
			s.conns[addr].st = st
			s.moved.Broadcast()
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	idlehttp.KeepAlive(s.srv) // time only the waits between requests; the hook above still runs
	go s.srv.Serve(ln)
	return s
}

func (s *server) hello(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c := s.conns[r.RemoteAddr]
	s.mu.Unlock()
	fmt.Fprintf(w, "connection #%d", c.id)
}

// waitIdle waits until no connection has a request in progress. The
// client reads a response before the server has finished with its request
// (net/http marks the connection idle after the response is flushed), and
// the idle timeout only starts then.
func (s *server) waitIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.busyLocked() {
		s.moved.Wait()
	}
}

func (s *server) busyLocked() bool {
	for _, c := range s.conns {
		if c.st == http.StateNew || c.st == http.StateActive {
			return true
		}
	}
	return false
}

// report writes the state of every connection, in order.
func (s *server) report(out io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	sort.Slice(conns, func(i, j int) bool { return conns[i].id < conns[j].id })
	for _, c := range conns {
		state := "open"
		if err := c.c.Err(); err != nil {
			state = "closed: " + err.Error()
		}
		fmt.Fprintf(out, "server: connection #%d %s\n", c.id, state)
	}
}

// run serves on loopback with idle timeouts on w, makes the requests with
// sleep between them, and writes what it sees to out.
func run(out io.Writer, w *timewheel.Wheel, sleep func(time.Duration)) error {
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ln, err := idleconn.NewListener(nl, w, idleTimeout)
	if err != nil {
		return err
	}
	s := newServer(ln)
	defer s.srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	url := "http://" + nl.Addr().String()

	get := func(n int) error {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		fmt.Fprintf(out, "client: request %d answered on %s\n", n, body)
		return err
	}
	pause := func(d time.Duration) {
		fmt.Fprintf(out, "client: idle for %v (idle timeout %v)\n", d, idleTimeout)
		s.waitIdle()
		sleep(d)
	}

	if err := get(1); err != nil {
		return err
	}
	pause(idleTimeout / 2)
	if err := get(2); err != nil {
		return err
	}
	pause(idleTimeout * 3 / 2)
	s.report(out)
	if err := get(3); err != nil {
		return err
	}
	s.report(out)
	return nil
}
