package loop_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/loop"
)

// A loop runs its timers on the goroutine that calls Run, and Run returns
// once no referenced timer is left. The unreferenced ticker fires while the
// loop runs, but does not keep it running.
func Example() {
	l := loop.New()
	frames := 0 // touched only on the loop goroutine
	tick := l.Every(10*time.Millisecond, func() { frames++ })
	tick.Unref()
	l.AfterFunc(35*time.Millisecond, func() { fmt.Println("game over; frames drawn:", frames > 0) })
	if err := l.Run(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("Run returned; ticker still active:", tick.Active())
	// Output:
	// game over; frames drawn: true
	// Run returned; ticker still active: true
}

// Work done on other goroutines reports back with Post; the results are
// handled on the loop goroutine, so the map needs no lock. A Ref keeps the
// loop waiting until the producers are done.
func ExampleLoop_Post() {
	l := loop.New()
	results := map[int]int{} // touched only on the loop goroutine
	l.Ref()
	var wg sync.WaitGroup
	for i := 1; i <= 3; i++ {
		wg.Go(func() {
			sq := i * i // work off the loop
			l.Post(func() { results[i] = sq })
		})
	}
	go func() { wg.Wait(); l.Unref() }()
	l.Run()
	fmt.Println(results)
	// Output: map[1:1 2:4 3:9]
}

// Again restarts a repeating timer from now: an idle timeout refreshed by
// each event, as libuv's documentation suggests. Driven here by a virtual
// clock, moved to each timer in turn with Timeout and RunNoWait.
func ExampleTimer_Again() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(start)
	l := loop.New(loop.WithClock(clk))

	var idle *loop.Timer
	idle = l.NewTimer(func() {
		fmt.Println("idle at", clk.Now().Sub(start))
		idle.Stop()
	})
	idle.Start(time.Second, time.Second)
	for _, at := range []time.Duration{300, 900, 1500} { // events, in ms
		l.AfterFunc(at*time.Millisecond, func() {
			fmt.Println("event at", clk.Now().Sub(start))
			idle.Again()
		})
	}
	for l.RunNoWait() {
		d, _ := l.Timeout()
		clk.Advance(d)
	}
	// Output:
	// event at 300ms
	// event at 900ms
	// event at 1.5s
	// idle at 2.5s
}

// A Node-style echo server: the listener's callback sets up each
// connection, whose state lives in its callbacks' closures on the loop
// goroutine. The client, on another goroutine, sends a line, reads the
// answer and hangs up: the socket hears its end, then closes.
func ExampleLoop_NewListener() {
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	l := loop.New()
	var ln *loop.Listener
	ln, err = l.NewListener(nl, func(s *loop.Socket) {
		lines := 0 // this connection's state: no lock
		s.SetTimeout(time.Minute, func() { s.Close() })
		s.OnData(func(p []byte) {
			lines++
			s.Write(bytes.ToUpper(p))
		})
		s.OnEnd(func() { fmt.Println("server: end after", lines, "line") })
		s.OnClose(func() {
			fmt.Println("server: closed")
			ln.Close() // one connection is all this example serves
		})
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() {
		c, err := net.Dial("tcp", nl.Addr().String())
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Fprintln(c, "hello, loop")
		answer, _ := bufio.NewReader(c).ReadString('\n')
		fmt.Print("client: ", answer)
		c.Close()
	}()
	if err := l.Run(); err != nil { // until the listener and its socket are closed
		fmt.Println(err)
	}
	// Output:
	// client: HELLO, LOOP
	// server: end after 1 line
	// server: closed
}

// SetTimeout is Node's socket.setTimeout: its callback runs once the
// socket has been idle for the timeout, however much traffic came
// before, and decides what to do; here it closes the socket.
func ExampleSocket_SetTimeout() {
	a, b := net.Pipe()
	l := loop.New()
	s, err := l.NewSocket(a)
	if err != nil {
		fmt.Println(err)
		return
	}
	s.SetTimeout(20*time.Millisecond, func() {
		fmt.Println("idle for 20ms: closing")
		s.Close()
	})
	s.OnData(func(p []byte) { fmt.Printf("data %q\n", p) })
	s.OnClose(func() { fmt.Println("closed") })
	go func() {
		for _, m := range []string{"one", "two", "three"} {
			b.Write([]byte(m)) // each refreshes the timeout
		}
		io.Copy(io.Discard, b) // until the socket closes
		b.Close()
	}()
	l.Run()
	// Output:
	// data "one"
	// data "two"
	// data "three"
	// idle for 20ms: closing
	// closed
}

// Poll is libco's co_poll: wait for the socket to be readable, or for a
// timeout, and be told which. On a paused socket the data that made it
// readable waits for Resume.
func ExampleSocket_Poll() {
	a, b := net.Pipe()
	l := loop.New()
	s, err := l.NewSocket(a)
	if err != nil {
		fmt.Println(err)
		return
	}
	s.Pause()
	send := make(chan struct{})
	s.OnData(func(p []byte) { fmt.Printf("data %q\n", p); s.Close() })
	s.Poll(10*time.Millisecond, func(readable bool) {
		fmt.Println("first poll, readable:", readable)
		close(send) // now the peer writes
		s.Poll(time.Minute, func(readable bool) {
			fmt.Println("second poll, readable:", readable)
			s.Resume()
		})
	})
	go func() {
		<-send
		b.Write([]byte("at last"))
		b.Close()
	}()
	l.Run()
	// Output:
	// first poll, readable: false
	// second poll, readable: true
	// data "at last"
}
