package idleconn_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/idleconn"
	"github.com/timewheel/timewheel/idleconn/idlehttp"
)

// A connection is closed once it has been idle for its timeout; activity
// postpones the deadline. The wheel runs on a virtual clock here, so the
// example is exact.
func ExampleNewConn() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()

	server, client := net.Pipe()
	defer client.Close()
	c, err := idleconn.NewConn(server, w, 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}

	clk.Advance(20 * time.Second)
	go client.Write([]byte("ping")) // activity at 0:20
	io.ReadFull(c, make([]byte, 4))

	clk.Advance(29 * time.Second)
	fmt.Println("at 0:49:", c.Err())
	clk.Advance(1 * time.Second)
	fmt.Println("at 0:50:", c.Err())

	_, err = c.Write([]byte("pong"))
	fmt.Println(errors.Is(err, net.ErrClosed), errors.Is(err, idleconn.ErrIdleTimeout))
	// Output:
	// at 0:49: <nil>
	// at 0:50: idleconn: idle timeout
	// true true
}

func ExampleNewConn_badTimeout() {
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	_, err := idleconn.NewConn(server, nil, -time.Second)
	fmt.Println(err)
	// Output: idleconn: non-positive idle timeout -1s
}

// An http.Server on a Listener closes keep-alive connections idle for two
// minutes, on the default wheel. idlehttp.KeepAlive makes that a pure
// keep-alive timeout: a slow handler's connection is not closed under it.
func ExampleNewListener() {
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := idleconn.NewListener(nl, nil, 2*time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "hello\n")
		}),
		ReadHeaderTimeout: 10 * time.Second, // idleness is not slowness: keep this
	}
	idlehttp.KeepAlive(srv) // time only the waits between requests
	go srv.Serve(ln)
	defer srv.Close()

	resp, err := http.Get("http://" + nl.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	fmt.Print(string(body))
	// Output: hello
}
