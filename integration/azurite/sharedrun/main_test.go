package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// sharedrun hands the command two emulators that answer while it runs,
// passes its exit status on, and stops the emulators when it ends.
func TestRunSharesEmulatorsWithTheCommand(t *testing.T) {
	dir := t.TempDir()
	listed, release := filepath.Join(dir, "listed"), filepath.Join(dir, "release")
	// The command writes what it was given, waits to be released (at most
	// two minutes), and exits with status 3.
	script := `printf '%s' "$TABLEKIT_AZURITE_SHARED" > "$0.tmp" && mv "$0.tmp" "$0"; ` +
		`i=0; while [ ! -e "$1" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; exit 3`
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"-n", "2", "--", "sh", "-c", script, listed, release}, strings.NewReader(""), os.Stdout, &stderr)
	}()

	var conns []string
	for deadline := time.Now().Add(3 * time.Minute); conns == nil; {
		if b, err := os.ReadFile(listed); err == nil {
			conns = strings.Split(string(b), "\n")
			break
		}
		select {
		case c := <-code:
			t.Fatalf("sharedrun ended with %d before the command ran: %s", c, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never saw TABLEKIT_AZURITE_SHARED")
		}
	}
	if len(conns) != 2 || conns[0] == conns[1] {
		t.Fatalf("TABLEKIT_AZURITE_SHARED lists %q, want two different connection strings", conns)
	}
	noRetry := &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}
	list := func(cs string) error {
		svc, err := aztables.NewServiceClientFromConnectionString(cs, noRetry)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = svc.NewListTablesPager(nil).NextPage(ctx)
		return err
	}
	for _, cs := range conns {
		if err := list(cs); err != nil {
			t.Errorf("an emulator does not answer while the command runs: %v", err)
		}
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if c := <-code; c != 3 {
		t.Errorf("sharedrun exited %d, want the command's 3; stderr: %s", c, stderr.String())
	}
	for _, cs := range conns {
		if err := list(cs); err == nil {
			t.Error("an emulator still answers after sharedrun returned")
		}
	}
}

func TestRunRefusesBadUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"-n", "0", "--", "true"}, {"-n", "17", "--", "true"}, {"-bogus"}} {
		var stderr bytes.Buffer
		if c := run(args, strings.NewReader(""), os.Stdout, &stderr); c != 2 {
			t.Errorf("run(%q) = %d, want 2", args, c)
		}
		if !strings.Contains(stderr.String(), "usage: sharedrun") && !strings.Contains(stderr.String(), "flag provided but not defined") {
			t.Errorf("run(%q) printed %q", args, stderr.String())
		}
	}
}
