// Command sharedrun starts a few Azurite processes, runs a command with
// their connection strings in TABLEKIT_AZURITE_SHARED, one per line, and
// stops them when the command ends, exiting with the command's status:
//
//	go run github.com/tablekit/tablekit/integration/azurite/sharedrun -n 3 -- go test ./...
//
// Test binaries whose TestMain is integration.Main then use one of those
// emulators, chosen by the binary's name, instead of starting one each: a
// `go test ./...` of many packages spends less time starting Node.js. Every
// test binary still gets its own uniquely named tables, queues and
// containers (as on a shared live account), and a test that needs an
// Azurite of its own calls integration.Start, which always starts one.
//
// An Azurite serves one request at a time, so -n should be about the
// number of packages go test runs at once (its -p) for suites that keep
// the emulator busy. Interrupting sharedrun interrupts the command, then
// stops the emulators.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tablekit/tablekit/integration/azurite"
)

// envShared is integration.EnvShared; package integration links package
// testing, which a command does not.
const envShared = "TABLEKIT_AZURITE_SHARED"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("sharedrun", flag.ContinueOnError)
	flags.SetOutput(stderr)
	n := flags.Int("n", 2, "how many Azurite processes to start (1 to 16)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: sharedrun [-n N] -- command [args...]")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() == 0 || *n < 1 || *n > 16 {
		flags.Usage()
		return 2
	}

	// Signals go to the command, which ends; the emulators stop after it.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	servers, err := startAll(*n, stderr)
	defer func() {
		for _, s := range servers {
			if err := s.Close(); err != nil {
				fmt.Fprintln(stderr, "sharedrun: stopping Azurite:", err)
			}
		}
	}()
	if err != nil {
		fmt.Fprintln(stderr, "sharedrun:", err)
		if out := azurite.Output(err); out != "" {
			fmt.Fprintln(stderr, out)
		}
		return 1
	}
	conns := make([]string, len(servers))
	for i, s := range servers {
		conns[i] = s.ConnectionString
	}

	cmd := exec.Command(flags.Arg(0), flags.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = append(os.Environ(), envShared+"="+strings.Join(conns, "\n"))
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "sharedrun:", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-signals:
			_ = cmd.Process.Signal(sig)
		case err := <-done:
			var exit *exec.ExitError
			switch {
			case err == nil:
				return 0
			case errors.As(err, &exit) && exit.ExitCode() > 0:
				return exit.ExitCode()
			default:
				fmt.Fprintln(stderr, "sharedrun:", err)
				return 1
			}
		}
	}
}

// startAll starts n emulators at once and returns those that started.
func startAll(n int, progress io.Writer) ([]*azurite.Server, error) {
	// The bound covers a first-time installation of Azurite with npm.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Found once, so that a first installation runs once.
	if _, err := azurite.Find(ctx, progress); err != nil {
		return nil, err
	}
	type result struct {
		srv *azurite.Server
		err error
	}
	results := make(chan result, n)
	for range n {
		go func() {
			srv, err := azurite.Start(ctx, nil)
			results <- result{srv, err}
		}()
	}
	var servers []*azurite.Server
	var errs []error
	for range n {
		r := <-results
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		servers = append(servers, r.srv)
	}
	return servers, errors.Join(errs...)
}
