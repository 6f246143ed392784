package timewheel

import (
	"testing"
	"testing/synctest"
	"time"
	"unsafe"
)

// rendezvous is an Executor whose first call waits for its second: if the
// shards' drivers called Execute one at a time, it would wait for ever.
type rendezvous struct{ first chan struct{} }

func (r *rendezvous) Execute(f func()) {
	select {
	case r.first <- struct{}{}: // the second call, or a later one
	case <-r.first: // the first call: wait for a second
		// nothing: we got here because another call sent
	}
	f()
}

// TestExecutorCalledConcurrentlyByShards checks what the Executor doc
// says: with two shards, two drivers call Execute at once.
func TestExecutorCalledConcurrentlyByShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &rendezvous{first: make(chan struct{})}
		w := New(WithShards(2), WithExecutor(r))
		defer w.Close()
		done := make(chan int, 2)
		for i, s := range w.shards {
			tm := &Timer{f: func() { done <- i }, p: unsafe.Pointer(s)}
			s.start(&tm.e, nil, time.Second)
		}
		<-done
		<-done // synctest reports a deadlock here if Execute is called serially
	})
}
