package loop

// highWater is the count of bytes queued or being written at and above
// which Write returns false, as Node's writableHighWaterMark.
const highWater = 64 << 10

// Write queues a copy of p to be written to the socket's connection and
// returns at once, without waiting for the network; the writes of a
// socket reach the connection in the order they were made. It returns
// true while fewer than 64 KiB are queued or being written, and false
// from that bound on, as Node's socket.write does: p is queued all the
// same, and the OnDrain callback runs once everything queued has been
// written. Queueing counts as activity for the idle timeout, and so does
// each completed write to the connection. On a socket that is closed or
// ended, or on a stopped loop, Write queues nothing and returns false.
//
// Write panics on a zero or nil Socket, on a copy of a Socket, and if
// called from another goroutine while the loop waits for work. The
// complexity is O(len(p)), amortised.
func (s *Socket) Write(p []byte) bool {
	if !s.usable() {
		s.misuse("Write")
	}
	if s.closed || s.ending || s.l.stopped.Load() {
		return false
	}
	if len(p) > 0 {
		s.wq = append(s.wq, p...)
		s.touch()
		if !s.writing {
			s.flush()
		}
	}
	if len(s.wq)+len(s.wbuf) < highWater {
		return true
	}
	s.needDrain = true
	return false
}

// OnDrain sets the callback that runs when everything queued has been
// written, after a Write returned false. A nil f removes it. It panics as
// Write does. The complexity is O(1).
func (s *Socket) OnDrain(f func()) {
	if !s.usable() {
		s.misuse("OnDrain")
	}
	s.onDrain = f
}

// End ends the socket's side, as Node's socket.end: what is queued is
// written, then the connection's write side is shut down (CloseWrite, a
// FIN over TCP) and the socket reads on until the peer ends, when it
// closes (OnEnd, then OnClose). A connection without CloseWrite is closed
// once the queue is written. Writes after End return false. End on a
// socket closed or ended already does nothing. It panics as Write does.
// The complexity is O(1).
func (s *Socket) End() {
	if !s.usable() {
		s.misuse("End")
	}
	if !s.closed {
		s.endWrite()
	}
}

// endWrite ends the write side once the queue is written, and closes the
// socket if the peer has ended too.
func (s *Socket) endWrite() {
	if !s.ending {
		s.ending = true
		if !s.writing {
			s.shutWrite()
		}
		return
	}
	s.closeIfDone()
}

// shutWrite shuts the write side down, or closes a connection that
// cannot half-close.
func (s *Socket) shutWrite() {
	cw, ok := s.c.(closeWriter)
	if !ok {
		s.closeNow(nil)
		return
	}
	if err := cw.CloseWrite(); err != nil {
		s.fail(err)
		return
	}
	s.wdone = true
	s.closeIfDone()
}

// closeIfDone closes the socket once both sides have ended.
func (s *Socket) closeIfDone() {
	if s.wdone && s.rdone && !s.closed {
		s.closeNow(nil)
	}
}

// flush hands the queue to a new writing goroutine, keeping the buffer
// it last wrote as the next queue.
func (s *Socket) flush() {
	s.wbuf, s.wq = s.wq, s.wbuf[:0]
	s.writing = true
	s.l.io.Go(s.write)
}

// write is the writing goroutine: one batch, then it tells the loop.
func (s *Socket) write() {
	_, s.werr = s.c.Write(s.wbuf)
	s.l.Post(s.wroteFn) // ErrStopped: the connection is closed and nothing runs again
}

// wrote takes the writing goroutine's result, on the loop: the next
// batch, or the end of the write side, or OnDrain.
func (s *Socket) wrote() {
	s.writing = false
	if s.closed {
		s.release()
		return
	}
	if s.werr != nil {
		s.fail(s.werr)
		return
	}
	s.wbuf = s.wbuf[:0]
	if cap(s.wbuf) > highWater {
		s.wbuf = nil // a burst is over: do not keep its buffer
	}
	s.touch()
	if len(s.wq) > 0 {
		s.flush()
		return
	}
	if s.ending {
		s.shutWrite()
		return
	}
	if s.needDrain {
		s.needDrain = false
		if s.onDrain != nil && !s.l.stopped.Load() {
			s.onDrain()
		}
	}
}
