package sas_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/resolver"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

type Order struct {
	Customer string `table:"PartitionKey,pk"`
	ID       string `table:"RowKey,rk"`
	ETag     string `table:",etag"`
	Total    float64
}

// fixture is a table with two customers' orders, the owner's view of it
// (signed with the account key) and an Issuer.
type fixture struct {
	name  string
	owner *entity.Table[Order]
	iss   *sas.Issuer
}

// newFixture returns nil when the account is reached through a Microsoft
// Entra credential: there is no account key to sign with.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	if env.ConnectionString == "" {
		t.Log("the account is used with a Microsoft Entra credential: no account key signs tokens, nothing to test")
		return nil
	}
	iss, err := sas.NewIssuerFromConnectionString(env.ConnectionString, sas.Config{TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(ctx, name, nil); err != nil {
		t.Fatal(err)
	}
	owner, err := entity.NewTableFromService[Order](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Order{{"alice", "1", "", 10}, {"alice", "2", "", 20}, {"bob", "1", "", 30}} {
		if err := owner.Insert(ctx, &o); err != nil {
			t.Fatal(err)
		}
	}
	return &fixture{name: name, owner: owner, iss: iss}
}

// open opens a SAS URL as a client holding only the token would.
func open(t *testing.T, sasURL string) *entity.Table[Order] {
	t.Helper()
	tbl, err := sas.OpenTable[Order](sasURL, env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// denied checks that err is the service's refusal (403) with the code
// Azurite gives ("" for any); a real account's codes differ (it answers
// AuthenticationFailed where Azurite says AuthorizationFailure), so there
// only the status is checked.
func denied(t *testing.T, what string, err error, code string) {
	t.Helper()
	var se *entity.ServiceError
	var te *entity.TransactionError
	status, got := 0, ""
	switch {
	case errors.As(err, &se):
		status, got = se.StatusCode, se.Code
	case errors.As(err, &te):
		status, got = te.StatusCode, te.Code
	}
	if status != 403 || code != "" && !env.Live && got != code {
		t.Errorf("%s: %v, want a 403 %s", what, err, code)
	}
}

// TestGrantPartition gives alice a token for her partition: she reads,
// inserts, updates, deletes and runs a transaction in it. The token carries
// its range, and the service checks the signature over it: the same token
// with a bound changed or left out is refused, and so is aztables' own
// token for the same range, which lacks the fields, until they are added.
func TestGrantPartition(t *testing.T) {
	f := newFixture(t)
	if f == nil {
		return
	}
	ctx := context.Background()
	u, err := f.iss.Grant(f.name, sas.Partition("alice"), sas.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := url.ParseQuery(u[strings.IndexByte(u, '?')+1:])
	if q.Get("spk") != "alice" || q.Get("epk") != "alice" || q.Get("sp") != "raud" {
		t.Fatalf("the URL does not carry the range and permissions: %s", u)
	}
	alice := open(t, u)
	if o, err := alice.Get(ctx, "alice", "1"); err != nil || o.Total != 10 {
		t.Fatalf("Get inside the range: %+v, %v", o, err)
	}
	o := Order{Customer: "alice", ID: "3", Total: 5}
	if err := alice.Insert(ctx, &o); err != nil {
		t.Fatalf("Insert inside the range: %v", err)
	}
	o.Total = 6
	if err := alice.Update(ctx, &o, entity.Replace); err != nil {
		t.Fatalf("Update inside the range: %v", err)
	}
	// Azurite checks a table SAS on a transaction against the table name
	// "$batch" and refuses it; a real account takes the table from the
	// operations.
	batch := alice.NewBatch().Insert(&Order{Customer: "alice", ID: "4"}).Insert(&Order{Customer: "alice", ID: "5"})
	if _, err := alice.Submit(ctx, batch); env.Live && err != nil {
		t.Fatalf("transaction inside the range: %v", err)
	} else if !env.Live {
		denied(t, "a transaction with a table SAS on Azurite (if Azurite now accepts it, update the package documentation)", err, "AuthorizationFailure")
		for _, id := range []string{"4", "5"} {
			if err := f.owner.Insert(ctx, &Order{Customer: "alice", ID: id}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := alice.DeleteEntity(ctx, &o); err != nil {
		t.Fatalf("Delete inside the range: %v", err)
	}
	var ids []string
	for o, err := range alice.Query(ctx, entity.Query{Filter: filter.PK("alice")}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, o.ID)
	}
	if strings.Join(ids, ",") != "1,2,4,5" {
		t.Errorf("alice's partition holds %v, want 1,2,4,5", ids)
	}

	// The signature covers the range: a changed or missing bound is refused.
	for what, bad := range map[string]string{
		"range moved to bob":   strings.NewReplacer("spk=alice", "spk=bob", "epk=alice", "epk=bob").Replace(u),
		"end bound left out":   strings.Replace(u, "&epk=alice", "", 1),
		"range widened to all": strings.NewReplacer("&spk=alice", "", "&epk=alice", "").Replace(u),
	} {
		_, err := open(t, bad).Get(ctx, "alice", "1")
		denied(t, what, err, "AuthorizationFailure")
	}

	// aztables v1.4.1 signs the range but leaves it out of the URL.
	cred, err := aztables.NewSharedKeyCredential(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	if !env.Live {
		client, err := aztables.NewClientWithSharedKey(env.TableEndpoint+f.name, cred, nil)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := client.GetTableSASURL(aztables.SASPermissions{Read: true, StartPartitionKey: "alice", EndPartitionKey: "alice"}, time.Time{}, time.Now().Add(time.Hour).UTC())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(theirs, "spk=") {
			t.Fatalf("aztables now writes the range (%s): revisit the package documentation", theirs)
		}
		// Its URL also runs the account into the table name
		// (…/devstoreaccount1tktest…) without a trailing slash on the
		// endpoint, which OpenTable catches by the token's tn.
		if _, err := sas.OpenTable[Order](theirs, nil); err == nil {
			t.Errorf("OpenTable accepted aztables' URL %s", theirs)
		}
		_, query, _ := strings.Cut(theirs, "?")
		theirs = env.TableEndpoint + f.name + "?" + query
		_, err = open(t, theirs).Get(ctx, "alice", "1")
		denied(t, "aztables' token", err, "AuthorizationFailure")
		if _, err := open(t, theirs+"&spk=alice&epk=alice").Get(ctx, "alice", "1"); err != nil {
			t.Errorf("aztables' token with the range added: %v", err)
		}
	}

	// Outside the range: only a real account enforces it.
	_, err = alice.Get(ctx, "bob", "1")
	if env.Live {
		denied(t, "Get outside the range on a real account", err, "")
	} else if err != nil {
		t.Errorf("Azurite now refuses reads outside a token's key range (%v): update the package documentation and assert the refusal here", err)
	}
}

// TestAwkwardKeys: a range whose keys hold spaces, '+', quotes and
// characters outside ASCII travels intact, as the service's signature check
// shows. Azurite decodes the query twice, so a '%' in a bound is refused
// there; a real account takes it.
func TestAwkwardKeys(t *testing.T) {
	f := newFixture(t)
	if f == nil {
		return
	}
	ctx := context.Background()
	for _, pk := range []string{"a b", "a+b", "O'Brien & Sons", "Zürich 東京 😀", "x=y;z", "50%off"} {
		u, err := f.iss.Grant(f.name, sas.Partition(pk), sas.ReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		err = open(t, u).Insert(ctx, &Order{Customer: pk, ID: "1"})
		switch {
		case strings.Contains(pk, "%") && !env.Live:
			if err == nil {
				t.Errorf("Azurite now takes a '%%' in a key bound: update the package documentation")
			}
		case err != nil:
			t.Errorf("Insert into %q with its own token: %v", pk, err)
		}
	}
}

// TestRowRange gives a user the rows of a shared partition that start with
// their prefix, and reads them through a resolver.
func TestRowRange(t *testing.T) {
	f := newFixture(t)
	if f == nil {
		return
	}
	ctx := context.Background()
	u, err := f.iss.Grant(f.name, sas.RowPrefix("alice", "1"), sas.Read|sas.Update)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := url.ParseQuery(u[strings.IndexByte(u, '?')+1:])
	if q.Get("spk") != "alice" || q.Get("srk") != "1" || q.Get("epk") != "alice" || q.Get("erk") != "1\uffff" || q.Get("sp") != "ru" {
		t.Fatalf("the URL does not carry the range and permissions: %v", q)
	}
	schema, err := resolver.NewSchema(resolver.Config{Discriminator: resolver.ByFunc(
		func(string, string, resolver.Props) string { return "Order.v1" },
		func(string, *entity.DynamicEntity) error { return nil })}, resolver.Register[Order]("Order.v1"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := sas.OpenClient(u, env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	rt, err := resolver.NewTable(c, schema)
	if err != nil {
		t.Fatal(err)
	}
	o, err := resolver.Get[Order](ctx, rt, "alice", "1")
	if err != nil || o.Total != 10 {
		t.Fatalf("resolver Get inside the range: %+v, %v", o, err)
	}
	o.Total = 11
	if err := rt.Update(ctx, o, entity.Merge); err != nil {
		t.Errorf("resolver Update inside the range: %v", err)
	}
	err = rt.Insert(ctx, &Order{Customer: "alice", ID: "1b"})
	denied(t, "Insert without the Add permission", err, "AuthorizationPermissionMismatch")
}

// TestPermissions: a read-only token reads but cannot insert, update,
// upsert or delete; an add-only token inserts but cannot read or upsert
// (an upsert needs Add and Update). Nothing the refused requests asked for
// is written.
func TestPermissions(t *testing.T) {
	f := newFixture(t)
	if f == nil {
		return
	}
	ctx := context.Background()
	u, err := f.iss.TableURL(sas.TableSAS{Table: f.name, Permissions: sas.Read})
	if err != nil {
		t.Fatal(err)
	}
	reader := open(t, u)
	if o, err := reader.Get(ctx, "bob", "1"); err != nil || o.Total != 30 {
		t.Fatalf("read-only Get: %+v, %v", o, err)
	}
	n := 0
	for _, err := range reader.Query(ctx, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Errorf("read-only Query: %d entities, want 3", n)
	}
	const code = "AuthorizationPermissionMismatch"
	denied(t, "read-only Insert", reader.Insert(ctx, &Order{Customer: "eve", ID: "1", Total: 1}), code)
	denied(t, "read-only Upsert", reader.Upsert(ctx, &Order{Customer: "bob", ID: "1", Total: 0}, entity.Replace), code)
	denied(t, "read-only Update", reader.UpdateAny(ctx, &Order{Customer: "bob", ID: "1", Total: 0}, entity.Merge), code)
	denied(t, "read-only Delete", reader.Delete(ctx, "bob", "1", entity.AnyETag), code)
	if _, err := f.owner.Get(ctx, "eve", "1"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("the refused insert wrote an entity: %v", err)
	}
	if o, err := f.owner.Get(ctx, "bob", "1"); err != nil || o.Total != 30 {
		t.Errorf("the refused writes changed bob's order: %+v, %v", o, err)
	}

	u, err = f.iss.TableURL(sas.TableSAS{Table: f.name, Permissions: sas.Add})
	if err != nil {
		t.Fatal(err)
	}
	adder := open(t, u)
	if err := adder.Insert(ctx, &Order{Customer: "carol", ID: "1", Total: 7}); err != nil {
		t.Errorf("add-only Insert: %v", err)
	}
	_, err = adder.Get(ctx, "carol", "1")
	denied(t, "add-only Get", err, code)
	denied(t, "add-only Upsert", adder.Upsert(ctx, &Order{Customer: "carol", ID: "1", Total: 8}, entity.Merge), code)
}

// TestTimes: a token past its expiry, or before its start, is refused.
func TestTimes(t *testing.T) {
	f := newFixture(t)
	if f == nil {
		return
	}
	ctx := context.Background()
	now := time.Now()
	for what, v := range map[string]sas.TableSAS{
		"expired":         {Table: f.name, Permissions: sas.Read, Start: now.Add(-2 * time.Hour), Expiry: now.Add(-time.Hour)},
		"not yet started": {Table: f.name, Permissions: sas.Read, Start: now.Add(time.Hour), Expiry: now.Add(2 * time.Hour)},
	} {
		u, err := f.iss.TableURL(v)
		if err != nil {
			t.Fatal(err)
		}
		_, err = open(t, u).Get(ctx, "alice", "1")
		denied(t, what, err, "AuthorizationFailure")
	}
	u, err := f.iss.TableURL(sas.TableSAS{Table: f.name, Permissions: sas.Read, Start: now.Add(-time.Minute), Expiry: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open(t, u).Get(ctx, "alice", "1"); err != nil {
		t.Errorf("a token inside its validity: %v", err)
	}
}

// TestProtocol: an https-only token is refused over http, by OpenTable
// before any request and by the service when sent anyway.
func TestProtocol(t *testing.T) {
	f := newFixture(t)
	if f == nil || strings.HasPrefix(f.iss.Endpoint(), "https:") {
		return // a live account is https: the refusal cannot be shown
	}
	ctx := context.Background()
	u, err := f.iss.TableURL(sas.TableSAS{Table: f.name, Permissions: sas.Read, Protocol: sas.HTTPS})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sas.OpenTable[Order](u, nil)
	var fe *sas.FieldError
	if !errors.As(err, &fe) || fe.Field != "spr" {
		t.Fatalf("OpenTable of an https-only token over http: %v", err)
	}
	base, query, _ := strings.Cut(u, "?")
	svc, err := aztables.NewServiceClientWithNoCredential(strings.TrimSuffix(base, f.name)+"?"+query, env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := entity.NewTableFromService[Order](svc, f.name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tbl.Get(ctx, "alice", "1")
	denied(t, "https-only token over http", err, "AuthorizationProtocolMismatch")
}

// TestStoredPolicy: a token that names a stored access policy takes its
// permissions and times from it, and dies with it.
func TestStoredPolicy(t *testing.T) {
	f := newFixture(t)
	if f == nil {
		return
	}
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	acl := []*aztables.SignedIdentifier{{ID: ptr("readers"), AccessPolicy: &aztables.AccessPolicy{
		Start: ptr(now.Add(-time.Minute)), Expiry: ptr(now.Add(time.Hour)), Permission: ptr("r")}}}
	if _, err := f.owner.Client().SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: acl}); err != nil {
		t.Fatal(err)
	}
	u, err := f.iss.TableURL(sas.TableSAS{Table: f.name, Policy: "readers", Range: sas.Partition("alice")})
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := url.ParseQuery(u[strings.IndexByte(u, '?')+1:]); q.Get("si") != "readers" || q.Has("sp") || q.Has("se") {
		t.Fatalf("a policy token carries %v", q)
	}
	reader := open(t, u)
	if _, err := reader.Get(ctx, "alice", "1"); err != nil {
		t.Fatalf("Get with the policy's read permission: %v", err)
	}
	denied(t, "Insert beyond the policy's permissions", reader.Insert(ctx, &Order{Customer: "alice", ID: "9"}), "AuthorizationPermissionMismatch")
	if _, err := f.owner.Client().SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = reader.Get(ctx, "alice", "1")
	denied(t, "Get after the policy was deleted", err, "AuthorizationFailure")
}

// TestAccountSAS: an account SAS reaching entities reads any table through
// OpenService or OpenTable, within its permissions.
func TestAccountSAS(t *testing.T) {
	f := newFixture(t)
	if f == nil {
		return
	}
	ctx := context.Background()
	u, err := f.iss.AccountURL(sas.AccountSAS{Permissions: sas.AccountRead, ResourceTypes: sas.Object})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := sas.OpenService(u, env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	viaService, err := entity.NewTableFromService[Order](svc, f.name)
	if err != nil {
		t.Fatal(err)
	}
	if o, err := viaService.Get(ctx, "bob", "1"); err != nil || o.Total != 30 {
		t.Fatalf("account SAS Get: %+v, %v", o, err)
	}
	base, query, _ := strings.Cut(u, "?")
	viaTable := open(t, base+f.name+"?"+query)
	if _, err := viaTable.Get(ctx, "alice", "2"); err != nil {
		t.Errorf("account SAS through OpenTable: %v", err)
	}
	denied(t, "account SAS without Add", viaTable.Insert(ctx, &Order{Customer: "x", ID: "1"}), "AuthorizationPermissionMismatch")

	// Transactions work with an account SAS, on Azurite too.
	u, err = f.iss.AccountURL(sas.AccountSAS{Permissions: sas.AccountRead | sas.AccountAdd | sas.AccountUpdate, ResourceTypes: sas.Object})
	if err != nil {
		t.Fatal(err)
	}
	base, query, _ = strings.Cut(u, "?")
	writer := open(t, base+f.name+"?"+query)
	if _, err := writer.Submit(ctx, writer.NewBatch().Insert(&Order{Customer: "dave", ID: "1"}).Upsert(&Order{Customer: "dave", ID: "2"}, entity.Merge)); err != nil {
		t.Errorf("transaction with an account SAS: %v", err)
	}
	if _, err := f.owner.Get(ctx, "dave", "2"); err != nil {
		t.Errorf("the transaction's upsert: %v", err)
	}

	// Creating tables needs the container level and Create.
	u, err = f.iss.AccountURL(sas.AccountSAS{Permissions: sas.AccountCreate, ResourceTypes: sas.Container})
	if err != nil {
		t.Fatal(err)
	}
	creator, err := sas.OpenService(u, env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	if _, err := creator.CreateTable(ctx, name, nil); err != nil {
		t.Errorf("account SAS CreateTable: %v", err)
	}
	cbase, cquery, _ := strings.Cut(u, "?")
	_, err = sas.OpenTable[Order](cbase+name+"?"+cquery, nil)
	var fe *sas.FieldError
	if !errors.As(err, &fe) || fe.Field != "srt" {
		t.Errorf("OpenTable of an account SAS that does not reach entities: %v", err)
	}
}

// TestOpenChecks: what OpenTable refuses before any request.
func TestOpenChecks(t *testing.T) {
	k, err := sas.NewKey(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	iss, err := sas.NewIssuer("https://acct.table.core.windows.net", k, sas.Config{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := iss.Grant("Orders", sas.Partition("alice"), sas.Read)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u, "https://acct.table.core.windows.net/Orders?") || !strings.Contains(u, "spr=https") {
		t.Errorf("Grant on an https endpoint: %s", u)
	}
	for what, c := range map[string]struct{ url, field string }{
		"another table":        {strings.Replace(u, "/Orders?", "/Invoices?", 1), "tn"},
		"no table":             {strings.Replace(u, "/Orders?", "/?", 1), "URL"},
		"no token":             {"https://acct.table.core.windows.net/Orders", "URL"},
		"ftp":                  {strings.Replace(u, "https:", "ftp:", 1), "URL"},
		"tampered permissions": {strings.Replace(u, "sp=r", "sp=x", 1), "sp"},
		"not a URL":            {"https://acct.table.core.windows.net/Orders?%zz", "query"},
	} {
		_, err := sas.OpenTable[Order](c.url, nil)
		var fe *sas.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: %v, want a *FieldError for %s", what, err, c.field)
		}
	}
	if _, err := iss.Grant("Orders", sas.KeyRange{}, sas.Read); !errors.Is(err, sas.ErrInvalid) {
		t.Errorf("Grant over the whole table: %v", err)
	}
	if _, err := iss.Grant("Orders", sas.Partition(""), sas.Read); !errors.Is(err, sas.ErrInvalid) {
		t.Errorf(`Grant of Partition(""): %v`, err)
	}
	if _, err := iss.Grant("Orders", sas.Partition("a"), 0); !errors.Is(err, sas.ErrInvalid) {
		t.Errorf("Grant without permissions: %v", err)
	}
	for _, bad := range []string{"http://h/?x=1", "ftp://h/", "", "https:///x"} {
		if _, err := sas.NewIssuer(bad, k, sas.Config{}); !errors.Is(err, sas.ErrInvalid) {
			t.Errorf("NewIssuer(%q): %v", bad, err)
		}
	}
	if _, err := sas.NewIssuer("http://127.0.0.1:1/acct", k, sas.Config{Protocol: sas.HTTPS}); !errors.Is(err, sas.ErrInvalid) {
		t.Errorf("https-only tokens for an http endpoint: %v", err)
	}
	for _, cs := range []string{"AccountName=a", "AccountKey=AAAA", "SharedAccessSignature=sv=x;TableEndpoint=https://h/", "AccountName=a;AccountKey=!!", "junk"} {
		if _, err := sas.NewIssuerFromConnectionString(cs, sas.Config{}); !errors.Is(err, sas.ErrInvalid) {
			t.Errorf("NewIssuerFromConnectionString(%q): %v", cs, err)
		}
	}
	iss, err = sas.NewIssuerFromConnectionString("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="+integration.AzuriteAccountKey+";EndpointSuffix=core.chinacloudapi.cn", sas.Config{})
	if err != nil || iss.Endpoint() != "https://acct.table.core.chinacloudapi.cn/" {
		t.Errorf("endpoint from the suffix: %v, %v", iss, err)
	}
}

func ptr[T any](v T) *T { return &v }
