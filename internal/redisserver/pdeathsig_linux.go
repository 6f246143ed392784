package redisserver

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd's process when the thread that
// started it exits. Go's runtime ends a thread only when the process
// ends, or when a goroutine locked to it (runtime.LockOSThread) exits,
// which none that starts a server does: in effect, when the test binary
// dies without stopping it (a timeout's panic, a kill).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
