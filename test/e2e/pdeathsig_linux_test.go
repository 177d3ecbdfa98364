//go:build e2e

package e2e

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes Linux send cmd SIGTERM when the thread that
// started it exits, so the manager never outlives a killed test binary.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
