package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/account"
)

// Env is the account a tour runs on: its clients, built by package
// account, and scratch resources for the demo.
type Env struct {
	// Account built the clients below.
	Account *account.Account
	// Service clients; QueueService and BlobService are nil for an
	// account without those services (Cosmos DB for Table).
	TableService *aztables.ServiceClient
	QueueService *azqueue.ServiceClient
	BlobService  *azblob.Client
	// TableEndpoint is the table service URL, ending with '/'.
	TableEndpoint string
	// ConnectionString is the account's connection string as given, ""
	// when it was reached another way; the steps that sign SAS tokens
	// with the account key need it.
	ConnectionString string
	// Live reports a real account, not the emulator (whose development
	// account does not enforce everything a real one does, such as a
	// SAS's key range).
	Live bool

	err error // why the clients of a view could not be built
}

// New returns the Env of acct. connectionString is acct's connection
// string, "" when there is none.
func New(acct *account.Account, connectionString string) *Env {
	e := &Env{Account: acct, ConnectionString: connectionString}
	e.fill()
	return e
}

func (e *Env) fill() {
	if e.Account == nil {
		e.err = errors.New("demo: nil *account.Account")
		return
	}
	e.TableEndpoint = e.Account.Endpoints().Table
	e.Live = e.Account.Name() != account.DevelopmentAccountName
	e.TableService, e.err = e.Account.TableService()
	e.QueueService, _ = e.Account.QueueService()
	e.BlobService, _ = e.Account.BlobService()
}

// With returns a view of the same account whose clients also run
// policies, per retry: a cost meter, or a Killer. Adding policies cannot
// make building the clients fail; were it to, the view's Scratch methods
// would return why.
func (e *Env) With(policies ...policy.Policy) *Env {
	v := &Env{ConnectionString: e.ConnectionString}
	v.Account, v.err = e.Account.WithOptions(func(o *account.Options) {
		o.ClientOptions.PerRetryPolicies = append(o.ClientOptions.PerRetryPolicies, policies...)
	})
	if v.err == nil {
		v.fill()
	}
	return v
}

// ClientOptions returns the options of the Env's clients, for a table
// client the account does not build (from a SAS URL).
func (e *Env) ClientOptions() *aztables.ClientOptions {
	return &aztables.ClientOptions{ClientOptions: e.Account.ClientOptions()}
}

// ScratchTable creates a uniquely named table, named after hint, and
// returns a client for it and a function that deletes it (with a fresh
// context, so that it works after ctx ends; a table already gone is not an
// error).
func (e *Env) ScratchTable(ctx context.Context, hint string) (*aztables.Client, func() error, error) {
	if e.err != nil {
		return nil, nil, e.err
	}
	name, err := uniqueName(hint)
	if err != nil {
		return nil, nil, err
	}
	if _, err := e.TableService.CreateTable(ctx, name, nil); err != nil && !isConflict(err) {
		return nil, nil, fmt.Errorf("demo: creating table %s: %w", name, err)
	}
	drop := func() error {
		if _, err := e.TableService.DeleteTable(context.WithoutCancel(ctx), name, nil); err != nil && !isNotFound(err) {
			return fmt.Errorf("demo: deleting table %s: %w", name, err)
		}
		return nil
	}
	return e.TableService.NewClient(name), drop, nil
}

// ScratchQueue creates a uniquely named queue and returns a client for it
// and a function that deletes it.
func (e *Env) ScratchQueue(ctx context.Context, hint string) (*azqueue.QueueClient, func() error, error) {
	if e.err != nil {
		return nil, nil, e.err
	}
	name, err := uniqueName(hint)
	if err != nil {
		return nil, nil, err
	}
	q, err := e.Account.Queue(name)
	if err != nil {
		return nil, nil, err
	}
	if _, err := q.Create(ctx, nil); err != nil && !isConflict(err) {
		return nil, nil, fmt.Errorf("demo: creating queue %s: %w", name, err)
	}
	drop := func() error {
		if _, err := q.Delete(context.WithoutCancel(ctx), nil); err != nil && !isNotFound(err) {
			return fmt.Errorf("demo: deleting queue %s: %w", name, err)
		}
		return nil
	}
	return q, drop, nil
}

// ScratchContainer creates a uniquely named blob container and returns a
// client for it and a function that deletes it.
func (e *Env) ScratchContainer(ctx context.Context, hint string) (*container.Client, func() error, error) {
	if e.err != nil {
		return nil, nil, e.err
	}
	name, err := uniqueName(hint)
	if err != nil {
		return nil, nil, err
	}
	c, err := e.Account.Container(name)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.Create(ctx, nil); err != nil && !isConflict(err) {
		return nil, nil, fmt.Errorf("demo: creating container %s: %w", name, err)
	}
	drop := func() error {
		if _, err := c.Delete(context.WithoutCancel(ctx), nil); err != nil && !isNotFound(err) {
			return fmt.Errorf("demo: deleting container %s: %w", name, err)
		}
		return nil
	}
	return c, drop, nil
}

// uniqueName returns "tk", up to 16 lower-case letters and digits of hint
// and 16 random hex digits: a valid table, queue and container name.
func uniqueName(hint string) (string, error) {
	var b strings.Builder
	b.WriteString("tk")
	n := 0
	for _, r := range strings.ToLower(hint) {
		if n == 16 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			n++
		}
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	b.WriteString(hex.EncodeToString(rnd[:]))
	return b.String(), nil
}

// isConflict reports a create refused because the resource exists. The
// names are random, so it exists because this create's first try did, its
// reply lost and azcore's resend refused: the create is done.
func isConflict(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusConflict
}

func isNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}
