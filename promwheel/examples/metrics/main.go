// Command metrics serves the figures of a live timer workload the way Go
// services publish theirs: for Prometheus at /metrics (package promwheel)
// and as JSON at /debug/vars (expvar, through package wheelvar). The
// workload starts request deadlines, stops and resets them, lets some
// fire, and keeps sessions in an expiring map, so that every figure
// moves; docs/operating.md ("what to watch") says what each one means. It runs until
// interrupted:
//
//	cd promwheel && go run ./examples/metrics
//	curl -s localhost:8080/metrics | grep ^timewheel_
//	curl -s localhost:8080/debug/vars | jq .timewheel
package main

import (
	"context"
	"expvar"
	"flag"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/expiry"
	"github.com/timewheel/timewheel/idleconn"
	"github.com/timewheel/timewheel/idleconn/idlehttp"
	"github.com/timewheel/timewheel/promwheel"
	"github.com/timewheel/timewheel/wheelvar"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "the address to serve on")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	a := start(ln)
	log.Printf("serving http://%s/metrics and http://%s/debug/vars", ln.Addr(), ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	<-ctx.Done()
	a.close()
}

// app is the server and its workload.
type app struct {
	w        *timewheel.Wheel
	sessions *expiry.Map[int, string]
	srv      *http.Server
	stop     chan struct{}
	done     sync.WaitGroup
}

// current is the app whose Stats /debug/vars shows, published once.
var (
	current atomic.Pointer[app]
	publish sync.Once
)

// start serves /metrics and /debug/vars on ln, through an idleconn
// Listener, and starts the workload. It publishes the wheel's Stats in
// expvar as "timewheel" and the sessions' as "sessions".
func start(ln net.Listener) *app {
	a := &app{w: timewheel.New(), stop: make(chan struct{})}
	a.sessions = expiry.New[int, string](expiry.WithWheel(a.w), expiry.WithGranularity(10*time.Millisecond))
	l, err := idleconn.NewListener(ln, a.w, 30*time.Second)
	if err != nil {
		panic(err) // the timeout is positive
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(
		promwheel.NewWheelCollector("main", a.w),
		promwheel.NewExpiryCollector("sessions", a.sessions),
		promwheel.NewListenerCollector("http", l),
		collectors.NewGoCollector(),
	)
	// A program publishes once, with wheelvar.Publish("timewheel", w);
	// this example can be started again by its test, and expvar names
	// cannot be published twice, so it publishes the latest app's.
	current.Store(a)
	publish.Do(func() {
		expvar.Publish("timewheel", expvar.Func(func() any { return wheelvar.Func(current.Load().w)() }))
		expvar.Publish("sessions", expvar.Func(func() any { return current.Load().sessions.Stats() }))
	})

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/debug/vars", expvar.Handler())
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	idlehttp.KeepAlive(a.srv) // the idle timeout times only the waits between requests
	a.done.Add(2)
	go func() {
		defer a.done.Done()
		a.srv.Serve(l)
	}()
	go func() {
		defer a.done.Done()
		a.work()
	}()
	return a
}

// close stops the workload and the server, and waits for both.
func (a *app) close() {
	close(a.stop)
	a.srv.Close()
	a.done.Wait()
	a.sessions.Close()
	a.w.Close()
}

// work is the workload, a round every 2 ms on a ticker of the wheel
// itself: 10 request deadlines started (1 to 200 ms; those not stopped or
// reset in time fire), one stopped and one reset later, as a server
// finishing and extending requests does; and a session set and one read.
func (a *app) work() {
	tk := a.w.NewTicker(2 * time.Millisecond)
	defer tk.Stop()
	var deadlines [500]*timewheel.Timer
	next := 0
	for {
		select {
		case <-a.stop:
			for _, t := range deadlines {
				if t != nil {
					t.Stop()
				}
			}
			return
		case <-tk.C:
		}
		for range 10 {
			if t := deadlines[next]; t != nil {
				t.Stop()
			}
			deadlines[next] = a.w.AfterFunc(time.Duration(1+rand.IntN(200))*time.Millisecond, func() {})
			next = (next + 1) % len(deadlines)
		}
		if t := deadlines[rand.IntN(len(deadlines))]; t != nil {
			t.Stop()
		}
		if t := deadlines[rand.IntN(len(deadlines))]; t != nil {
			t.Reset(time.Duration(100+rand.IntN(200)) * time.Millisecond)
		}
		a.sessions.Set(rand.IntN(1000), "session", time.Duration(50+rand.IntN(250))*time.Millisecond)
		a.sessions.Get(rand.IntN(1000))
	}
}
