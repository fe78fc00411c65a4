//go:build unix

package secondaryindex_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process (the client: Azurite runs
// apart) has used so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
