package azurite

import (
	"io"
	"os"
	"runtime"
)

// terminal returns where an installation's progress reaches the person
// who started the program, and a function that releases it. `go test
// ./...` captures each test binary's standard output and error and shows
// them only when the package fails, so a first installation under it would
// pass in silence: the progress goes to the controlling terminal too.
func terminal() (io.Writer, func()) {
	return progressTo(os.Stderr, isTerminal(os.Stderr), openTerminal)
}

// progressTo chooses the progress writer: stderr alone when it is a
// terminal (nothing captures it); else the terminal that open returns and
// stderr (which keeps the lines for logs, CI's included); else stderr
// alone, when there is no terminal (CI, a service).
func progressTo(stderr io.Writer, stderrIsTerminal bool, open func() (io.WriteCloser, error)) (io.Writer, func()) {
	if stderrIsTerminal {
		return stderr, func() {}
	}
	tty, err := open()
	if err != nil {
		return stderr, func() {}
	}
	return io.MultiWriter(tty, stderr), func() { _ = tty.Close() }
}

// openTerminal opens the process's controlling terminal for writing.
func openTerminal() (io.WriteCloser, error) {
	name := "/dev/tty"
	if runtime.GOOS == "windows" {
		name = "CONOUT$"
	}
	return os.OpenFile(name, os.O_WRONLY, 0)
}

// isTerminal reports whether f is a character device other than the null
// device: a terminal, for this purpose.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}
