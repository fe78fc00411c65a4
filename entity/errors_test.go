package entity_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
)

// oneLine fails t unless err's text is one line starting with want.
func oneLine(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one starting %q", want)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") || strings.Contains(msg, ": entity: ") || strings.Contains(msg, "(entity: ") {
		t.Errorf("error %q: want one line starting %q, naming the package once", msg, want)
	}
}

// counter is a per-retry policy that counts tries.
type counter struct{ n atomic.Int64 }

func (c *counter) Do(req *policy.Request) (*http.Response, error) {
	c.n.Add(1)
	return req.Next()
}

// shortRetries makes azcore give up quickly: 3 tries, 1 ms apart.
func shortRetries(o *aztables.ClientOptions, c *counter) *aztables.ClientOptions {
	o.Retry = policy.RetryOptions{MaxRetries: 2, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond, TryTimeout: 5 * time.Second}
	o.PerRetryPolicies = append(o.PerRetryPolicies, c)
	return o
}

// TestUnauthorizedWrongKey: a client signing with a wrong account key is
// refused by the service, and every call says so with ErrUnauthorized, in
// one line naming the table; the HTTP exchange stays reachable.
func TestUnauthorizedWrongKey(t *testing.T) {
	t.Parallel()
	if env.ConnectionString == "" {
		t.Skip("the account is used through a Microsoft Entra credential: no key to get wrong")
	}
	ctx := context.Background()
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(ctx, name, nil); err != nil {
		t.Fatal(err)
	}
	wrong := base64.StdEncoding.EncodeToString([]byte("not the key of this account, 64 bytes long, to look like one...."))
	cred, err := aztables.NewSharedKeyCredential(accountName(t), wrong)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := aztables.NewServiceClientWithSharedKey(env.TableEndpoint, cred, entity.ClientOptions(env.NoRetryClientOptions()))
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := entity.NewTableFromService[Person](svc, name)
	if err != nil {
		t.Fatal(err)
	}

	_, err = tbl.Get(ctx, "p", "r")
	if !errors.Is(err, entity.ErrUnauthorized) || errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("Get with a wrong key: %v; want ErrUnauthorized", err)
	}
	oneLine(t, err, "entity: Get on table "+name+` (PartitionKey "p", RowKey "r"): 403 `)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden {
		t.Errorf("Get with a wrong key: the *azcore.ResponseError is not reachable: %v", err)
	}

	err = tbl.Insert(ctx, &Person{Dept: "p", ID: "r", Name: "x"})
	if !errors.Is(err, entity.ErrUnauthorized) || errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Fatalf("Insert with a wrong key: %v; want ErrUnauthorized", err)
	}
	oneLine(t, err, "entity: Insert on table "+name+` (PartitionKey "p", RowKey "r"): 403 `)
}

// accountName is the account of env's connection string.
func accountName(t *testing.T) string {
	t.Helper()
	for part := range strings.SplitSeq(env.ConnectionString, ";") {
		if k, v, ok := strings.Cut(part, "="); ok && strings.EqualFold(k, "AccountName") {
			return v
		}
	}
	return integration.AzuriteAccountName
}

// closedEndpoint is a table endpoint on a loopback port nobody listens on.
func closedEndpoint(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/" + integration.AzuriteAccountName + "/"
}

// TestUnreachableClosedPort: a service that refuses every connection is
// ErrUnreachable once azcore's retries are spent, for reads and for
// writes (nothing reached it, so the outcome is known: not written), in
// one line that names the table and not the URL.
func TestUnreachableClosedPort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cred, err := aztables.NewSharedKeyCredential(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	var tries counter
	svc, err := aztables.NewServiceClientWithSharedKey(closedEndpoint(t), cred, entity.ClientOptions(shortRetries(&aztables.ClientOptions{}, &tries)))
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := entity.NewTableFromService[Person](svc, "Unreachable")
	if err != nil {
		t.Fatal(err)
	}

	_, err = tbl.Get(ctx, "p", "r")
	if !errors.Is(err, entity.ErrUnreachable) || errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("Get on a closed port: %v; want ErrUnreachable", err)
	}
	if n := tries.n.Load(); n != 3 {
		t.Errorf("Get on a closed port: %d tries; want 3 (azcore's retries)", n)
	}
	oneLine(t, err, `entity: Get on table Unreachable (PartitionKey "p", RowKey "r"): service unreachable: `)
	if strings.Contains(err.Error(), "http://") {
		t.Errorf("the error names the URL (a SAS URL would carry its signature): %v", err)
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		t.Errorf("Get on a closed port: the *net.OpError is not reachable: %v", err)
	}

	err = tbl.Insert(ctx, &Person{Dept: "p", ID: "r", Name: "x"})
	if !errors.Is(err, entity.ErrUnreachable) || errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Fatalf("Insert on a closed port: %v; want ErrUnreachable (nothing was sent)", err)
	}
	oneLine(t, err, `entity: Insert on table Unreachable (PartitionKey "p", RowKey "r"): service unreachable: `)

	for _, err := range tbl.Query(ctx, entity.Query{}) {
		if !errors.Is(err, entity.ErrUnreachable) {
			t.Errorf("Query on a closed port: %v; want ErrUnreachable", err)
		}
		oneLine(t, err, "entity: Query on table Unreachable: service unreachable: ")
		break
	}

	b := tbl.NewBatch()
	b.Insert(&Person{Dept: "p", ID: "r", Name: "x"})
	_, err = tbl.Submit(ctx, b)
	if !errors.Is(err, entity.ErrUnreachable) || errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Fatalf("Submit on a closed port: %v; want ErrUnreachable (nothing reached the service)", err)
	}
	oneLine(t, err, "entity: Submit on table Unreachable: service unreachable: ")

	err = tbl.CreateTable(ctx)
	if !errors.Is(err, entity.ErrUnreachable) {
		t.Errorf("CreateTable on a closed port: %v; want ErrUnreachable", err)
	}
}

// TestLostReplyIsNotUnreachable: a write whose every reply is reset after
// the service executed it got no answer either, but it may have been
// applied: that is ErrOutcomeUnknown, never ErrUnreachable. A read through
// the same proxy is ErrUnreachable.
func TestLostReplyIsNotUnreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var tries counter
	svc, proxy, name := proxiedService(t, 9, shortRetries(&aztables.ClientOptions{}, &tries))
	tbl, err := entity.NewTableFromService[Person](svc, name)
	if err != nil {
		t.Fatal(err)
	}
	proxy.SetResetRate(1)

	err = tbl.Insert(ctx, &Person{Dept: "p", ID: "r", Name: "x"})
	if !errors.Is(err, entity.ErrOutcomeUnknown) || errors.Is(err, entity.ErrUnreachable) {
		t.Fatalf("Insert whose replies are lost: %v; want ErrOutcomeUnknown and not ErrUnreachable", err)
	}
	oneLine(t, err, "entity: Insert on table "+name+` (PartitionKey "p", RowKey "r"): outcome unknown`)
	if proxy.Resets() == 0 {
		t.Fatal("the proxy reset no connection")
	}
	// It was applied: the table holds it.
	direct, err := entity.NewTableFromService[Person](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Get(ctx, "p", "r"); err != nil {
		t.Fatalf("the insert whose replies were lost is not stored: %v", err)
	}

	_, err = tbl.Get(ctx, "p", "r")
	if !errors.Is(err, entity.ErrUnreachable) {
		t.Errorf("Get whose replies are lost: %v; want ErrUnreachable", err)
	}
}

// TestDeleteTableMissing: deleting a table that does not exist is
// ErrTableNotFound, not the missing entity's ErrNotFound.
func TestDeleteTableMissing(t *testing.T) {
	t.Parallel()
	name := env.TableName(t)
	tbl, err := entity.NewTableFromService[Person](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	err = tbl.DeleteTable(context.Background())
	if !errors.Is(err, entity.ErrTableNotFound) || errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("DeleteTable of a missing table: %v; want ErrTableNotFound", err)
	}
	oneLine(t, err, "entity: DeleteTable on table "+name+": 404 ")
}

// TestTableNameFromClient: a Table made by NewTable knows its table's name
// from the client, with or without tablekit's policies, and errors name it.
func TestTableNameFromClient(t *testing.T) {
	t.Parallel()
	cred, err := aztables.NewSharedKeyCredential(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	if env.ConnectionString == "" {
		t.Skip("the account is used through a Microsoft Entra credential")
	}
	name := "Named" + env.TableName(t)[:30]                                          // mixed case: the service keeps it
	plain, err := aztables.NewClientWithSharedKey(env.TableEndpoint+name, cred, nil) // no ClientOptions
	if err != nil {
		t.Fatal(err)
	}
	kitName := "Kit" + env.TableName(t)[:30]
	if _, err := env.TableService.CreateTable(context.Background(), kitName, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = env.TableService.DeleteTable(context.Background(), kitName, nil) })
	kit := env.TableService.NewClient(kitName)
	for what, client := range map[string]*aztables.Client{"plain": plain, "ClientOptions": kit} {
		tbl, err := entity.NewTable[Person](client)
		if err != nil {
			t.Fatal(err)
		}
		want := name
		if client == kit {
			want = kitName
		}
		if tbl.Name() != want {
			t.Errorf("%s client: Name() = %q, want %q", what, tbl.Name(), want)
		}
	}
	tbl, err := entity.NewTable[Person](plain)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tbl.Get(context.Background(), "p", "r")
	if !errors.Is(err, entity.ErrTableNotFound) && !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("Get on a missing table: %v", err)
	}
	oneLine(t, err, "entity: Get on table "+name+` (PartitionKey "p", RowKey "r"): 404 `)
}

// TestZeroTimeSaysHowToFix: a zero time.Time in a field without omitempty
// is refused before any request, and the error says what to do.
func TestZeroTimeSaysHowToFix(t *testing.T) {
	type Hire struct {
		PartitionKey string
		RowKey       string
		Hired        time.Time
		Left         time.Time `table:",omitempty"`
		Ended        *time.Time
	}
	_, err := entity.Marshal(&Hire{PartitionKey: "p", RowKey: "r"})
	if !errors.Is(err, entity.ErrInvalid) {
		t.Fatalf("Marshal of a zero Hired: %v; want ErrInvalid", err)
	}
	var ve *entity.ValidationError
	if !errors.As(err, &ve) || ve.Property != "Hired" || ve.Rule != entity.RuleDateTimeRange {
		t.Errorf("Marshal of a zero Hired: %#v", err)
	}
	oneLine(t, err, "entity: invalid entity: property Hired: ")
	if !strings.HasSuffix(err.Error(), "add omitempty or use *time.Time") {
		t.Errorf("the error does not say how to fix it: %v", err)
	}
	if _, err := entity.Marshal(&Hire{PartitionKey: "p", RowKey: "r", Hired: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Errorf("a set Hired, zero omitempty Left and nil *time.Time Ended: %v", err)
	}
}

// TestSingleEntityErrorsNameTheKeys: every error of a single-entity call
// names the operation, the table and both keys, quoted (empty ones too),
// in one line, and still matches its sentinel; the missing-ETag error
// says what to do instead.
func TestSingleEntityErrorsNameTheKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	people := kitTable[Person](t)
	name := people.Name()
	p := Person{Dept: "Sales", ID: "O'Brien", Name: "a"}
	if err := people.Insert(ctx, &p); err != nil {
		t.Fatal(err)
	}
	stale := p
	stale.ETag = `W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`
	keys := func(pk, rk string) string { return fmt.Sprintf(" (PartitionKey %q, RowKey %q): ", pk, rk) }
	cases := []struct {
		op, pk, rk string
		err, is    error
		tail       string
	}{
		{"Insert", "Sales", "O'Brien", people.Insert(ctx, &Person{Dept: "Sales", ID: "O'Brien"}), entity.ErrAlreadyExists, "409 EntityAlreadyExists"},
		{"Get", "Sales", "nobody", must(people.Get(ctx, "Sales", "nobody")), entity.ErrNotFound, "404 ResourceNotFound"},
		{"Get", "", "", must(people.Get(ctx, "", "")), entity.ErrNotFound, "404 ResourceNotFound"},
		{"Update", "Sales", "O'Brien", people.Update(ctx, &stale, entity.Merge), entity.ErrPreconditionFailed, "412 "},
		{"UpdateAny", "", "x", people.UpdateAny(ctx, &Person{Dept: "", ID: "x"}, entity.Merge), entity.ErrNotFound, "404 "},
		{"Delete", "Sales", "nobody", people.Delete(ctx, "Sales", "nobody", entity.AnyETag), entity.ErrNotFound, "404 "},
		{"Update", "Sales", "new", people.Update(ctx, &Person{Dept: "Sales", ID: "new"}, entity.Merge), entity.ErrNoETag,
			"entity has no etag for a conditional write: read it first, or use UpdateAny to write whatever its version"},
		{"Delete", "Sales", "new", people.Delete(ctx, "Sales", "new", ""), entity.ErrNoETag,
			"entity has no etag for a conditional write: read it first, or pass entity.AnyETag to delete whatever its version"},
		{"Insert", "Sales", "a/b", people.Insert(ctx, &Person{Dept: "Sales", ID: "a/b"}), entity.ErrInvalid, "invalid entity: "},
		{"Insert", "Sales", "long", people.Insert(ctx, &Person{Dept: "Sales", ID: "long", Name: strings.Repeat("x", 40000)}), entity.ErrInvalid, "invalid entity: property Name: string length"},
		{"Modify", "Sales", "nobody", must(people.Modify(ctx, "Sales", "nobody", func(*Person) error { return nil }, entity.ModifyOptions{})), entity.ErrNotFound, "404 "},
		{"Modify", "Sales", "O'Brien", must(people.Modify(ctx, "Sales", "O'Brien", func(p *Person) error { p.Name = strings.Repeat("x", 40000); return nil }, entity.ModifyOptions{})), entity.ErrInvalid,
			"invalid entity: property Name: string length"}, // was a nil-pointer panic
		{"Modify", "Sales", "O'Brien", must(people.Modify(ctx, "Sales", "O'Brien", func(p *Person) error { p.ID = "other"; return nil }, entity.ModifyOptions{})), entity.ErrInvalid,
			`invalid entity: key (limit the keys read, unchanged by the change function): got PartitionKey "Sales", RowKey "other"`},
	}
	for _, c := range cases {
		want := "entity: " + c.op + " on table " + name + keys(c.pk, c.rk) + c.tail
		if c.err == nil {
			t.Errorf("%s %q/%q: no error", c.op, c.pk, c.rk)
			continue
		}
		if msg := c.err.Error(); !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") || strings.Contains(msg, ": entity: ") {
			t.Errorf("%s: %q\n  want it to start %q, in one line", c.op, msg, want)
		}
		if !errors.Is(c.err, c.is) {
			t.Errorf("%s: %v does not match %v", c.op, c.err, c.is)
		}
	}
}

// must drops a value, keeping the error.
func must[T any](_ T, err error) error { return err }
