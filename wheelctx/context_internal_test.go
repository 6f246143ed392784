package wheelctx

import (
	"testing"
	"unsafe"
)

// TestContextSize holds timerCtx to the 192-byte size class: what few
// contexts need lives in ctxExtra, made on demand.
func TestContextSize(t *testing.T) {
	if got := unsafe.Sizeof(timerCtx{}); got > 192 {
		t.Errorf("timerCtx takes %d bytes, want at most 192", got)
	}
}
