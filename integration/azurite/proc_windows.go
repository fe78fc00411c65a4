//go:build windows

package azurite

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// binName is the name npm gives the azurite executable in node_modules/.bin.
const binName = "azurite.cmd"

// setProcessGroup starts cmd in a new process group.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killGroup kills the process tree that cmd leads (the .cmd wrapper and the
// node process it starts).
func killGroup(cmd *exec.Cmd) error {
	_ = exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid)).Run()
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// groupAlive reports whether any process of the tree is left; taskkill /T
// has already waited for the tree.
func groupAlive(int) bool { return false }
