package loop_test

import (
	"errors"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel/loop"
)

// pollLog returns a Poll callback that logs which it was.
func pollLog(tr *trace) func(bool) {
	return func(readable bool) { tr.add("poll readable=%v", readable) }
}

// TestSocketPoll: libco's co_poll on a socket: one callback, with
// whether data (or the end) or the timeout came first, on the loop.
func TestSocketPoll(t *testing.T) {
	closeAt := func(p net.Conn, d time.Duration) { time.Sleep(d); p.Close() }
	for _, c := range []scene{
		{name: "readable first: f(true), then the data as usual",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) { s.Poll(time.Second, pollLog(tr)) },
			peer:  func(p net.Conn) { write(p, 400*time.Millisecond, "a"); closeAt(p, time.Second) },
			want:  []string{"400ms poll readable=true", `400ms s data "a"`, "1.4s s end", "1.4s s close, Err " + closedErr}},
		{name: "timeout first: f(false) at the timeout",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) { s.Poll(time.Second, pollLog(tr)) },
			peer:  func(p net.Conn) { closeAt(p, 2*time.Second) },
			want:  []string{"1s poll readable=false", "2s s end", "2s s close, Err " + closedErr}},
		{name: "paused: the data is held after f(true), until Resume",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				s.Pause()
				s.Poll(time.Second, func(readable bool) {
					tr.add("poll readable=%v", readable)
					l.AfterFunc(time.Second, s.Resume)
				})
			},
			peer: func(p net.Conn) { write(p, 300*time.Millisecond, "a"); closeAt(p, 2*time.Second) },
			want: []string{"300ms poll readable=true", `1.3s s data "a"`, "2.3s s end", "2.3s s close, Err " + closedErr}},
		{name: "a held chunk is readable at once",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				s.Pause()
				l.AfterFunc(500*time.Millisecond, func() {
					s.Poll(time.Second, func(readable bool) { tr.add("poll readable=%v", readable); s.Resume() })
				})
			},
			peer: func(p net.Conn) { write(p, 0, "a"); closeAt(p, time.Second) },
			want: []string{"500ms poll readable=true", `500ms s data "a"`, "1s s end", "1s s close, Err " + closedErr}},
		{name: "zero on a held chunk: readable",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				s.Pause()
				l.AfterFunc(500*time.Millisecond, func() {
					s.Poll(0, func(readable bool) { tr.add("poll readable=%v", readable); s.Resume() })
				})
			},
			peer: func(p net.Conn) { write(p, 0, "a"); closeAt(p, time.Second) },
			want: []string{"500ms poll readable=true", `500ms s data "a"`, "1s s end", "1s s close, Err " + closedErr}},
		{name: "the peer's end is readable",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				s.Pause()
				l.AfterFunc(500*time.Millisecond, func() {
					s.Poll(time.Second, func(readable bool) { tr.add("poll readable=%v", readable); s.Resume() })
				})
			},
			peer: func(p net.Conn) { closeAt(p, 200*time.Millisecond) },
			want: []string{"500ms poll readable=true", "500ms s end", "500ms s close, Err " + closedErr}},
		{name: "zero: is it readable now",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) { s.Poll(0, pollLog(tr)) },
			peer:  func(p net.Conn) { closeAt(p, time.Second) },
			want:  []string{"0s poll readable=false", "1s s end", "1s s close, Err " + closedErr}},
		{name: "Close cancels it: f never runs",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				s.Poll(time.Second, pollLog(tr))
				l.AfterFunc(300*time.Millisecond, func() { s.Close() })
				l.AfterFunc(2*time.Second, func() { tr.add("2s later") })
			},
			want: []string{"300ms s close, Err " + closedErr, "2s 2s later"}},
		{name: "a new Poll from f",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				n := 0
				var again func(bool)
				again = func(readable bool) {
					tr.add("poll readable=%v", readable)
					if n++; n < 3 {
						s.Poll(time.Second, again)
					}
				}
				s.Poll(time.Second, again)
			},
			peer: func(p net.Conn) { write(p, 1500*time.Millisecond, "a"); closeAt(p, 2*time.Second) },
			want: []string{"1s poll readable=false", "1.5s poll readable=true", `1.5s s data "a"`, "2.5s poll readable=false",
				"3.5s s end", "3.5s s close, Err " + closedErr}},
	} {
		runScene(t, c)
	}
}

// TestSocketAfterStop: once Stop has closed a socket's connection, Poll
// refuses the wait with ErrStopped, and Err says the socket is closed
// (ErrStopped and net.ErrClosed), whether Stop came from another
// goroutine before Run or from a callback. Poll used to return nil with
// f never to run, and Err nil, as if the socket were open.
func TestSocketAfterStop(t *testing.T) {
	check := func(t *testing.T, s *loop.Socket, ran *bool) {
		t.Helper()
		if err := s.Err(); !errors.Is(err, loop.ErrStopped) || !errors.Is(err, net.ErrClosed) {
			t.Errorf("Err after Stop = %v, want ErrStopped and net.ErrClosed", err)
		}
		if err := s.Poll(time.Second, func(bool) { *ran = true }); !errors.Is(err, loop.ErrStopped) {
			t.Errorf("Poll after Stop = %v, want ErrStopped", err)
		}
	}
	t.Run("stopped before Run", func(t *testing.T) {
		l := loop.New()
		c, peer := net.Pipe()
		defer peer.Close()
		s, err := l.NewSocket(c)
		if err != nil {
			t.Fatal(err)
		}
		l.Stop()
		ran := false
		check(t, s, &ran)
		if l.RunNoWait() {
			t.Fatal("RunNoWait after Stop reports the loop alive")
		}
		if ran {
			t.Error("Poll's f ran after Stop")
		}
	})
	t.Run("stopped from a callback", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := loop.New()
			c, peer := net.Pipe()
			defer peer.Close()
			s, err := l.NewSocket(c)
			if err != nil {
				t.Fatal(err)
			}
			ran := false
			l.AfterFunc(time.Second, func() { l.Stop(); check(t, s, &ran) })
			if err := l.Run(); err != loop.ErrStopped {
				t.Fatalf("Run = %v, want ErrStopped", err)
			}
			if ran {
				t.Error("Poll's f ran after Stop")
			}
		})
	})
}
