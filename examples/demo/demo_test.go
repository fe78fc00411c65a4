package demo_test

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// vars is a getenv of fixed values.
func vars(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// TestConnectUseDevelopmentStorage: the shorthand for an Azurite on its
// default ports, which the SDKs refuse, gives an Env on those ports (no
// request is made: the test's Azurite is on other ports).
func TestConnectUseDevelopmentStorage(t *testing.T) {
	e, where, stop, err := demo.Connect(t.Context(), vars(map[string]string{demo.EnvConnectionString: "UseDevelopmentStorage=true"}))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if e.TableEndpoint != "http://127.0.0.1:10002/devstoreaccount1/" || e.Account.Endpoints().Queue != "http://127.0.0.1:10001/devstoreaccount1/" ||
		e.Account.Endpoints().Blob != "http://127.0.0.1:10000/devstoreaccount1/" {
		t.Errorf("endpoints %+v", e.Account.Endpoints())
	}
	if e.Live || e.ConnectionString != "UseDevelopmentStorage=true" || e.QueueService == nil || e.BlobService == nil {
		t.Errorf("Env %+v", e)
	}
	if !strings.Contains(where, demo.EnvConnectionString) {
		t.Errorf("where = %q", where)
	}
}

// TestConnectBadConnectionString: a malformed string is named with the
// variable it came from, before anything starts.
func TestConnectBadConnectionString(t *testing.T) {
	_, _, _, err := demo.Connect(t.Context(), vars(map[string]string{demo.EnvConnectionString: "AccountName=acct"}))
	if !errors.Is(err, account.ErrInvalid) || !strings.Contains(err.Error(), demo.EnvConnectionString) || !strings.Contains(err.Error(), "AccountKey") {
		t.Errorf("Connect: %v", err)
	}
}

// TestRunStartsAzurite: with no account named, Run starts a private
// Azurite, runs the tour on it and stops it (what `make demo` does).
func TestRunStartsAzurite(t *testing.T) {
	if env.Live {
		t.Log("a live account is configured; the private Azurite is still tested")
	}
	var out strings.Builder
	var endpoint string
	err := demo.Run(t.Context(), vars(nil), &out, func(ctx context.Context, e *demo.Env, out io.Writer) error {
		endpoint = e.TableEndpoint
		_, drop, err := e.ScratchTable(ctx, "runstarts")
		if err != nil {
			return err
		}
		return drop()
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.HasPrefix(out.String(), "Started Azurite (pid ") || endpoint == env.TableEndpoint || endpoint == "" {
		t.Errorf("output %q, endpoint %s", out.String(), endpoint)
	}
}

// TestScratchAndWith: scratch resources are created with valid unique
// names and deleted by their drop; a view made by With runs its policies
// on every client.
func TestScratchAndWith(t *testing.T) {
	ctx := t.Context()
	e := demo.New(env.Account(), env.ConnectionString)
	meter := cost.NewMeter()
	metered := e.With(meter.Policy())
	tbl, dropT, err := metered.ScratchTable(ctx, "Scratch-Table!")
	if err != nil {
		t.Fatal(err)
	}
	q, dropQ, err := metered.ScratchQueue(ctx, "Scratch-Queue")
	if err != nil {
		t.Fatal(err)
	}
	c, dropC, err := metered.ScratchContainer(ctx, "Scratch-Container")
	if err != nil {
		t.Fatal(err)
	}
	s := meter.Snapshot()
	if s.Count(cost.Table, cost.OpCreateTable) != 1 || s.Count(cost.Queue, cost.OpCreateQueue) != 1 || s.Of(cost.Blob) != 1 {
		t.Errorf("the view's meter counted %v", s)
	}
	typed, err := entity.NewTable[entity.DynamicEntity](tbl)
	if err != nil {
		t.Fatal(err)
	}
	name := typed.Name()
	if !strings.HasPrefix(name, "tkscratchtable") {
		t.Errorf("table name %q", name)
	}
	// The raw clients of the test environment see them, then not.
	if _, err := env.QueueService.NewQueueClient(queueName(q.URL())).GetProperties(ctx, nil); err != nil {
		t.Errorf("the scratch queue is not there: %v", err)
	}
	for _, drop := range []func() error{dropT, dropQ, dropC, dropT} { // a second drop is no error
		if err := drop(); err != nil {
			t.Error(err)
		}
	}
	if _, err := env.TableService.NewClient(name).GetAccessPolicy(ctx, nil); err == nil {
		t.Errorf("table %s is still there after drop", name)
	}
	if _, err := env.BlobService.ServiceClient().NewContainerClient(containerName(c.URL())).GetProperties(ctx, nil); err == nil {
		t.Errorf("container %s is still there after drop", c.URL())
	}
}

func queueName(u string) string     { return u[strings.LastIndex(strings.TrimSuffix(u, "/"), "/")+1:] }
func containerName(u string) string { return queueName(u) }

// TestKiller: after its budget, a Killer stops every request before it is
// sent, with ErrKilled, and azcore does not retry it.
func TestKiller(t *testing.T) {
	ctx := t.Context()
	e := demo.New(env.Account(), env.ConnectionString)
	tbl, drop, err := e.ScratchTable(ctx, "killer")
	if err != nil {
		t.Fatal(err)
	}
	defer drop()
	k := demo.NewKiller(1)
	dying := e.With(k)
	typed, err := entity.NewTable[entity.DynamicEntity](tbl)
	if err != nil {
		t.Fatal(err)
	}
	client := dying.TableService.NewClient(typed.Name())
	if _, err := client.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"1"}`), nil); err != nil {
		t.Fatalf("the request within the budget: %v", err)
	}
	if _, err := client.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"2"}`), nil); !errors.Is(err, demo.ErrKilled) {
		t.Errorf("the request after the budget: %v, want ErrKilled", err)
	}
	select {
	case <-k.Killed():
	default:
		t.Error("Killed is not closed")
	}
	if _, err := tbl.GetEntity(ctx, "p", "2", nil); err == nil {
		t.Error("the killed insert reached the service")
	}
}

// TestExamplesNeedNoTestingNorInternal: every example program links no
// package testing (nor integration), and no example package imports an
// internal package itself: a user can copy one out of tablekit's tree.
func TestExamplesNeedNoTestingNorInternal(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	for _, dir := range []string{"..", filepath.Join("..", "observability")} {
		cmd := exec.Command(goTool, "list", "-f", "{{.ImportPath}}|{{.Name}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", "./...")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list in %s: %v\n%s", dir, err, out)
		}
		mains := 0
		for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(line, "|")
			if len(f) != 4 {
				t.Fatalf("go list line %q", line)
			}
			pkg, name, imports, deps := f[0], f[1], strings.Fields(f[2]), strings.Fields(f[3])
			for _, imp := range imports {
				if strings.HasPrefix(imp, "github.com/tablekit/tablekit/internal/") {
					t.Errorf("%s imports %s", pkg, imp)
				}
			}
			if name != "main" {
				continue
			}
			mains++
			for _, d := range deps {
				if d == "testing" || d == "github.com/tablekit/tablekit/integration" {
					t.Errorf("program %s links %s", pkg, d)
				}
			}
		}
		if mains == 0 {
			t.Errorf("no example program found in %s", dir)
		}
	}
}
