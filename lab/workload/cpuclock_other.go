//go:build !linux

package workload

import "time"

// threadCPU returns false: the lab times rounds on the wall clock here.
func threadCPU() (time.Duration, bool) { return 0, false }
