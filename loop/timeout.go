package loop

import (
	"fmt"
	"time"

	"github.com/timewheel/timewheel/internal/ticks"
)

// SetTimeout sets the socket's idle timeout, as Node's socket.setTimeout:
// f runs on the loop once the socket has gone d without activity (a chunk
// delivered, a Write, a write completed), and runs again only after new
// activity and another d of silence. f decides what to do: Close the
// socket, End it, write a ping. A d of zero disables the timeout (f is
// then ignored). The timeout starts now, and a new SetTimeout replaces
// the previous one.
//
// The timeout never runs early: it runs at the first tick of the loop at
// or after the last activity plus d. A refresh costs no lock, no
// allocation and no timer operation: activity records the time (one read
// of the loop's clock). The socket's one timer in the loop's wheel is set
// for d ahead. When it fires it compares the clock with the last activity,
// and re-arms itself for the time that remains if there was any, as
// package idleconn does. The downside of this choice is that a busy
// socket costs one timer firing per d. The timer does not keep the loop
// alive: the socket does, unless it is unreferenced.
//
// SetTimeout panics if d is negative, if d is positive and f is nil, and
// as Write does. On a closed socket it does nothing. The complexity is
// O(1).
func (s *Socket) SetTimeout(d time.Duration, f func()) {
	if !s.usable() {
		s.misuse("SetTimeout")
	}
	if d < 0 {
		panic(fmt.Sprintf("loop: Socket.SetTimeout called with negative timeout %v", d))
	}
	if d > 0 && f == nil {
		panic(fmt.Sprintf("loop: Socket.SetTimeout called with nil func and timeout %v", d))
	}
	if s.closed {
		return
	}
	if d == 0 {
		s.idle, s.onTimeout = 0, nil
		if s.idleTimer != nil {
			s.idleTimer.Stop()
		}
		return
	}
	s.idle, s.onTimeout = d, f
	s.last = s.l.since()
	s.idleFired = false
	if s.idleTimer == nil {
		s.idleTimer = s.l.newTimer("Socket.SetTimeout", s.idleCheck)
		s.idleTimer.unref = true
	}
	s.idleTimer.Start(d, 0)
}

// touch records activity, for the idle timeout.
func (s *Socket) touch() {
	if s.idle == 0 {
		return
	}
	s.last = s.l.since()
	if s.idleFired { // the timeout ran and its timer is stopped: re-arm it
		s.idleFired = false
		s.idleTimer.Start(s.idle, 0)
	}
}

// idleCheck is the idle timer's callback: the timeout if the socket has
// been idle for the whole of it, a re-arm for the time left otherwise.
func (s *Socket) idleCheck() {
	now := s.l.since()
	if due := ticks.Add(s.last, int64(s.idle)); due > now {
		s.idleTimer.Start(time.Duration(due-now), 0)
		return
	}
	s.idleFired = true
	s.onTimeout()
}
