// Package loop is a single-goroutine event loop in the style of libuv's
// uv_run: timers and posted functions, all run on the one goroutine that
// runs the loop.
//
// Everything a Loop runs — timer callbacks, repeating timers, functions
// given to [Loop.Post] — runs on the goroutine that called [Loop.Run] (or
// [Loop.RunOnce], [Loop.RunNoWait]), one at a time, never concurrently
// with each other. Code that lives on the loop needs no locks for the
// state only the loop touches: that is the point of a loop, as in Node.js,
// libuv and libco's co_eventloop.
//
// # Lifetime
//
// [Loop.Run] returns when nothing is left that could make the loop do
// anything: no referenced timer is active, no posted function is waiting
// and no [Loop.Ref] is held. As in Node.js, a timer that has been
// [Timer.Unref]'d still fires while the loop runs for other reasons, but
// does not by itself keep Run from returning. [Loop.Stop], from any
// goroutine, ends the loop for good: Run returns [ErrStopped], and Post
// refuses work with ErrStopped instead of queueing it where nothing will
// run it.
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
// The timers live in a [queue.Wheel], timewheel's single-goroutine engine,
// owned by the loop goroutine: starting and stopping a timer is O(1) and
// takes no lock. The loop sleeps with one timer of its [clock.Clock] set
// for the earliest deadline, so an idle loop never wakes.
//
// Timer methods are for the loop's own goroutine (callbacks and posted
// functions) or for setting up before the loop runs; from another
// goroutine, Post a function that calls them. Called from another
// goroutine while the loop waits for work, they panic.
//
// # Misuse
//
// The zero [Loop] is ready to use, as New() makes one. The zero [Timer]
// is a stopped timer that cannot be started; a copy of a Timer panics
// when started, stopped or re-referenced, instead of corrupting the
// loop's wheel. A nil func, a negative repeat, a non-positive interval or
// tick, and running a loop that is running already panic with a message
// that starts with "loop:". Work given to a stopped loop is refused with
// [ErrStopped] where a method returns an error (Post, Again), and
// otherwise does nothing (Start), since a stopped loop runs nothing more.
package loop
