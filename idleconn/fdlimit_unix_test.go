//go:build unix

package idleconn_test

import (
	"syscall"
	"testing"
)

// needFiles makes sure the process may open n file descriptors, raising
// the soft limit up to the hard one if need be, and skips the test if the
// hard limit is too low.
func needFiles(t testing.TB, n uint64) {
	t.Helper()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Skipf("idleconn: cannot read the file descriptor limit: %v", err)
	}
	if rl.Cur >= n {
		return
	}
	if rl.Max < n {
		t.Skipf("idleconn: test needs %d file descriptors, hard limit (ulimit -Hn) is %d", n, rl.Max)
	}
	old := rl
	rl.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Skipf("idleconn: test needs %d file descriptors, soft limit is %d and raising it failed: %v", n, old.Cur, err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}
