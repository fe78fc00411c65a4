package account

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/provision"
)

// Provisioner is an object that owns storage and creates it: a table, the
// queues and containers of a pattern. Provision creates what is missing
// and returns nil only when all of it exists; it is idempotent, so a
// program calls it at every start. Every tablekit type that owns storage
// is one — *entity.Table[T], *resolver.Table, *eventual.Processor, and
// the patterns' types (large, logtail, rotation, bloblog, denormalize,
// dataseries, wide, compound, bucket) — and QueueProvisioner and
// ContainerProvisioner make one of a raw client.
type Provisioner interface {
	Provision(ctx context.Context) error
}

// ErrBeingDeleted is matched by the error of a Provision that gave up, when
// ctx ended, on a name the service was still deleting (409
// TableBeingDeleted, QueueBeingDeleted or ContainerBeingDeleted: about 40
// seconds after a delete on Azure Storage). It is entity.ErrBeingDeleted:
// either one matches.
var ErrBeingDeleted = provision.ErrBeingDeleted

// provisionConcurrency is the most Provision calls Provision runs at once.
const provisionConcurrency = 4

// Provision provisions each of ps — at most four at once — and returns
// nil only when every one returned nil: every table, queue and container
// they own exists. It does not stop at a failure: the error joins
// (errors.Join) one *ProvisionError per Provisioner that failed, in the
// order given, each naming its place and type and wrapping its error, so
// errors.Is and errors.As reach each cause (entity.ErrUnauthorized,
// ErrBeingDeleted, ctx's error, …).
//
//	err := account.Provision(ctx, orders, processor, photos, account.ContainerProvisioner(archive))
//
// A nil entry (nil, or a nil pointer of a Provisioner type), or a
// QueueProvisioner or ContainerProvisioner of a nil client, is a
// *ConfigError matching ErrInvalid, before any request. No Provisioner
// at all is nil.
func Provision(ctx context.Context, ps ...Provisioner) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	for i, p := range ps {
		if reason := nilProvisioner(p); reason != "" {
			return &ConfigError{Field: FieldProvisioners, Reason: fmt.Sprintf("ps[%d] %s", i, reason)}
		}
	}
	errs := make([]error, len(ps))
	sem := make(chan struct{}, provisionConcurrency)
	var wg sync.WaitGroup
	for i, p := range ps {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := p.Provision(ctx); err != nil {
				errs[i] = &ProvisionError{Index: i, Type: typeName(p), Err: err}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// nilProvisioner says why p cannot be provisioned, or "".
func nilProvisioner(p Provisioner) string {
	switch q := p.(type) {
	case nil:
		return "is nil"
	case queueProvisioner:
		if q.q == nil {
			return "is a QueueProvisioner of a nil *azqueue.QueueClient"
		}
		return ""
	case containerProvisioner:
		if q.c == nil {
			return "is a ContainerProvisioner of a nil *container.Client"
		}
		return ""
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return "is a nil " + typeName(p)
	}
	return ""
}

// typeName is p's type without its type arguments and their package
// paths: "*entity.Table", "*eventual.Processor".
func typeName(p Provisioner) string {
	switch p.(type) {
	case queueProvisioner:
		return "account.QueueProvisioner"
	case containerProvisioner:
		return "account.ContainerProvisioner"
	}
	name := reflect.TypeOf(p).String()
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	return name
}

// ProvisionError is the failure of one Provisioner of Provision: the
// Index-th argument, of type Type ("*entity.Table", without type
// arguments), failed with Err, which names the resource.
type ProvisionError struct {
	Index int
	Type  string
	Err   error
}

func (e *ProvisionError) Error() string {
	if e == nil {
		return "account: provision: <nil>"
	}
	// The package's own errors say "account:" once.
	return fmt.Sprintf("account: provision: ps[%d] (%s): %s", e.Index, e.Type, strings.TrimPrefix(fmt.Sprint(e.Err), "account: "))
}

// Unwrap returns Err.
func (e *ProvisionError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// QueueProvisioner returns the Provisioner of a queue that no tablekit
// type owns: its Provision creates q unless it exists, and returns nil only
// when it exists — created now, found existing (also with other metadata),
// or found by the resend of a create whose reply was lost; while the
// service answers that the name is being deleted (409 QueueBeingDeleted)
// it asks again with backoff until ctx ends (an error matching
// ErrBeingDeleted then). Use eventual.Processor's own Provision for its
// queues.
func QueueProvisioner(q *azqueue.QueueClient) Provisioner { return queueProvisioner{q} }

type queueProvisioner struct{ q *azqueue.QueueClient }

func (p queueProvisioner) Provision(ctx context.Context) error {
	if p.q == nil {
		return &ConfigError{Field: FieldProvisioners, Reason: "a QueueProvisioner of a nil *azqueue.QueueClient"}
	}
	if err := provision.Queue(ctx, p.q); err != nil {
		return fmt.Errorf("account: %w", err)
	}
	return nil
}

// ContainerProvisioner returns the Provisioner of a blob container that
// no tablekit type owns (the destination of backup.ExportBlob, say): its
// Provision creates c, with no public access, unless it exists, and
// returns nil only when it exists — created now, found existing, or found
// by the resend of a create whose reply was lost; while the service
// answers that the name is being deleted (409 ContainerBeingDeleted) it
// asks again with backoff until ctx ends (an error matching
// ErrBeingDeleted then).
func ContainerProvisioner(c *container.Client) Provisioner { return containerProvisioner{c} }

type containerProvisioner struct{ c *container.Client }

func (p containerProvisioner) Provision(ctx context.Context) error {
	if p.c == nil {
		return &ConfigError{Field: FieldProvisioners, Reason: "a ContainerProvisioner of a nil *container.Client"}
	}
	if err := provision.Container(ctx, p.c); err != nil {
		return fmt.Errorf("account: %w", err)
	}
	return nil
}
