package wheelctx

import (
	"testing"
	"unsafe"
)

// TestContextSize holds timerCtx to the 176-byte size class: what few
// contexts need lives in ctxExtra, made on demand, and its own Done
// channel is one pointer (see loadDone).
func TestContextSize(t *testing.T) {
	if got := unsafe.Sizeof(timerCtx{}); got > 176 {
		t.Errorf("timerCtx takes %d bytes, want at most 176", got)
	}
}
