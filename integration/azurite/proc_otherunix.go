//go:build unix && !linux

package azurite

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts cmd as the leader of a new process group.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
