// Command observability shows how tablekit's tables (and any queue or blob
// client a pattern uses) are observed with what the Azure SDK for Go already
// offers — nothing of tablekit's own to learn:
//
//   - logging: azcore's log listener (github.com/Azure/azure-sdk-for-go/sdk/azcore/log),
//     with LogOptions in the client options saying which headers and query
//     parameters may be written;
//   - tracing: OpenTelemetry through sdk/tracing/azotel, set as the client
//     options' TracingProvider, so every call and every HTTP try is a span;
//   - retries: the client options' RetryOptions (tablekit never retries an
//     HTTP request itself);
//   - cost: tablekit's storage-cost meter, one more per-retry policy.
//
// The options are given once, where package account builds the clients
// from the connection string, and every table, queue and container client
// inherits them:
//
//	acct, err := account.NewFromConnectionString(cs, &account.Options{
//		ClientOptions: azcore.ClientOptions{
//			Logging:         policy.LogOptions{AllowedHeaders: []string{"x-ms-client-request-id"}},
//			Retry:           policy.RetryOptions{MaxRetries: 4, RetryDelay: 200 * time.Millisecond},
//			TracingProvider: azotel.NewTracingProvider(tracerProvider, nil),
//		},
//		Meter: meter, // cost.NewMeter()
//	})
//	tables, err := acct.TableService()
//	emps, err := entity.NewTableFromService[Employee](tables, "Employees")
//
// It runs on the storage account the environment names and creates the
// table ObservedEmployees if it does not exist. It lives in a module of its
// own so that OpenTelemetry is a dependency of the example, not of
// tablekit:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	cd examples/observability && go run .
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azlog "github.com/Azure/azure-sdk-for-go/sdk/azcore/log"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/tracing/azotel"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Employees string // table
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Employees: "ObservedEmployees"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "observability example:", err)
		os.Exit(1)
	}
}

// Employee is the entity the example writes and reads.
type Employee struct {
	Department string `table:"PartitionKey,pk"`
	ID         string `table:"RowKey,rk"`
	ETag       string `table:",etag"`
	Name       string
}

// Observed is what one run saw: the log lines, the spans and the cost.
type Observed struct {
	Logs  []string
	Spans []string
	Cost  cost.Snapshot
}

// run observes a few calls on acct, in the resources names gives, and
// prints what was seen to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	obs, err := observe(ctx, acct, names)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "azcore log: %d lines, for example:\n", len(obs.Logs))
	for _, l := range obs.Logs[:min(3, len(obs.Logs))] {
		fmt.Fprintln(out, "  ", firstLine(l))
	}
	fmt.Fprintf(out, "OpenTelemetry spans (azotel): %s\n", strings.Join(obs.Spans, ", "))
	fmt.Fprintf(out, "storage cost: %v\n", obs.Cost)
	return nil
}

// observe builds a typed table whose client logs, traces, retries and meters
// through azcore's pipeline, and runs a few calls through it.
func observe(ctx context.Context, acct *account.Account, names Names) (Observed, error) {
	// Logging: azcore's listener is process-wide; a program sets it once.
	var mu sync.Mutex
	var logs []string
	azlog.SetEvents(azlog.EventRequest, azlog.EventResponse, azlog.EventRetryPolicy)
	azlog.SetListener(func(ev azlog.Event, msg string) {
		mu.Lock()
		logs = append(logs, string(ev)+": "+msg)
		mu.Unlock()
	})
	defer azlog.SetListener(nil)

	// Tracing: an OpenTelemetry tracer provider, here recording in memory.
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	// The account, with these options for all its clients. A service
	// gives them to account.NewFromConnectionString (or account.New) in
	// main, once.
	meter := cost.NewMeter()
	acct, err := acct.WithOptions(func(o *account.Options) {
		o.ClientOptions = azcore.ClientOptions{
			Logging:         policy.LogOptions{AllowedHeaders: []string{"x-ms-client-request-id"}},
			Retry:           policy.RetryOptions{MaxRetries: 4, RetryDelay: 200 * time.Millisecond, MaxRetryDelay: 2 * time.Second},
			TracingProvider: azotel.NewTracingProvider(tp, nil),
		}
		o.Meter = meter
	})
	if err != nil {
		return Observed{}, err
	}
	tables, err := acct.TableService()
	if err != nil {
		return Observed{}, err
	}
	emps, err := entity.NewTableFromService[Employee](tables, names.Employees)
	if err != nil {
		return Observed{}, err
	}
	if err := emps.Provision(ctx); err != nil { // the table, unless it exists
		return Observed{}, err
	}

	before := meter.Snapshot()
	e := &Employee{Department: "Sales", ID: "000123", Name: "Jonathan Jones"}
	if err := emps.Upsert(ctx, e, entity.Replace); err != nil {
		return Observed{}, err
	}
	if _, err := emps.Get(ctx, "Sales", "000123"); err != nil {
		return Observed{}, err
	}
	for _, err := range emps.Query(ctx, entity.Query{Filter: filter.PK("Sales")}) {
		if err != nil {
			return Observed{}, err
		}
	}
	used := meter.Snapshot().Sub(before)

	var spans []string
	for _, s := range recorder.Ended() {
		spans = append(spans, s.Name())
	}
	slices.Sort(spans)
	mu.Lock()
	defer mu.Unlock()
	return Observed{Logs: slices.Clone(logs), Spans: slices.Compact(spans), Cost: used}, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
