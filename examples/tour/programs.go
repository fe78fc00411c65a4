package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// examples is the import path of the directory of the example programs.
const examples = "github.com/tablekit/tablekit/examples/"

// builds are the example programs being built in the background.
type builds struct {
	done   map[string]chan error // receives the program's build result
	cancel context.CancelFunc
	ended  chan struct{}
}

// startBuilds builds programs into dir, one after another in their order,
// in the background.
func startBuilds(ctx context.Context, dir string, programs []string) *builds {
	ctx, cancel := context.WithCancel(ctx)
	b := &builds{done: map[string]chan error{}, cancel: cancel, ended: make(chan struct{})}
	for _, p := range programs {
		b.done[p] = make(chan error, 1)
	}
	go func() {
		defer close(b.ended)
		for _, p := range programs {
			b.done[p] <- build(ctx, dir, p)
		}
	}()
	return b
}

// wait returns the result of the program's build, once it is built.
func (b *builds) wait(program string) error {
	done, ok := b.done[program]
	if !ok {
		return fmt.Errorf("examples/%s is not among the programs built", program)
	}
	err := <-done
	done <- err // for a second wait
	return err
}

// stop ends the builds still running and waits for them to end.
func (b *builds) stop() {
	b.cancel()
	<-b.ended
}

// build builds an example program into dir with go build, run in the
// current directory (the repository, or a module that requires tablekit).
func build(ctx context.Context, dir, program string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the tour builds the example programs with the go command: %w", err)
	}
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", dir+string(filepath.Separator), examples+program)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build of examples/%s: %w\n%s", program, err, out.Bytes())
	}
	return nil
}

// runProgram runs the example program built into dir, with the variables
// that name the account in its environment (and no other account's), its
// output written to w. A failure returns its exit status and standard error.
func runProgram(ctx context.Context, dir, program string, vars []string, w io.Writer) error {
	cmd := exec.CommandContext(ctx, filepath.Join(dir, program))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envConnectionString+"=") && !strings.HasPrefix(kv, envAccountURL+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, vars...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("examples/%s: %w: %s", program, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
