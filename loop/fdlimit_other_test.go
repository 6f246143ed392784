//go:build !unix

package loop_test

import "testing"

// fileLimit assumes a modest number of open files where there is no
// rlimit.
func fileLimit(*testing.T) uint64 { return 2048 }

// openFiles returns -1: not counted here.
func openFiles() int { return -1 }
