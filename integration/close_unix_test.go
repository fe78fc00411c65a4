//go:build unix

package integration_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/integration"
)

// TestClose starts a second Azurite, closes it, and checks that its process
// group is gone and its table endpoint no longer answers.
func TestClose(t *testing.T) {
	if env.Live {
		// Not a skip: in CI a skipped test fails the run, and this one
		// does not apply to a live account, which has no process to stop.
		t.Log("a live account has no process to stop")
		return
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	second, err := integration.Start(ctx)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = second.Close() }) // in case of an early return
	pid := second.PID()
	if pid == env.PID() {
		t.Fatalf("second environment reuses pid %d", pid)
	}
	if second.TableEndpoint == env.TableEndpoint {
		t.Fatalf("second environment reuses endpoint %s", env.TableEndpoint)
	}
	if _, err := second.TableService.CreateTable(ctx, "tkclosecheck", nil); err != nil {
		t.Fatalf("second environment does not answer: %v", err)
	}
	if err := second.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := second.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pid %d still exists after Close (kill -0: %v)", pid, err)
	}
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still has processes after Close (kill -0: %v)", pid, err)
	}
	svc, err := aztables.NewServiceClientFromConnectionString(second.ConnectionString, env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.NewListTablesPager(nil).NextPage(ctx); err == nil {
		t.Errorf("table endpoint %s still answers after Close", second.TableEndpoint)
	}
}
