// Package loop is a single-goroutine event loop in the style of libuv's
// uv_run: timers, sockets and posted functions, all run on the one
// goroutine that runs the loop.
//
// Everything a Loop runs — timer callbacks, repeating timers, the callbacks
// of its sockets and listeners, functions given to [Loop.Post] — runs on
// the goroutine that called [Loop.Run] (or [Loop.RunOnce],
// [Loop.RunNoWait]), one at a time, never concurrently with each other.
// Code that lives on the loop needs no locks for the state only the loop
// touches: that is the point of a loop, as in Node.js, libuv and libco's
// co_eventloop.
//
// # Lifetime
//
// [Loop.Run] returns when nothing is left that could make the loop do
// anything: no referenced timer is active, no referenced socket or
// listener is open, no posted function is waiting and no [Loop.Ref] is
// held. As in Node.js, a timer that has been [Timer.Unref]'d still fires
// while the loop runs for other reasons, but does not by itself keep Run
// from returning. [Loop.Stop], from any goroutine, ends the loop for good
// and closes its sockets and listeners. Run then returns [ErrStopped], and
// Post refuses work with ErrStopped instead of queueing it where nothing
// will run it.
//
// # Timers
//
// A [Timer] is libuv's uv_timer_t: [Loop.NewTimer] makes one with its
// callback, [Timer.Start] starts it with a timeout and a repeat interval
// (uv_timer_start), [Timer.Stop] stops it and [Timer.Again] restarts a
// repeating timer (uv_timer_again). Timers due at the same tick fire in
// the order they were started (libuv's start_id), earlier deadlines
// first; a repeating timer is re-armed for now+repeat before its callback
// runs, so a slow callback delays the next run rather than bunching runs
// up. Unlike libuv, a timeout is measured from the moment Start is called
// rather than from the loop's cached time, so a timer never fires early
// even after a long callback.
//
// The loop is a sibling of the scheduler (package timewheel), not built on
// it. Its timers live in a [queue.Wheel], timewheel's single-goroutine
// engine, owned by the loop goroutine. Starting and stopping a timer is
// O(1) and takes no lock. The loop sleeps with one timer of its
// [clock.Clock] set for the earliest deadline, so an idle loop never
// wakes.
//
// Timer methods are for the loop's own goroutine (callbacks and posted
// functions) or for setting up before the loop runs; from another
// goroutine, Post a function that calls them. Called from another
// goroutine while the loop waits for work, they panic.
//
// # Sockets
//
// A [Socket] is Node.js's net.Socket on the loop: [Loop.NewSocket] wraps
// a net.Conn, and a [Listener] ([Loop.NewListener], Node's net.Server)
// hands each connection it accepts to a callback as a new Socket. What is
// read arrives in OnData, then OnEnd or OnError, then OnClose, all on the
// loop goroutine; Write queues and never blocks the loop; End and Close
// end it. A server keeps all of a connection's state in its callbacks'
// closures, as a Node server does, with no mutex:
//
//	l := loop.New()
//	ln, err := l.NewListener(nl, func(s *loop.Socket) { // nl: a net.Listener
//		s.SetTimeout(2*time.Minute, func() { s.End() }) // idle: say goodbye
//		s.OnData(func(p []byte) { s.Write(p) })          // echo
//	})
//	...
//	l.Run()
//
// The waiting is Go's: each socket has a goroutine blocked in Read in the
// runtime's netpoller. It hands the loop one chunk (4 KiB at most) and
// reads the next only once the loop has delivered it. A busy loop
// slows its peers down instead of buffering. A goroutine writes the queue
// while it is not empty. [Socket.SetTimeout] is Node's idle
// timeout: one timer per socket in the loop's wheel, refreshed by traffic
// at the cost of one clock read, never early. [Socket.Poll] is libco's
// co_poll: one callback, on the loop, saying whether the socket became
// readable or the timeout came first. The [Socket] and [Listener] docs
// say the bounds and the order of the callbacks when a socket ends; the
// command examples/loopserver is a complete server with its client load.
//
// # Misuse
//
// The zero [Loop] is ready to use, as New() makes one. The zero [Timer]
// is a stopped timer that cannot be started; a copy of a Timer panics
// when started, stopped or re-referenced, instead of corrupting the
// loop's wheel. A nil func, a negative repeat, a non-positive interval or
// tick, and running a loop that is running already panic with a message
// that starts with "loop:". Work given to a stopped loop is refused with
// [ErrStopped] where a method returns an error (Post, Again, NewSocket,
// NewListener, Socket.Poll), and otherwise does nothing (Start) or
// returns false (Write), since a stopped loop runs nothing more; a
// socket's Err then matches ErrStopped too.
//
// The zero [Socket] and [Listener] have no connection and no loop: every
// method of theirs, and of nil pointers to them, panics naming itself; a
// copy of either panics when used. A nil or nil-pointer net.Conn or
// net.Listener, a nil callback where one is needed (NewListener's,
// SetTimeout's with a positive timeout, Poll's), a negative timeout and a
// second pending Poll of a socket panic; a nil OnData, OnEnd, OnError,
// OnClose or OnDrain callback removes it. The methods of sockets and
// listeners, NewSocket and NewListener panic, as the Timer methods do, if
// called from another goroutine while the loop waits for work. A second
// Close, and a Poll of a closed socket, return an error matching
// net.ErrClosed; Write, End, SetTimeout, Pause and Resume on a closed
// socket do nothing.
package loop
