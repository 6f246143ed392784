package timewheel

import _ "unsafe" // for go:linkname

// procPin pins the calling goroutine to its processor and returns the
// processor's id; procUnpin undoes it. They are the runtime's own, which
// sync.Pool uses. The runtime calls them an internal detail: it keeps them
// and their signatures only because widely used packages reach them
// through linkname, as this one does (go.dev/issue/67401, the "hall of
// shame" in runtime/proc.go), and a future Go may restrict that. The
// wheel reads the id to pick the shard of the current processor, a few
// nanoseconds where a sync.Pool round trip costs twenty (12 % of W1).
// (The lazy Reset counter asks another question, which stripe the calling
// goroutine is unlikely to share, and answers it without a call: see
// internal/stripe.)
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()
