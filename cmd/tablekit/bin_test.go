package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is the command run as a user runs it: the binary, in a process of
// its own, with --json events read from its stderr as they come.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdout bytes.Buffer
	mu     sync.Mutex
	stderr bytes.Buffer
	events chan map[string]any
	done   chan struct{}
}

func startBin(t testing.TB, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, cmd: exec.Command(binary(t), args...), events: make(chan map[string]any, 10000), done: make(chan struct{})}
	p.cmd.Stdout = &p.stdout
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		defer close(p.events)
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			p.mu.Lock()
			p.stderr.Write(line)
			p.stderr.WriteByte('\n')
			p.mu.Unlock()
			var ev map[string]any
			if json.Unmarshal(line, &ev) == nil {
				select {
				case p.events <- ev:
				default:
				}
			}
		}
	}()
	return p
}

// waitProgress waits for a progress event counting at least min; false
// when the process ended first.
func (p *proc) waitProgress(min float64) bool {
	p.t.Helper()
	guard := time.After(2 * time.Minute) // a guard against a hung test, not a timing assertion
	for {
		select {
		case ev, ok := <-p.events:
			if !ok {
				return false
			}
			if ev["event"] == "progress" {
				if n, _ := ev["count"].(float64); n >= min {
					return true
				}
			}
		case <-guard:
			p.t.Fatalf("no progress event counting %v", min)
		}
	}
}

func (p *proc) signal(s syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(s); err != nil {
		p.t.Fatal(err)
	}
}

// wait returns the exit code and what the process printed.
func (p *proc) wait() result {
	p.t.Helper()
	for range p.events {
	}
	<-p.done
	err := p.cmd.Wait()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		p.t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return result{code: code, stdout: p.stdout.String(), stderr: p.stderr.String()}
}

// lastEvent returns the last JSON event of a kind in the output.
func lastEvent(out, kind string) map[string]any {
	var last map[string]any
	for _, line := range strings.Split(out, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil && ev["event"] == kind {
			last = ev
		}
	}
	return last
}
