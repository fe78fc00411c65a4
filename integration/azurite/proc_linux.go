//go:build linux

package azurite

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts cmd as the leader of a new process group, and has
// the kernel kill it if the thread that started it ends (see startProcess).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
