package account_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/bloblog"
	"github.com/tablekit/tablekit/patterns/bucket"
	"github.com/tablekit/tablekit/patterns/compound"
	"github.com/tablekit/tablekit/patterns/dataseries"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
	"github.com/tablekit/tablekit/patterns/logtail"
	"github.com/tablekit/tablekit/patterns/rotation"
	"github.com/tablekit/tablekit/patterns/wide"
	"github.com/tablekit/tablekit/resolver"
)

// Entity types of the patterns provisioned.
type (
	sample struct {
		PartitionKey, RowKey string
		At                   time.Time
		Value                float64
	}
	photo struct {
		PartitionKey, RowKey string
		ETag                 string `table:",etag"`
		Data                 []byte `table:",blob"`
	}
	dept struct {
		PartitionKey, RowKey string
		ETag                 string `table:",etag"`
		ManagerID            string
		ManagerName          string `table:",omitempty"`
	}
	emp struct {
		PartitionKey, RowKey string
		ETag                 string `table:",etag"`
		Name                 string
	}
)

// kind is what a resource is.
type kind string

const (
	kindTable     kind = "table"
	kindQueue     kind = "queue"
	kindContainer kind = "container"
)

// resource is a table, queue or container a test expects to exist.
type resource struct {
	kind kind
	name string
}

// createOf returns the resource a request creates, or false: a table's
// POST …/Tables (its name in the body), a container's PUT
// …/NAME?restype=container, a queue's PUT …/NAME.
func createOf(req *policy.Request) (resource, bool) {
	raw := req.Raw()
	q := raw.URL.Query()
	switch {
	case raw.Method == http.MethodPost && path.Base(raw.URL.Path) == "Tables" && req.Body() != nil:
		b, err := io.ReadAll(req.Body())
		if rerr := req.RewindBody(); err != nil || rerr != nil {
			return resource{}, false
		}
		var body struct{ TableName string }
		if json.Unmarshal(b, &body) != nil {
			return resource{}, false
		}
		return resource{kindTable, strings.ToLower(body.TableName)}, true
	case raw.Method != http.MethodPut || q.Has("comp"):
	case q.Get("restype") == "container":
		return resource{kindContainer, path.Base(raw.URL.Path)}, true
	case !q.Has("restype") && raw.Header.Get("x-ms-blob-type") == "" && strings.Count(strings.Trim(raw.URL.Path, "/"), "/") == 1:
		return resource{kindQueue, path.Base(raw.URL.Path)}, true
	}
	return resource{}, false
}

// loseFirstCreate is a pipeline policy that loses the reply of the first
// create of each resource: the service creates it, azcore resends the
// create, which meets what the first try made.
type loseFirstCreate struct {
	mu   sync.Mutex
	seen map[resource]bool
	lost []resource
}

func (p *loseFirstCreate) Do(req *policy.Request) (*http.Response, error) {
	r, ok := createOf(req)
	if !ok {
		return req.Next()
	}
	p.mu.Lock()
	first := !p.seen[r]
	p.seen[r] = true
	p.mu.Unlock()
	resp, err := req.Next()
	if err != nil || !first {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	p.mu.Lock()
	p.lost = append(p.lost, r)
	p.mu.Unlock()
	return nil, fmt.Errorf("reply to the create of %s %s lost", r.kind, r.name)
}

func (p *loseFirstCreate) lostOnce() []resource {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.lost)
}

// exists reads, with the environment's raw clients, whether r exists.
func exists(t *testing.T, r resource) bool {
	t.Helper()
	ctx := context.Background()
	var err error
	switch r.kind {
	case kindTable:
		top := int32(1)
		_, err = env.TableService.NewClient(r.name).NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: &top}).NextPage(ctx)
	case kindQueue:
		_, err = env.QueueService.NewQueueClient(r.name).GetProperties(ctx, nil)
	case kindContainer:
		_, err = env.BlobService.ServiceClient().NewContainerClient(r.name).GetProperties(ctx, nil)
	}
	var re *azcore.ResponseError
	switch {
	case err == nil:
		return true
	case errors.As(err, &re) && re.StatusCode == http.StatusNotFound:
		return false
	}
	t.Fatalf("sample %s %s: %v", r.kind, r.name, err)
	return false
}

// names hands out fresh names, deleted when the test ends.
type names struct {
	t *testing.T
}

func (n names) table() string { return strings.ToLower(env.TableName(n.t)) }

func (n names) queue() string {
	name := env.QueueName(n.t)
	n.t.Cleanup(func() {
		for _, q := range []string{name, name + eventual.PoisonSuffix} {
			_, _ = env.QueueService.DeleteQueue(context.Background(), q, nil)
		}
	})
	return name
}

func (n names) container() string {
	name := env.ContainerName(n.t)
	n.t.Cleanup(func() { _, _ = env.BlobService.DeleteContainer(context.Background(), name, nil) })
	return name
}

// everyPattern builds, on acct, one of every tablekit type that owns
// storage, each on fresh names, and returns them with the resources they
// own.
func everyPattern(t *testing.T, acct *account.Account) ([]account.Provisioner, []resource) {
	t.Helper()
	n := names{t}
	tables, err := acct.TableService()
	if err != nil {
		t.Fatal(err)
	}
	queues, err := acct.QueueService()
	if err != nil {
		t.Fatal(err)
	}
	var ps []account.Provisioner
	var want []resource
	must := func(p account.Provisioner, err error, owns ...resource) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
		want = append(want, owns...)
	}
	table := func() (string, resource) { name := n.table(); return name, resource{kindTable, name} }
	container := func() (string, resource) { name := n.container(); return name, resource{kindContainer, name} }
	queue := func() (string, []resource) {
		name := n.queue()
		return name, []resource{{kindQueue, name}, {kindQueue, name + eventual.PoisonSuffix}}
	}

	// entity and resolver.
	name, r := table()
	orders, err := entity.NewTableFromService[Order](tables, name)
	must(orders, err, r)
	name, r = table()
	schema, err := resolver.NewSchema(resolver.Config{}, resolver.Register[emp]("Employee.v1"))
	if err != nil {
		t.Fatal(err)
	}
	hr, err := resolver.NewTable(tables.NewClient(name), schema)
	must(hr, err, r)

	// eventual, with a claim-check container.
	qname, qs := queue()
	cname, c := container()
	box, err := acct.Container(cname)
	if err != nil {
		t.Fatal(err)
	}
	proc, err := eventual.New(eventual.QueuesOf(queues, qname), box, eventual.Config{})
	must(proc, err, append(qs, c)...)

	// large, with its own cleanup processor.
	name, r = table()
	photos, err := entity.NewTableFromService[photo](tables, name)
	if err != nil {
		t.Fatal(err)
	}
	cname, c = container()
	blobs, err := acct.Container(cname)
	if err != nil {
		t.Fatal(err)
	}
	qname, qs = queue()
	cleanup, err := eventual.New(eventual.QueuesOf(queues, qname), nil, eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}
	big, err := large.New(photos, blobs, large.Config{Processor: cleanup})
	must(big, err, append(qs, r, c)...)

	// denormalize: sources and targets in two tables, fanned out.
	sname, sr := table()
	tname, tr := table()
	sources, err := entity.NewTableFromService[emp](tables, sname)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := entity.NewTableFromService[dept](tables, tname)
	if err != nil {
		t.Fatal(err)
	}
	qname, qs = queue()
	fan, err := eventual.New(eventual.QueuesOf(queues, qname), nil, eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}
	copies, err := denormalize.New(targets, sources, denormalize.Config{Processor: fan}, denormalize.Relation[dept, emp]{
		Name:   "manager",
		Fields: []denormalize.Field{{From: "Name", To: "ManagerName"}},
		Source: func(d *dept) (denormalize.Key, bool) {
			return denormalize.Key{PartitionKey: "emps", RowKey: d.ManagerID}, d.ManagerID != ""
		},
		Targets: func(e *emp) denormalize.Targets {
			return denormalize.Targets{Ranges: []denormalize.Range{{PartitionKey: "depts"}}}
		},
		Placement: denormalize.OtherPartition,
	})
	must(copies, err, append(qs, sr, tr)...)

	// One table each.
	name, r = table()
	logs, err := entity.NewTableFromService[sample](tables, name)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := logtail.New(logs, logtail.Config{})
	must(tail, err, r)
	name, r = table()
	views, err := entity.NewTableFromService[sample](tables, name)
	if err != nil {
		t.Fatal(err)
	}
	spread, err := bucket.New(views, bucket.Config{})
	must(spread, err, r)
	name, r = table()
	counts, err := entity.NewTableFromService[entity.DynamicEntity](tables, name)
	if err != nil {
		t.Fatal(err)
	}
	series, err := dataseries.New(counts, dataseries.Config{})
	must(series, err, r)
	name, r = table()
	rows, err := entity.NewTableFromService[sample](tables, name)
	if err != nil {
		t.Fatal(err)
	}
	wideRows, err := wide.New(rows, wide.Config{})
	must(wideRows, err, r)
	name, r = table()
	keyed, err := entity.NewTableFromService[sample](tables, name)
	if err != nil {
		t.Fatal(err)
	}
	relation, err := compound.New(keyed, compound.Config[string, time.Time]{Parent: compound.Text(), Child: compound.NewestFirst()})
	must(relation, err, r)

	// rotation: its catalog (period tables come with writes).
	name, r = table()
	rot, err := rotation.New(tables, tables.NewClient(name), rotation.Config[sample]{
		Name: "r" + name[len(name)-8:], Time: func(e *sample) time.Time { return e.At },
	})
	must(rot, err, r)

	// bloblog's container.
	cname, c = container()
	logBox, err := acct.Container(cname)
	if err != nil {
		t.Fatal(err)
	}
	logger, err := bloblog.New(t.Context(), logBox, bloblog.Config{Service: "provision"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logger.Close() })
	must(logger, nil, c)

	// Raw clients.
	qname = n.queue()
	work, err := acct.Queue(qname)
	must(account.QueueProvisioner(work), err, resource{kindQueue, qname})
	cname, c = container()
	archive, err := acct.Container(cname)
	must(account.ContainerProvisioner(archive), err, c)
	return ps, want
}

// account.Provision over every tablekit type that owns storage, with the
// reply of the first create of every resource lost: it reports success,
// and every table, queue and container exists (read with raw clients).
// Provisioning again, all at once and each alone, finds them and changes
// nothing they hold.
func TestProvisionEveryPattern(t *testing.T) {
	ctx := t.Context()
	lose := &loseFirstCreate{seen: map[resource]bool{}}
	acct := env.With(lose).Account()
	ps, want := everyPattern(t, acct)
	for _, r := range want {
		if exists(t, r) {
			t.Fatalf("%s %s exists before Provision", r.kind, r.name)
		}
	}

	start := time.Now()
	if err := account.Provision(ctx, ps...); err != nil {
		t.Fatalf("Provision with lost replies: %v", err)
	}
	t.Logf("%d provisioners, %d resources: %v", len(ps), len(want), time.Since(start).Round(time.Millisecond))
	lost := lose.lostOnce()
	for _, r := range want {
		if !exists(t, r) {
			t.Errorf("%s %s: Provision reported success and it does not exist", r.kind, r.name)
		}
		if !slices.Contains(lost, r) {
			t.Errorf("%s %s: no create reply was lost", r.kind, r.name)
		}
	}
	if len(lost) != len(want) {
		t.Errorf("%d replies lost for %d resources: %v", len(lost), len(want), lost)
	}

	// Something stored in a table, a queue and a container survives
	// provisioning again.
	orders := ps[0].(*entity.Table[Order])
	if err := orders.Insert(ctx, &Order{Customer: "c", ID: "1", Amount: 1}); err != nil {
		t.Fatal(err)
	}
	var queue, box string
	for _, r := range want {
		switch {
		case r.kind == kindQueue && queue == "":
			queue = r.name
		case r.kind == kindContainer && box == "":
			box = r.name
		}
	}
	if _, err := env.QueueService.NewQueueClient(queue).EnqueueMessage(ctx, "kept", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := env.BlobService.UploadBuffer(ctx, box, "kept", []byte("kept"), nil); err != nil {
		t.Fatal(err)
	}
	if err := account.Provision(ctx, ps...); err != nil {
		t.Fatalf("second Provision: %v", err)
	}
	for i, p := range ps {
		if err := p.Provision(ctx); err != nil {
			t.Errorf("ps[%d] (%T) provisioned alone: %v", i, p, err)
		}
	}
	if _, err := env.TableService.NewClient(orders.Name()).GetEntity(ctx, "c", "1", nil); err != nil {
		t.Errorf("the order: %v", err)
	}
	if props, err := env.QueueService.NewQueueClient(queue).GetProperties(ctx, nil); err != nil || props.ApproximateMessagesCount == nil || *props.ApproximateMessagesCount != 1 {
		t.Errorf("the queue's message: %v", err)
	}
	if _, err := env.BlobService.ServiceClient().NewContainerClient(box).NewBlobClient("kept").GetProperties(ctx, nil); err != nil {
		t.Errorf("the blob: %v", err)
	}
}

// A queue and a container being deleted (409 QueueBeingDeleted,
// ContainerBeingDeleted, which faults.Deleting answers as the service
// does): Provision waits until the names are free and they exist; when
// ctx ends first, its error matches ErrBeingDeleted (account's and
// entity's) and ctx's error, names the Provisioner, and nothing was
// created.
func TestProvisionWhileBeingDeleted(t *testing.T) {
	ctx := t.Context()
	d := faults.NewDeleting()
	acct := env.With(d).Account()
	queues, err := acct.QueueService()
	if err != nil {
		t.Fatal(err)
	}
	n := names{t}

	t.Run("freed", func(t *testing.T) {
		qname, cname := n.queue(), n.container()
		if !env.Live {
			// Real deletes first, which Azurite finishes at once.
			if _, err := env.QueueService.CreateQueue(ctx, qname, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := env.QueueService.DeleteQueue(ctx, qname, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := env.BlobService.CreateContainer(ctx, cname, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := env.BlobService.DeleteContainer(ctx, cname, nil); err != nil {
				t.Fatal(err)
			}
		}
		proc, err := eventual.New(eventual.QueuesOf(queues, qname), nil, eventual.Config{})
		if err != nil {
			t.Fatal(err)
		}
		box, err := acct.Container(cname)
		if err != nil {
			t.Fatal(err)
		}
		d.Hold(faults.Queue, qname, time.Second)
		d.Hold(faults.Container, cname, 1500*time.Millisecond)
		before := d.Refused()
		start := time.Now()
		if err := account.Provision(ctx, proc, account.ContainerProvisioner(box)); err != nil {
			t.Fatalf("Provision of names being deleted for 1 s: %v", err)
		}
		if took := time.Since(start); took < 1500*time.Millisecond {
			t.Errorf("Provision returned after %v, before the names were free", took)
		}
		if d.Refused()-before < 2 {
			t.Errorf("refused %d creates, want at least 2", d.Refused()-before)
		}
		for _, r := range []resource{{kindQueue, qname}, {kindQueue, qname + eventual.PoisonSuffix}, {kindContainer, cname}} {
			if !exists(t, r) {
				t.Errorf("%s %s: Provision reported success and it does not exist", r.kind, r.name)
			}
		}
	})

	t.Run("ctx ends first", func(t *testing.T) {
		qname, cname := n.queue(), n.container()
		work, err := acct.Queue(qname)
		if err != nil {
			t.Fatal(err)
		}
		big, err := acct.Container(cname)
		if err != nil {
			t.Fatal(err)
		}
		fine := n.container()
		other, err := acct.Container(fine)
		if err != nil {
			t.Fatal(err)
		}
		d.Hold(faults.Queue, qname, time.Minute)
		d.Hold(faults.Container, cname, time.Minute)
		defer d.Hold(faults.Queue, qname, 0)
		defer d.Hold(faults.Container, cname, 0)
		cctx, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
		defer cancel()
		err = account.Provision(cctx, account.QueueProvisioner(work), account.ContainerProvisioner(other), account.ContainerProvisioner(big))
		for _, target := range []error{account.ErrBeingDeleted, entity.ErrBeingDeleted, context.DeadlineExceeded} {
			if !errors.Is(err, target) {
				t.Errorf("Provision while the names stay deleted: %v, want it to match %v", err, target)
			}
		}
		var each []*account.ProvisionError
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var pe *account.ProvisionError
			if errors.As(e, &pe) {
				each = append(each, pe)
			}
		}
		if len(each) != 2 || each[0].Index != 0 || each[1].Index != 2 || each[0].Type != "account.QueueProvisioner" {
			t.Errorf("the failures: %v", err)
		}
		if msg := each[0].Error(); !strings.HasPrefix(msg, `account: provision: ps[0] (account.QueueProvisioner): queue "`+qname+`" is being deleted`) || strings.Contains(msg, "\n") {
			t.Errorf("message %q", msg)
		}
		if len(each) == 2 && !bloberror.HasCode(each[1], bloberror.ContainerBeingDeleted) {
			t.Errorf("the container's last answer is not reachable: %v", each[1])
		}
		if exists(t, resource{kindQueue, qname}) || exists(t, resource{kindContainer, cname}) {
			t.Error("created while its name was being deleted")
		}
		if !exists(t, resource{kindContainer, fine}) {
			t.Error("the container whose name was free was not created")
		}
	})
}

// counting counts the requests that reach the transport.
type counting struct{ n atomic.Int64 }

func (c *counting) Do(req *policy.Request) (*http.Response, error) {
	c.n.Add(1)
	return req.Next()
}

// Nil entries are refused before any request, with a *ConfigError
// matching ErrInvalid and entity.ErrInvalid that names the entry.
func TestProvisionBadInput(t *testing.T) {
	ctx := t.Context()
	c := &counting{}
	acct := env.With(c).Account()
	tables, err := acct.TableService()
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	orders, err := entity.NewTableFromService[Order](tables, name)
	if err != nil {
		t.Fatal(err)
	}
	var nilTable *entity.Table[Order]
	var nilProc *eventual.Processor
	for i, ps := range [][]account.Provisioner{
		{orders, nil},
		{orders, nilTable},
		{nilProc, orders},
		{orders, account.QueueProvisioner(nil)},
		{account.ContainerProvisioner(nil), orders},
	} {
		err := account.Provision(ctx, ps...)
		var ce *account.ConfigError
		if !errors.Is(err, account.ErrInvalid) || !errors.Is(err, entity.ErrInvalid) || !errors.As(err, &ce) || ce.Field != account.FieldProvisioners {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		if !strings.Contains(err.Error(), "ps[") {
			t.Errorf("case %d: %q names no entry", i, err)
		}
	}
	if n := c.n.Load(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	if exists(t, resource{kindTable, strings.ToLower(name)}) {
		t.Error("the valid entry was provisioned")
	}
	for _, p := range []account.Provisioner{account.QueueProvisioner(nil), account.ContainerProvisioner(nil)} {
		if err := p.Provision(ctx); !errors.Is(err, account.ErrInvalid) {
			t.Errorf("%T alone: %v", p, err)
		}
	}
	if err := account.Provision(ctx); err != nil {
		t.Errorf("no Provisioner: %v", err)
	}
	// Each pattern's nil value is refused by its own Provision, too.
	for _, p := range []account.Provisioner{
		(*resolver.Table)(nil), (*eventual.Processor)(nil), (*large.Table[photo])(nil),
		(*denormalize.Copies[dept, emp])(nil), (*logtail.Log[sample])(nil), (*bucket.Spread[sample])(nil),
		(*dataseries.Series)(nil), (*wide.Table[sample])(nil), (*compound.Relation[sample, string, time.Time])(nil),
		(*rotation.Rotation[sample])(nil), (*bloblog.Logger)(nil),
	} {
		if err := p.Provision(ctx); !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%T(nil).Provision: %v", p, err)
		}
	}
}

// A Provisioner that fails does not keep the others from being
// provisioned, and its error names it.
func TestProvisionJoinsFailures(t *testing.T) {
	ctx := t.Context()
	acct, err := env.Account().WithOptions(func(o *account.Options) { o.ClientOptions.Retry.MaxRetries = -1 })
	if err != nil {
		t.Fatal(err)
	}
	svc, err := acct.QueueService()
	if err != nil {
		t.Fatal(err)
	}
	good := names{t}.queue()
	// A queue of a name the service refuses (upper case), behind the
	// account's name check.
	bad := svc.NewQueueClient("Bad-" + good)
	err = account.Provision(ctx, account.QueueProvisioner(bad), account.QueueProvisioner(svc.NewQueueClient(good)))
	var pe *account.ProvisionError
	if !errors.As(err, &pe) || pe.Index != 0 || !strings.Contains(err.Error(), "400") {
		t.Fatalf("Provision with a bad queue name: %v", err)
	}
	if !exists(t, resource{kindQueue, good}) {
		t.Error("the good queue was not provisioned")
	}
}
