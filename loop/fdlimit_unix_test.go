//go:build unix

package loop_test

import (
	"os"
	"syscall"
	"testing"
)

// fileLimit raises the soft limit on open files to the hard one for the
// test, restoring it after, and returns the limit the test may use.
func fileLimit(t *testing.T) uint64 {
	t.Helper()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Skipf("cannot read the limit on open files: %v", err)
	}
	if rl.Cur < rl.Max {
		old := rl
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			t.Logf("raising the soft limit on open files from %d to %d: %v", old.Cur, rl.Max, err)
			return old.Cur
		}
		t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
	}
	return rl.Cur
}

// openFiles returns how many files the process has open, or -1 where
// /proc/self/fd does not say.
func openFiles() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(fds)
}
