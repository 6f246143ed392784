package stripe

import _ "unsafe" // for go:linkname

// ProcPin pins the calling goroutine to its processor and returns the
// processor's id; ProcUnpin undoes it. They are the runtime's own, which
// sync.Pool uses. The runtime calls them an internal detail. It keeps them
// and their signatures only because widely used packages reach them
// through linkname, as this one does (go.dev/issue/67401, the "hall of
// shame" in runtime/proc.go). A future Go may restrict that. The
// root package reads the id to pick the shard of the current processor,
// a few nanoseconds where a sync.Pool round trip costs twenty (12 % of
// W1); AddPinned, to pick a stripe.
//
//go:linkname ProcPin runtime.procPin
func ProcPin() int

//go:linkname ProcUnpin runtime.procUnpin
func ProcUnpin()
