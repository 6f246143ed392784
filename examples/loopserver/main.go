// Command loopserver is a line-protocol server in the style of Node.js,
// on a loop: every connection's state, and the server's, lives on the
// loop goroutine and needs no mutex; each socket has an idle timeout in
// the loop's own timing wheel, refreshed by its traffic; and a client
// load in the same process shows both at work. Chatting clients send a
// line every 400 ms for 2 s and never time out; quiet ones say hello and
// are closed after one idle second. It runs for about two seconds:
//
//	go run ./examples/loopserver
//
// The protocol: "HELLO name" is answered "hi name", "QUIT" is answered
// "bye" and ends the connection, any other line is echoed with its
// number. A connection idle for a second is told "idle timeout, bye" and
// ended.
package main

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/loop"
)

const (
	idleTimeout = time.Second
	chatting    = 100 // clients that send a line every round
	quiet       = 20  // clients that say hello and go quiet
	rounds      = 5
	roundGap    = 400 * time.Millisecond
)

func main() {
	if err := run(os.Stdout, clock.Real(), time.Sleep); err != nil {
		log.Fatal(err)
	}
}

// server is the server's state. It is touched only on the loop
// goroutine, by the loop's callbacks: no lock.
type server struct {
	conns, lines, timeouts, closed int
}

// accept sets up a new connection, Node style: an idle timeout, a
// handler for its data, one for its close.
func (srv *server) accept(s *loop.Socket) {
	srv.conns++
	var line []byte // this connection's partial line
	s.SetTimeout(idleTimeout, func() {
		srv.timeouts++
		s.Write([]byte("idle timeout, bye\n"))
		s.End()
	})
	s.OnData(func(p []byte) {
		for _, b := range p {
			if b != '\n' {
				line = append(line, b)
				continue
			}
			srv.handle(s, string(line))
			line = line[:0]
		}
	})
	s.OnClose(func() { srv.closed++ })
}

// handle answers one line.
func (srv *server) handle(s *loop.Socket, line string) {
	srv.lines++
	switch {
	case strings.HasPrefix(line, "HELLO "):
		fmt.Fprintf(socketWriter{s}, "hi %s\n", strings.TrimPrefix(line, "HELLO "))
	case line == "QUIT":
		s.Write([]byte("bye\n"))
		s.End()
	default:
		fmt.Fprintf(socketWriter{s}, "%d: %s\n", srv.lines, line)
	}
}

// socketWriter lets fmt write to a socket. (Write's bool, false past the
// socket's 64 KiB bound, does not matter to a reply of a few bytes.)
type socketWriter struct{ s *loop.Socket }

func (w socketWriter) Write(p []byte) (int, error) {
	w.s.Write(p)
	return len(p), nil
}

// run serves on loopback on a loop on clk, runs the client load, sleeping
// between rounds with sleep, and writes what it sees to out.
func run(out io.Writer, clk clock.Clock, sleep func(time.Duration)) error {
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	l := loop.New(loop.WithClock(clk))
	srv := &server{}
	ln, err := l.NewListener(nl, srv.accept)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- l.Run() }()

	fmt.Fprintf(out, "%d clients chat a line every %v for %v, %d say hello and go quiet; idle timeout %v\n",
		chatting, roundGap, rounds*roundGap, quiet, idleTimeout)
	chatters, err := dial(nl.Addr().String(), chatting, "chat")
	if err != nil {
		return err
	}
	sleepers, err := dial(nl.Addr().String(), quiet, "quiet")
	if err != nil {
		return err
	}
	// The quiet ones wait for the server's word, whenever it comes.
	told := make([]string, quiet)
	var wg sync.WaitGroup
	for i, c := range sleepers {
		wg.Go(func() { told[i] = c.rest() })
	}
	for r := 1; r <= rounds; r++ {
		sleep(roundGap)
		if err := each(chatters, func(c *client) error { return c.ask(fmt.Sprintf("round %d", r)) }); err != nil {
			return err
		}
	}
	wg.Wait()
	fmt.Fprintf(out, "after %v: quiet clients were told %s\n", rounds*roundGap, tally(told))
	bye := make([]string, chatting)
	each(chatters, func(c *client) error { bye[c.n] = c.quit(); return nil })
	fmt.Fprintf(out, "chatting clients sent QUIT and were told %s\n", tally(bye))

	l.Post(func() { ln.Close() }) // Run returns once every socket has closed
	if err := <-served; err != nil {
		return err
	}
	fmt.Fprintf(out, "server: %d connections, %d lines, %d idle timeouts, %d closed\n",
		srv.conns, srv.lines, srv.timeouts, srv.closed)
	return nil
}

// client is one client connection, run by the load.
type client struct {
	n    int
	c    net.Conn
	r    *bufio.Reader
	last string
}

// dial connects n clients, each saying hello and reading the answer.
func dial(addr string, n int, name string) ([]*client, error) {
	cs := make([]*client, n)
	for i := range cs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		cs[i] = &client{n: i, c: c, r: bufio.NewReader(c)}
		if err := cs[i].ask(fmt.Sprintf("HELLO %s-%d", name, i)); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// ask sends a line and reads the answer.
func (c *client) ask(line string) error {
	if _, err := fmt.Fprintln(c.c, line); err != nil {
		return err
	}
	var err error
	c.last, err = c.r.ReadString('\n')
	return err
}

// rest reads what the server says until it ends the connection, closes
// it and returns what was said.
func (c *client) rest() string {
	b, err := io.ReadAll(c.r)
	c.c.Close()
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(b)) + ", then the end"
}

// quit says QUIT and returns what the server says until the end.
func (c *client) quit() string {
	if _, err := fmt.Fprintln(c.c, "QUIT"); err != nil {
		return err.Error()
	}
	return c.rest()
}

// each runs f for every client, from as many goroutines.
func each(cs []*client, f func(*client) error) error {
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() { errs[i] = f(c) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// tally counts the distinct answers: `"bye", then the end` ×100.
func tally(answers []string) string {
	count := map[string]int{}
	var order []string
	for _, a := range answers {
		if count[a] == 0 {
			order = append(order, a)
		}
		count[a]++
	}
	var parts []string
	for _, a := range order {
		parts = append(parts, fmt.Sprintf("%q ×%d", a, count[a]))
	}
	return strings.Join(parts, ", ")
}
