package eventual_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// TestBadInputIsATypedErrorBeforeAnyRequest passes each public entry
// point an argument that cannot work — a nil processor, container, table
// or queue service, a nil outbox, an empty blob name or poison message id, a negative
// ReplayOptions.Max, a PartitionKey or message id the service would never
// store given to SweepMarkers, Relay, Unsendable or Revive — with clients of an address where nothing listens:
// each answers a *ConfigError (matching entity.ErrInvalid), never a panic,
// and never the failure of a request it should not have sent.
func TestBadInputIsATypedErrorBeforeAnyRequest(t *testing.T) {
	ctx := context.Background()
	noRetry := policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}
	svc, err := azqueue.NewServiceClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/", &azqueue.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := container.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/c", &container.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	p, err := eventual.New(eventual.QueuesOf(svc, "work"), blobs, eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := entity.NewTable[Employee](env.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	// An outbox over a table at the same dead address.
	deadTables, err := aztables.NewServiceClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/", &aztables.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	deadTable, err := entity.NewTable[Employee](deadTables.NewClient("dead"))
	if err != nil {
		t.Fatal(err)
	}
	ob, err := eventual.NewOutbox(p, deadTable, eventual.OutboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var nob *eventual.Outbox[Employee]
	var np *eventual.Processor
	var nt *entity.Table[Employee]
	noop := func(context.Context, ArchiveEmployee) error { return nil }
	msg, err := archiveKind.Message(ArchiveEmployee{Department: "Sales", ID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func() error{
		"Handle nil processor":        func() error { return eventual.Handle(np, archiveKind, noop, eventual.HandleOptions{}) },
		"Enqueue nil processor":       func() error { return np.Enqueue(ctx, msg) },
		"CheckSendable nil processor": func() error { return np.CheckSendable(msg) },
		"CreateQueues nil processor":  func() error { return np.CreateQueues(ctx) },
		"Run nil processor":           func() error { return np.Run(ctx) },
		"Drain nil processor":         func() error { _, err := np.Drain(ctx); return err },
		"Replay nil processor":        func() error { _, err := np.Replay(ctx, eventual.ReplayOptions{}); return err },
		"PoisonRecord nil processor":  func() error { _, err := np.PoisonRecord(ctx, "work", "m1"); return err },
		"PoisonRecord empty id":       func() error { _, err := p.PoisonRecord(ctx, "work", ""); return err },
		"PoisonRecord empty queue":    func() error { _, err := p.PoisonRecord(ctx, "", "m1"); return err },
		"Replay negative Max":         func() error { _, err := p.Replay(ctx, eventual.ReplayOptions{Max: -1}); return err },
		"QueuesOf nil service": func() error {
			_, err := eventual.New(eventual.QueuesOf(nil, "work"), nil, eventual.Config{})
			return err
		},
		"PutBlob nil container":      func() error { return eventual.PutBlob(ctx, nil, "x", []byte("1")) },
		"PutBlob empty name":         func() error { return eventual.PutBlob(ctx, blobs, "", []byte("1")) },
		"PutBlobIfAbsent nil":        func() error { _, err := eventual.PutBlobIfAbsent(ctx, nil, "x", []byte("1")); return err },
		"PutBlobIfAbsent empty name": func() error { _, err := eventual.PutBlobIfAbsent(ctx, blobs, "", []byte("1")); return err },
		"DeleteBlob nil container":   func() error { return eventual.DeleteBlob(ctx, nil, "x") },
		"DeleteBlob empty name":      func() error { return eventual.DeleteBlob(ctx, blobs, "") },
		"Move nil target":            func() error { return eventual.Move(ctx, tbl, nt, "Sales", "1", nil) },
		"Move nil source":            func() error { return eventual.Move(ctx, nt, tbl, "Sales", "1", nil) },
		"SweepMarkers nil table":     func() error { _, err := eventual.SweepMarkers(ctx, nt, time.Now()); return err },
		"Insert nil table":           func() error { return eventual.Insert(ctx, nt, &Employee{PartitionKey: "a", RowKey: "b"}) },
		"Upsert nil table":           func() error { return eventual.Upsert(ctx, nt, &Employee{PartitionKey: "a", RowKey: "b"}) },
		"Delete nil table":           func() error { return eventual.Delete(ctx, nt, "a", "b") },
		"SweepMarkers bad partition": func() error { _, err := eventual.SweepMarkers(ctx, deadTable, time.Now(), "ok", "a/b"); return err },
		"Relay bad partition":        func() error { _, err := ob.Relay(ctx, "a#b"); return err },
		"Unsendable bad partition": func() error {
			for _, err := range ob.Unsendable(ctx, "a?b") {
				return err
			}
			return nil
		},
		"Revive bad partition": func() error { return ob.Revive(ctx, "a/b", "x") },
		"Submit nil outbox":    func() error { return nob.Submit(ctx, "Sales", nil, msg) },
		"Relay nil outbox":     func() error { _, err := nob.Relay(ctx); return err },
		"Revive nil outbox":    func() error { return nob.Revive(ctx, "Sales", "x") },
		"Unsendable nil outbox": func() error {
			for _, err := range nob.Unsendable(ctx) {
				return err
			}
			return nil
		},
		"Revive empty id": func() error { return ob.Revive(ctx, "Sales", "") },
		"Revive bad id":   func() error { return ob.Revive(ctx, "Sales", "a\\b") },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				err = f()
			}()
			var ce *eventual.ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, entity.ErrInvalid) {
				t.Fatalf("err = %v (%T), want a *eventual.ConfigError matching entity.ErrInvalid", err, err)
			}
		})
	}
	// The move's source was never read and nothing was written.
	if rks := rowKeys(t, tbl); len(rks) != 0 {
		t.Errorf("table holds %v, want nothing", rks)
	}
}
