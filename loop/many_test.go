package loop_test

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/loop"
)

// manyIdle is the idle timeout of TestManySockets, and manyStep the
// virtual time between two rounds of chat.
const (
	manyIdle  = 10 * time.Second
	manyStep  = 2 * time.Second
	manySteps = 10 // twenty virtual seconds: two idle timeouts
)

// conn is what the server keeps of one of TestManySockets' connections,
// on the loop goroutine only.
type conn struct {
	id       int // -1 until the client has said it
	line     []byte
	timedOut time.Duration // since start, when the timeout ran; 0 if it did not
	closed   bool
}

// manyServer is TestManySockets' server, a line-echo server on the loop:
// a client's first line is its number; every other line is echoed. A
// connection idle for manyIdle is closed. Every field is touched on the
// loop goroutine only, and every callback checks it runs there.
type manyServer struct {
	t        *testing.T
	clk      *clock.Virtual
	g        int64 // the loop goroutine, set before Run
	conns    []*conn
	known    int    // connections that said their number
	timeouts int    // timeouts that ran
	closes   int    // OnClose callbacks that ran
	notify   func() // called after each change of the counts
}

func (m *manyServer) onLoop(what string) {
	if g := goid(); g != m.g {
		m.t.Errorf("%s ran on goroutine %d, not the loop's %d", what, g, m.g)
	}
}

func (m *manyServer) accept(s *loop.Socket) {
	m.onLoop("the Listener's callback")
	c := &conn{id: -1}
	s.SetTimeout(manyIdle, func() {
		m.onLoop("a timeout")
		c.timedOut = m.clk.Since(start)
		m.timeouts++
		s.Close()
		m.notify()
	})
	s.OnData(func(p []byte) {
		m.onLoop("OnData")
		for _, b := range p {
			if b != '\n' {
				c.line = append(c.line, b)
				continue
			}
			if c.id < 0 {
				id, err := strconv.Atoi(string(c.line))
				if err != nil {
					m.t.Errorf("first line %q: %v", c.line, err)
				}
				c.id = id
				m.conns[id] = c
				m.known++
				m.notify()
			} else {
				s.Write(append(c.line, '\n'))
			}
			c.line = c.line[:0]
		}
	})
	s.OnError(func(err error) { m.onLoop("OnError"); m.t.Errorf("connection %d: %v", c.id, err) })
	s.OnClose(func() {
		m.onLoop("OnClose")
		c.closed = true
		m.closes++
		m.notify()
	})
}

// TestManySockets: as many loopback connections as the limit on open
// files allows, both ends in this process (about 9,000 with the hard
// limit of 20,000 of the machines here; a third of that under the race
// detector), on one loop whose clock is virtual; one in ten chats, a line every two virtual seconds, the others
// say their number and go quiet. Every quiet connection times out exactly
// at its deadline, ten virtual seconds after its number arrived (none
// before: the count is checked after every two seconds), no chatting one
// does in twenty seconds, every callback runs on the loop goroutine, and
// after Stop no goroutine of the loop's sockets is left and every file
// opened is closed.
func TestManySockets(t *testing.T) {
	limit := fileLimit(t)
	n := (int(min(limit, 1<<20)) - 2000) / 2 // both ends, and room for the rest of the process
	if n < 100 {
		t.Skipf("the limit on open files, %d, leaves room for %d connections", limit, n)
	}
	if raceEnabled {
		// 9,000 connections take 4 to 11 s under the race detector on
		// this 2-core machine shared with other work (2.5 s without):
		// a third keeps the test within a few seconds of CI.
		n /= 3
	}
	t.Logf("limit on open files %d: %d connections (race detector: %v)", limit, n, raceEnabled)
	files := openFiles()

	clk := clock.NewVirtual(start)
	l := loop.New(loop.WithClock(clk))
	m := &manyServer{t: t, clk: clk, conns: make([]*conn, n)}
	changed := make(chan struct{}, 1)
	m.notify = func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ls, err := l.NewListener(nl, m.accept)
	if err != nil {
		t.Fatal(err)
	}
	ls.OnError(func(err error) { t.Errorf("listener: %v", err) })
	done := make(chan error, 1)
	go func() {
		m.g = goid()
		done <- l.Run()
	}()
	// counts reads the server's counts on the loop goroutine.
	counts := func() (known, timeouts, closes int) {
		ch := make(chan [3]int)
		l.Post(func() { ch <- [3]int{m.known, m.timeouts, m.closes} })
		c := <-ch
		return c[0], c[1], c[2]
	}
	// await waits until ok holds of the counts.
	await := func(what string, ok func(known, timeouts, closes int) bool) {
		t.Helper()
		for {
			if ok(counts()) {
				return
			}
			select {
			case <-changed:
			case <-time.After(time.Minute): // a hang, not a measurement
				k, to, c := counts()
				t.Fatalf("waiting for %s: %d connections known, %d timeouts, %d closes", what, k, to, c)
			}
		}
	}

	clients := dialAll(t, nl.Addr().String(), n)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	await("every connection's number", func(k, _, _ int) bool { return k == n })

	chatty := func(i int) bool { return i%10 == 0 }
	for step := 1; step <= manySteps; step++ {
		chat(t, clients, chatty, step)
		clk.Advance(manyStep)
		settle(l)
		_, timeouts, _ := counts()
		quiet := n - (n+9)/10
		switch now := time.Duration(step) * manyStep; {
		case now < manyIdle && timeouts != 0:
			t.Fatalf("at %v, %d timeouts ran, before the deadline %v", now, timeouts, manyIdle)
		case now >= manyIdle && timeouts != quiet:
			t.Fatalf("at %v, %d timeouts ran, want %d: one per quiet connection", now, timeouts, quiet)
		}
		if time.Duration(step)*manyStep == manyIdle {
			await("the quiet connections' close", func(_, _, c int) bool { return c == quiet })
		}
	}
	l.Post(func() {
		for i, c := range m.conns {
			switch {
			case chatty(i) && (c.timedOut != 0 || c.closed):
				t.Errorf("chatting connection %d timed out at %v, closed %v", i, c.timedOut, c.closed)
			case !chatty(i) && c.timedOut != manyIdle:
				t.Errorf("quiet connection %d timed out at %v, want exactly %v", i, c.timedOut, manyIdle)
			}
		}
		l.Stop()
	})
	if err := <-done; err != loop.ErrStopped {
		t.Fatalf("Run = %v, want ErrStopped", err)
	}
	if left := ioGoroutines(); len(left) != 0 {
		t.Fatalf("%d goroutines of sockets and listeners left after Stop, the first:\n%s", len(left), left[0])
	}
	for i, c := range clients {
		if chatty(i) { // Stop closed the server's end
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Fatalf("chatting connection %d: the server's end is open after Stop", i)
			}
		}
		c.Close()
	}
	clients = nil
	if now := openFiles(); files >= 0 && now > files {
		t.Errorf("%d files open after the test, %d before", now, files)
	}
}

// dialAll opens n connections to addr, each saying its number, from a few
// goroutines at once.
func dialAll(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	clients := make([]net.Conn, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	const dialers = 16
	for d := range dialers {
		wg.Go(func() {
			for i := d; i < n; i += dialers {
				c, err := net.Dial("tcp", addr)
				if err == nil {
					_, err = fmt.Fprintf(c, "%d\n", i)
				}
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
				clients[i] = c
			}
		})
	}
	wg.Wait()
	if failed != nil {
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
		t.Fatal(failed)
	}
	return clients
}

// chat has each chatting client send a line, then read its echo, from a
// few goroutines at once.
func chat(t *testing.T, clients []net.Conn, chatty func(int) bool, step int) {
	t.Helper()
	var wg sync.WaitGroup
	const chatters = 8
	line := fmt.Sprintf("step %d\n", step)
	for w := range chatters {
		wg.Go(func() {
			var mine []int
			for i := w; i < len(clients); i += chatters {
				if chatty(i) {
					mine = append(mine, i)
				}
			}
			for _, i := range mine {
				if _, err := io.WriteString(clients[i], line); err != nil {
					t.Errorf("client %d: %v", i, err)
					return
				}
			}
			buf := make([]byte, len(line))
			for _, i := range mine {
				if _, err := io.ReadFull(clients[i], buf); err != nil || string(buf) != line {
					t.Errorf("client %d: echo %q, %v; want %q", i, buf, err, line)
					return
				}
			}
		})
	}
	wg.Wait()
}

// settle returns once the loop has run a whole pass begun after the
// call: whatever was due when settle was called has run.
func settle(l *loop.Loop) {
	ch := make(chan struct{})
	l.Post(func() { l.Post(func() { close(ch) }) })
	<-ch
}
