package timewheel

import _ "unsafe" // for go:linkname

// procPin pins the calling goroutine to its processor and returns the
// processor's id; procUnpin undoes it. They are the runtime's own, which
// sync.Pool uses: the runtime keeps them for packages outside the standard
// library (go.dev/issue/67401). The wheel reads the id to pick the shard
// of the current processor, a few nanoseconds where a sync.Pool round trip
// costs twenty.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()
