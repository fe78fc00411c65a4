//go:build unix

package azurite

import (
	"errors"
	"os/exec"
	"syscall"
)

// binName is the name npm gives the azurite executable in node_modules/.bin.
const binName = "azurite"

// killGroup sends SIGKILL to the process group that cmd leads: the npm
// executable may be a wrapper that starts node as a child, and the whole
// group must go. Azurite keeps nothing on disk here, so nothing is lost.
func killGroup(cmd *exec.Cmd) error {
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupAlive reports whether any process of the group pgid is left.
func groupAlive(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}
