package loop

import (
	"fmt"
	"net"
	"time"
)

// Poll waits for the socket to become readable or for d to pass, as
// libco's co_poll does for a coroutine. It then calls f once, on the loop:
// f(true) if a chunk, the peer's end or an error arrived first, f(false)
// if d passed first. A socket that holds a chunk already (paused), or
// whose peer has ended, is readable at once: f(true) runs on the next
// pass. A d of zero or less asks whether the socket is readable now: f
// runs on the next pass.
//
// When f(true) returns, the chunk, end or error that made the socket
// readable is delivered as usual (OnData, OnEnd, OnError). If the socket
// is paused, it stays held until Resume instead. Loop code can wait
// for input with a timeout and decide, in f, whether to take it. A
// Poll does not count as activity, and is independent of the idle
// timeout. If the socket closes before either happens, f does not run
// (OnClose does). The Poll's timer does not keep the loop alive: the
// socket does, unless it is unreferenced.
//
// Poll returns an error matching net.ErrClosed on a closed socket, and
// ErrStopped on a stopped loop; f then never runs. It panics if f is nil,
// if a Poll of the socket is pending already (one waiter a socket, as one
// coroutine a descriptor in libco), and as Write does. The complexity is
// O(1).
func (s *Socket) Poll(d time.Duration, f func(readable bool)) error {
	if !s.usable() {
		s.misuse("Poll")
	}
	if f == nil {
		panic("loop: Socket.Poll called with nil func")
	}
	if s.closed {
		return fmt.Errorf("loop: Socket.Poll: %w", net.ErrClosed)
	}
	if s.l.stopped.Load() {
		return fmt.Errorf("loop: Socket.Poll: %w", errShut)
	}
	if s.poll != nil {
		panic("loop: Socket.Poll called while a Poll of the socket is pending")
	}
	s.poll = f
	if s.pollTimer == nil {
		s.pollTimer = s.l.newTimer("Socket.Poll", s.pollExpired)
		s.pollTimer.unref = true
	}
	s.pollTimer.Start(d, 0)
	if s.held || s.rdone {
		s.l.Post(s.pollReady)
	}
	return nil
}

// pollReady ends a Poll made on a socket that was readable then. If it
// is not readable any more (a Poll made by the f of another, while the
// chunk that ended that one was being delivered), it waits on.
func (s *Socket) pollReady() {
	if s.poll != nil && !s.closed && (s.held || s.rdone) {
		s.pollEnd()
	}
}

// pollExpired is the Poll timer's callback: the socket may have become
// readable in the same pass, or have been so when the Poll was made with
// no time to wait.
func (s *Socket) pollExpired() {
	if s.poll != nil {
		s.pollEnd()
	}
}

// pollEnd ends the pending Poll with whether the socket is readable: a
// chunk held (f(true), then the chunk as usual), the peer's end, or
// neither.
func (s *Socket) pollEnd() {
	if s.held {
		s.flow()
		return
	}
	s.pollDone(s.rdone)
}

// pollDone ends the pending Poll and calls its f.
func (s *Socket) pollDone(readable bool) {
	f := s.poll
	s.poll = nil
	if s.pollTimer != nil {
		s.pollTimer.Stop()
	}
	f(readable)
}
