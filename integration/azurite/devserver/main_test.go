package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestInstallFindsAzurite: -install prints the executable that tests and
// programs will run.
func TestInstallFindsAzurite(t *testing.T) {
	bin := os.Getenv("TABLEKIT_AZURITE")
	if bin == "" {
		t.Log("TABLEKIT_AZURITE is not set: -install would install Azurite, which this test does not do")
		return
	}
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"-install"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if strings.TrimSpace(stdout.String()) != bin {
		t.Errorf("-install printed %q, want %q", stdout.String(), bin)
	}
}

func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-nope"}, {"extra"}} {
		var stdout, stderr strings.Builder
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", args, code, stderr.String())
		}
	}
}
