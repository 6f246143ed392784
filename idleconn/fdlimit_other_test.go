//go:build !unix

package idleconn_test

import "testing"

// needFiles assumes enough file descriptors where there is no rlimit.
func needFiles(testing.TB, uint64) {}
