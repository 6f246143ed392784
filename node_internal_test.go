package timewheel

import (
	"testing"
	"time"
	"unsafe"
)

// TestNodeSizes holds a timer's node to its 80-byte size class and a
// ticker's to 96: each field added to node is paid by every pending
// channel timer (BenchmarkChanMemory).
func TestNodeSizes(t *testing.T) {
	if got := unsafe.Sizeof(node{}); got > 80 {
		t.Errorf("node takes %d bytes, want at most 80", got)
	}
	if got := unsafe.Sizeof(tickerNode{}); got > 96 {
		t.Errorf("tickerNode takes %d bytes, want at most 96", got)
	}
}

// TestNewNodeKinds: a ticker's node is a tickerNode with its period, a
// timer's is not.
func TestNewNodeKinds(t *testing.T) {
	w := New()
	defer w.Close()
	s := w.shards[0]
	tn := newNode(s, make(chan time.Time, 1), 3*time.Second)
	if !tn.ticker || tn.grid().period != int64(3*time.Second) {
		t.Fatalf("ticker node: ticker=%v period=%d", tn.ticker, tn.grid().period)
	}
	if n := newNode(s, make(chan time.Time, 1), 0); n.ticker {
		t.Fatal("timer node marked as a ticker's")
	}
}
