package azurite

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestNPMFilesMatchIntegration: the pin embedded here and the one `make
// azurite` installs from integration/ are the same files.
func TestNPMFilesMatchIntegration(t *testing.T) {
	for _, name := range []string{"package.json", "package-lock.json"} {
		embedded, err := npmFiles.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(embedded, theirs) {
			t.Errorf("integration/azurite/%s differs from integration/%s: update both", name, name)
		}
	}
	version, _, err := pinnedAzurite()
	if err != nil || version == "" {
		t.Errorf("pinnedAzurite: %q, %v", version, err)
	}
}

type closer struct {
	bytes.Buffer
	closed bool
}

func (c *closer) Close() error { c.closed = true; return nil }

// TestProgressTo: an installation's progress reaches a terminal when
// standard error is captured (as go test captures it), and standard error
// always.
func TestProgressTo(t *testing.T) {
	var stderr bytes.Buffer
	tty := &closer{}
	open := func() (io.WriteCloser, error) { return tty, nil }

	w, release := progressTo(&stderr, false, open)
	io.WriteString(w, "installing\n")
	release()
	if tty.String() != "installing\n" || stderr.String() != "installing\n" || !tty.closed {
		t.Errorf("captured stderr: terminal got %q (closed %v), stderr %q; want both, terminal closed", tty.String(), tty.closed, stderr.String())
	}

	stderr.Reset()
	tty = &closer{}
	w, release = progressTo(&stderr, true, open)
	io.WriteString(w, "installing\n")
	release()
	if tty.String() != "" || stderr.String() != "installing\n" {
		t.Errorf("stderr a terminal: terminal got %q, stderr %q; want stderr alone (no line twice)", tty.String(), stderr.String())
	}

	stderr.Reset()
	w, release = progressTo(&stderr, false, func() (io.WriteCloser, error) { return nil, errors.New("no terminal") })
	io.WriteString(w, "installing\n")
	release()
	if stderr.String() != "installing\n" {
		t.Errorf("no terminal: stderr %q", stderr.String())
	}

	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("%s is taken for a terminal", os.DevNull)
	}
}

// TestStartRefusesSomePorts: ports are all given or none, refused before
// anything runs.
func TestStartRefusesSomePorts(t *testing.T) {
	_, err := Start(context.Background(), &Options{TablePort: 10002})
	if err == nil || !strings.Contains(err.Error(), "set all three") {
		t.Errorf("Start with one port: %v", err)
	}
}

// TestInstallWithoutNPM: with no npm to install Azurite, the error says
// exactly which commands install it; an installation already in the cache
// is used without npm and without a word.
func TestInstallWithoutNPM(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Log("the cache directory is set through XDG_CACHE_HOME, which only Linux reads")
		return
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("PATH", t.TempDir()) // no npm
	var progress bytes.Buffer
	_, err := Install(context.Background(), &progress)
	if err == nil {
		t.Fatal("Install without npm succeeded")
	}
	for _, want := range []string{InstallCommand, "make azurite", "npm install -g azurite@3.37.0", EnvAzurite, "Node.js 22"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}

	version, digest, err := pinnedAzurite()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(cache, "tablekit", "azurite-"+version+"-"+digest, "node_modules", ".bin", binName)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Install(context.Background(), &progress)
	if err != nil || got != bin {
		t.Errorf("Install with Azurite in the cache: %q, %v; want %s", got, err, bin)
	}
	if progress.Len() != 0 {
		t.Errorf("Install said %q, want nothing (nothing was installed)", progress.String())
	}
}
