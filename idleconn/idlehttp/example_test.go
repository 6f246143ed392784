package idlehttp_test

import (
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

// A handler that works in silence for five minutes, behind a one-minute
// idle timeout, still answers: with KeepAlive, only the waits between
// requests are timed. The wheel runs on a virtual clock here, moved while
// the handler works.
func ExampleKeepAlive() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := idleconn.NewListener(nl, w, time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	working := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		working <- struct{}{} // at work, silent...
		<-working             // ...until five minutes have passed
		io.WriteString(rw, "done after five silent minutes\n")
	})}
	idlehttp.KeepAlive(srv)
	go srv.Serve(ln)
	defer srv.Close()
	go func() {
		<-working
		clk.Advance(5 * time.Minute)
		working <- struct{}{}
	}()

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("http://" + nl.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(string(body))
	// Output: done after five silent minutes
}
