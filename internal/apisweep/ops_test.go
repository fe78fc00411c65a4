package apisweep_test

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration/cosmos"
	"github.com/tablekit/tablekit/throttle"
)

// TestNoPanicOnNilOperations sweeps the packages that wire and run a
// service (account, backup, throttle, integration/cosmos) as
// TestNoPanicOnNil sweeps the core: every function with nil or zero
// arguments, every method on nil, zero and working receivers.
func TestNoPanicOnNilOperations(t *testing.T) {
	ctx := context.Background()
	var nilDyn *entity.Table[entity.DynamicEntity]
	dyn, err := entity.NewTable[entity.DynamicEntity](offline(t, true))
	if err != nil {
		t.Fatal(err)
	}
	acct, err := account.NewFromConnectionString("UseDevelopmentStorage=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	lim, err := throttle.NewLimiter(throttle.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sim, err := throttle.NewSimulator(throttle.SimConfig{})
	if err != nil {
		t.Fatal(err)
	}
	pkgs := []pkg{
		{
			dir: "account",
			funcs: map[string]func(){
				"New": func() {
					_, _ = account.New("", nil, nil)
					_, _ = account.New("http://127.0.0.1:1/", nil, &account.Options{})
				},
				"NewFromConnectionString": func() {
					_, _ = account.NewFromConnectionString("", nil)
					_, _ = account.NewFromConnectionString(";=;", &account.Options{})
				},
				"NewFromSASURL":   func() { _, _ = account.NewFromSASURL("", nil); _, _ = account.NewFromSASURL("http://x/?", nil) },
				"FromEnvironment": func() { _, _ = account.FromEnvironment(nil); _, _ = account.FromEnvironment(&account.Options{}) },
				"Provision": func() {
					_ = account.Provision(ctx)
					_ = account.Provision(ctx, nil, nilDyn, account.QueueProvisioner(nil))
				},
				"QueueProvisioner":     func() { _ = account.QueueProvisioner(nil).Provision(ctx) },
				"ContainerProvisioner": func() { _ = account.ContainerProvisioner(nil).Provision(ctx) },
			},
			types: map[string]reflect.Type{
				"Account": reflect.TypeFor[account.Account](), "ConfigError": reflect.TypeFor[account.ConfigError](),
				"EndpointError": reflect.TypeFor[account.EndpointError](), "Endpoints": reflect.TypeFor[account.Endpoints](),
				"Options": reflect.TypeFor[account.Options](), "ProvisionError": reflect.TypeFor[account.ProvisionError](),
				"Provisioner": reflect.TypeFor[account.Provisioner](),
			},
			working: map[string]reflect.Value{"Account": reflect.ValueOf(acct)},
		},
		{
			dir: "backup",
			funcs: map[string]func(){
				"Export": func() {
					_, _ = backup.Export(ctx, nil, nil, backup.ExportOptions{})
					_, _ = backup.Export(ctx, nilDyn, &bytes.Buffer{}, backup.ExportOptions{})
					_, _ = backup.Export(ctx, dyn, nil, backup.ExportOptions{})
				},
				"ExportBlob": func() {
					_, _ = backup.ExportBlob(ctx, nil, nil, backup.ExportOptions{})
					_, _ = backup.ExportBlob(ctx, dyn, nil, backup.ExportOptions{})
				},
				"ExportCSV": func() {
					_ = backup.ExportCSV(ctx, nil, nil, filter.Expr{})
					_ = backup.ExportCSV(ctx, dyn, nil, filter.Expr{})
				},
				"Import": func() {
					_, _ = backup.Import(ctx, nil, nil, backup.ImportOptions{})
					_, _ = backup.Import(ctx, dyn, nil, backup.ImportOptions{})
					_, _ = backup.Import(ctx, dyn, strings.NewReader(""), backup.ImportOptions{})
				},
				"ImportCSV": func() {
					_, _ = backup.ImportCSV(ctx, nil, nil, backup.ImportOptions{})
					_, _ = backup.ImportCSV(ctx, dyn, nil, backup.ImportOptions{})
					_, _ = backup.ImportCSV(ctx, dyn, strings.NewReader(""), backup.ImportOptions{})
				},
				"ReadCSV":  func() { drainSeq2(backup.ReadCSV(nil)); drainSeq2(backup.ReadCSV(strings.NewReader(""))) },
				"WriteCSV": func() { _ = backup.WriteCSV(nil, nil, nil); _ = backup.WriteCSV(&bytes.Buffer{}, nil, nil) },
			},
			types: map[string]reflect.Type{
				"Checkpoint": reflect.TypeFor[backup.Checkpoint](), "ConfigError": reflect.TypeFor[backup.ConfigError](),
				"EntityError": reflect.TypeFor[backup.EntityError](), "ExportOptions": reflect.TypeFor[backup.ExportOptions](),
				"ImportCheckpoint": reflect.TypeFor[backup.ImportCheckpoint](), "ImportError": reflect.TypeFor[backup.ImportError](),
				"ImportOptions": reflect.TypeFor[backup.ImportOptions](), "ImportSummary": reflect.TypeFor[backup.ImportSummary](),
				"LineError": reflect.TypeFor[backup.LineError](), "Mode": reflect.TypeFor[backup.Mode](), "OrderError": reflect.TypeFor[backup.OrderError](),
				"Progress": reflect.TypeFor[backup.Progress](), "Range": reflect.TypeFor[backup.Range](),
				"StoppedError": reflect.TypeFor[backup.StoppedError](), "Summary": reflect.TypeFor[backup.Summary](),
			},
		},
		{
			dir: "throttle",
			funcs: map[string]func(){
				"NewLimiter":   func() { _, _ = throttle.NewLimiter(throttle.Config{PartitionRate: -1}) },
				"NewSimulator": func() { _, _ = throttle.NewSimulator(throttle.SimConfig{PartitionRate: -1}) },
			},
			types: map[string]reflect.Type{
				"Config": reflect.TypeFor[throttle.Config](), "ConfigError": reflect.TypeFor[throttle.ConfigError](), "Limiter": reflect.TypeFor[throttle.Limiter](),
				"SimConfig": reflect.TypeFor[throttle.SimConfig](), "SimStats": reflect.TypeFor[throttle.SimStats](),
				"Simulator": reflect.TypeFor[throttle.Simulator](), "Stats": reflect.TypeFor[throttle.Stats](),
			},
			working: map[string]reflect.Value{"Limiter": reflect.ValueOf(lim), "Simulator": reflect.ValueOf(sim)},
		},
		{
			dir:     "integration/cosmos",
			funcs:   map[string]func(){"New": func() { cosmos.New() }},
			types:   map[string]reflect.Type{"Profile": reflect.TypeFor[cosmos.Profile]()},
			working: map[string]reflect.Value{"Profile": reflect.ValueOf(cosmos.New())},
		},
	}
	sweepPackages(t, pkgs)
}
