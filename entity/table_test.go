package entity_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

type Person struct {
	Dept      string    `table:"PartitionKey,pk"`
	ID        string    `table:"RowKey,rk"`
	ETag      string    `table:",etag"`
	Timestamp time.Time `table:",timestamp"`
	Name      string    `table:",omitempty"`
	Email     string    `table:",omitempty"`
	Age       int32     `table:",omitempty"`
}

func newPeople(t *testing.T) *entity.Table[Person] {
	t.Helper()
	tbl, err := entity.NewTable[Person](env.TableWith(t, env.NoRetryClientOptions()))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestCRUD(t *testing.T) {
	ctx := context.Background()
	people := newPeople(t)

	p := Person{Dept: "Sales", ID: "O'Brien", Name: "Pat", Email: "pat@contoso.com", Age: 40}
	before := time.Now().Add(-time.Minute)
	if err := people.Insert(ctx, &p); err != nil {
		t.Fatal(err)
	}
	// Cosmos DB's ETags carry no time: there is no Timestamp to write back.
	if p.ETag == "" || p.Timestamp.Before(before) != env.Cosmos() {
		t.Fatalf("insert did not write back ETag/Timestamp: %+v", p)
	}
	dup := Person{Dept: "Sales", ID: "O'Brien"}
	err := people.Insert(ctx, &dup)
	var re *azcore.ResponseError
	if !errors.Is(err, entity.ErrAlreadyExists) || !errors.As(err, &re) || re.StatusCode != 409 {
		t.Fatalf("second insert: %v", err)
	}

	got, err := people.Get(ctx, "Sales", "O'Brien")
	if err != nil {
		t.Fatal(err)
	}
	if env.Cosmos() {
		p.Timestamp = got.Timestamp // read, not written back
	}
	if got != p {
		t.Fatalf("get:\n got %+v\nwant %+v", got, p)
	}
	if _, err := people.Get(ctx, "Sales", "nobody"); !errors.Is(err, entity.ErrNotFound) || !errors.As(err, &re) {
		t.Fatalf("get missing: %v", err)
	}

	// Merge keeps what it does not send; the ETag moves on.
	patch := Person{Dept: "Sales", ID: "O'Brien", ETag: got.ETag, Age: 41}
	if err := people.Update(ctx, &patch, entity.Merge); err != nil {
		t.Fatal(err)
	}
	if patch.ETag == got.ETag {
		t.Fatal("update did not write back the new ETag")
	}
	merged, _ := people.Get(ctx, "Sales", "O'Brien")
	if merged.Name != "Pat" || merged.Age != 41 {
		t.Fatalf("merge lost data: %+v", merged)
	}

	// The stale ETag of the first read now fails, and changes nothing.
	stale := got
	stale.Name = "Stale"
	if err := people.Update(ctx, &stale, entity.Replace); !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Fatalf("stale update: %v", err)
	}
	if now, _ := people.Get(ctx, "Sales", "O'Brien"); now.Name != "Pat" {
		t.Fatalf("stale update changed the entity: %+v", now)
	}

	// No ETag: refused before any request, unless asked explicitly.
	blind := Person{Dept: "Sales", ID: "O'Brien", Name: "Blind"}
	if err := people.Update(ctx, &blind, entity.Replace); !errors.Is(err, entity.ErrNoETag) {
		t.Fatalf("update without etag: %v", err)
	}
	if err := people.UpdateAny(ctx, &blind, entity.Replace); err != nil {
		t.Fatal(err)
	}
	replaced, _ := people.Get(ctx, "Sales", "O'Brien")
	if replaced.Name != "Blind" || replaced.Email != "" || replaced.Age != 0 {
		t.Fatalf("replace kept old properties: %+v", replaced)
	}
	// Update never creates.
	ghost := Person{Dept: "Sales", ID: "ghost", Name: "G"}
	if err := people.UpdateAny(ctx, &ghost, entity.Merge); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("update of a missing entity: %v", err)
	}
	// Upsert does.
	if err := people.Upsert(ctx, &ghost, entity.Merge); err != nil || ghost.ETag == "" {
		t.Fatalf("upsert: %v %+v", err, ghost)
	}

	// Delete with a stale ETag fails; with the current one succeeds.
	if err := people.DeleteEntity(ctx, &got); !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Fatalf("stale delete: %v", err)
	}
	if err := people.DeleteEntity(ctx, &replaced); err != nil {
		t.Fatal(err)
	}
	if err := people.Delete(ctx, "Sales", "O'Brien", ""); !errors.Is(err, entity.ErrNoETag) {
		t.Fatalf("delete without etag: %v", err)
	}
	if err := people.Delete(ctx, "Sales", "O'Brien", entity.AnyETag); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("delete of a deleted entity: %v", err)
	}
	// DeleteIfExists is idempotent.
	for i, want := range []bool{true, false, false} {
		deleted, err := people.DeleteIfExists(ctx, "Sales", "ghost")
		if err != nil || deleted != want {
			t.Fatalf("DeleteIfExists #%d = %v, %v; want %v", i, deleted, err, want)
		}
	}
}

func TestEmptyKeys(t *testing.T) {
	ctx := context.Background()
	people := newPeople(t)
	for _, k := range [][2]string{{"", ""}, {"", "r"}, {"p", ""}} {
		p := Person{Dept: k[0], ID: k[1], Name: "empty " + k[0] + "/" + k[1]}
		if err := people.Insert(ctx, &p); err != nil {
			t.Fatalf("insert %q: %v", k, err)
		}
		got, err := people.Get(ctx, k[0], k[1])
		if err != nil || got.Name != p.Name || got.ETag != p.ETag {
			t.Fatalf("get %q: %+v %v", k, got, err)
		}
	}
	if _, err := people.Get(ctx, "", "missing"); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("get missing with empty pk: %v", err)
	}
}

func TestInvalidInputSendsNothing(t *testing.T) {
	ctx := context.Background()
	// A client pointed at a closed port: any request would fail with a
	// network error, so a ValidationError proves nothing was sent.
	client, err := aztables.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/nowhere", env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	people, err := entity.NewTable[Person](client)
	if err != nil {
		t.Fatal(err)
	}
	bad := Person{Dept: "a/b", ID: "r"}
	for name, call := range map[string]func() error{
		"insert": func() error { return people.Insert(ctx, &bad) },
		"upsert": func() error { return people.Upsert(ctx, &bad, entity.Merge) },
		"get":    func() error { _, err := people.Get(ctx, "a#b", "r"); return err },
		"delete": func() error { return people.Delete(ctx, "p", "r?", entity.AnyETag) },
		"query": func() error {
			_, err := people.QueryPage(ctx, entity.Query{Filter: filter.Eq("bad name", 1)}, "")
			return err
		},
		"select":  func() error { _, err := people.QueryPage(ctx, entity.Query{Select: []string{"Nope"}}, ""); return err },
		"page":    func() error { _, err := people.QueryPage(ctx, entity.Query{PageSize: 1001}, ""); return err },
		"mode":    func() error { return people.Upsert(ctx, &Person{Dept: "p", ID: "r"}, 0) },
		"token":   func() error { _, err := people.QueryPage(ctx, entity.Query{}, "not a token"); return err },
		"no etag": func() error { return people.Update(ctx, &Person{Dept: "p", ID: "r"}, entity.Merge) },
	} {
		err := call()
		if !errors.Is(err, entity.ErrInvalid) && !errors.Is(err, filter.ErrInvalidFilter) && !errors.Is(err, entity.ErrInvalidToken) && !errors.Is(err, entity.ErrNoETag) {
			t.Errorf("%s: got %v, want a typed validation error", name, err)
		}
	}
	type noKeys struct{ Name string }
	if _, err := entity.NewTable[noKeys](client); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("NewTable of a type without keys: %v", err)
	}
}

// load inserts n people into partition pk with RowKeys 00000..n-1, in
// transactions through the raw client.
func load(t *testing.T, client *aztables.Client, pk string, n int) {
	t.Helper()
	ctx := context.Background()
	for start := 0; start < n; start += 100 {
		var actions []aztables.TransactionAction
		for i := start; i < min(n, start+100); i++ {
			body, err := entity.Marshal(Person{Dept: pk, ID: keys.Pad(int64(i), 5), Name: fmt.Sprintf("n%d", i), Email: fmt.Sprintf("e%d@x", i), Age: int32(i % 90)})
			if err != nil {
				t.Fatal(err)
			}
			actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: body})
		}
		if _, err := client.SubmitTransaction(ctx, actions, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestQueryPagingAndTokens(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	load(t, client, "A", 2600)
	load(t, client, "B", 10)
	people, err := entity.NewTable[Person](client)
	if err != nil {
		t.Fatal(err)
	}

	// Automatic continuation over more than two service pages of 1,000.
	var ids []string
	for p, err := range people.Query(ctx, entity.Query{Filter: filter.PK("A")}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	ids = inServiceOrder(ids, strings.Compare)
	if len(ids) != 2600 || !slices.IsSorted(ids) || ids[0] != "00000" || ids[2599] != "02599" {
		t.Fatalf("got %d ids, sorted %v", len(ids), slices.IsSorted(ids))
	}

	// A total limit distinct from the page size: 250 in pages of 100.
	n := 0
	for _, err := range people.Query(ctx, entity.Query{Filter: filter.PK("A"), PageSize: 100, Limit: 250}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 250 {
		t.Fatalf("limit 250 yielded %d", n)
	}

	// Early break stops cleanly.
	for range people.Query(ctx, entity.Query{}) {
		break
	}

	// Page at a time, resuming each page from its token in a new Table
	// value, as another process would.
	q := entity.Query{Filter: filter.And(filter.PK("A"), filter.RowKeyRange("00100", "00900")), PageSize: 300}
	var token string
	var pages [][]string
	for {
		fresh, err := entity.NewTable[Person](client)
		if err != nil {
			t.Fatal(err)
		}
		page, err := fresh.QueryPage(ctx, q, token)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range page.Items {
			got = append(got, p.ID)
		}
		pages = append(pages, inServiceOrder(got, strings.Compare))
		if page.Next == "" {
			break
		}
		token = page.Next
		if len(pages) > 10 {
			t.Fatal("paging does not end")
		}
	}
	if len(pages) != 3 || len(pages[0]) != 300 || pages[1][0] != "00400" || pages[2][len(pages[2])-1] != "00899" {
		t.Fatalf("pages: %d, first page %d", len(pages), len(pages[0]))
	}
	// A token is refused by a different query.
	first, _ := people.QueryPage(ctx, q, "")
	other := q
	other.Filter = filter.PK("B")
	if _, err := people.QueryPage(ctx, other, first.Next); !errors.Is(err, entity.ErrInvalidToken) {
		t.Fatalf("foreign token: %v", err)
	}
}

func TestProjectionFillsOnlySelectedFields(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	load(t, client, "A", 5)
	people, _ := entity.NewTable[Person](client)
	for p, err := range people.Query(ctx, entity.Query{Filter: filter.PK("A"), Select: []string{"Email"}}) {
		if err != nil {
			t.Fatal(err)
		}
		if p.Email == "" || p.Name != "" || p.Age != 0 || p.Dept != "A" || p.ID == "" {
			t.Fatalf("projection: %+v", p)
		}
	}
}

// TestFilterValuesCannotInject sends injection payloads as filter values to
// the service: each matches only an entity whose value is exactly the
// payload.
func TestFilterValuesCannotInject(t *testing.T) {
	ctx := context.Background()
	people := newPeople(t)
	payloads := []string{
		"' or 1 eq 1 or '",
		"x') or (RowKey ne '",
		"''",
		"' or PartitionKey ne '",
		"Ünï'cödé 😀",
	}
	for i, pl := range payloads {
		if err := people.Insert(ctx, &Person{Dept: "inj", ID: fmt.Sprint(i), Name: pl}); err != nil {
			t.Fatal(err)
		}
	}
	if err := people.Insert(ctx, &Person{Dept: "inj", ID: "other", Name: "other"}); err != nil {
		t.Fatal(err)
	}
	for i, pl := range payloads {
		var got []string
		for p, err := range people.Query(ctx, entity.Query{Filter: filter.And(filter.PK("inj"), filter.Eq("Name", pl))}) {
			if err != nil {
				t.Fatalf("%q: %v", pl, err)
			}
			got = append(got, p.ID)
		}
		if len(got) != 1 || got[0] != fmt.Sprint(i) {
			t.Errorf("payload %q matched %v", pl, got)
		}
		// As a key value too.
		var rows int
		for _, err := range people.Query(ctx, entity.Query{Filter: filter.PK(pl)}) {
			if err != nil {
				t.Fatal(err)
			}
			rows++
		}
		if rows != 0 {
			t.Errorf("payload %q as PartitionKey matched %d rows", pl, rows)
		}
	}
}

type Counter struct {
	PartitionKey, RowKey string
	ETag                 string
	N                    int64
}

// TestModifyUnderConcurrentWriters races goroutines incrementing one
// counter: every increment survives, because each conflicting write is
// retried from a fresh read.
func TestModifyUnderConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	counters, err := entity.NewTable[Counter](env.TableWith(t, env.NoRetryClientOptions()))
	if err != nil {
		t.Fatal(err)
	}
	if err := counters.Insert(ctx, &Counter{PartitionKey: "c", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 10
	errs := make(chan error, writers)
	conflicts := make(chan int, writers*each*20)
	for w := 0; w < writers; w++ {
		go func() {
			for i := 0; i < each; i++ {
				rounds := 0
				_, err := counters.Modify(ctx, "c", "1", func(c *Counter) error {
					rounds++
					c.N++
					return nil
				}, entity.ModifyOptions{Mode: entity.Replace, Retry: entity.RetryPolicy{Attempts: 100, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond}})
				if err != nil {
					errs <- err
					return
				}
				conflicts <- rounds - 1
			}
			errs <- nil
		}()
	}
	for w := 0; w < writers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(conflicts)
	retried := 0
	for c := range conflicts {
		retried += c
	}
	got, err := counters.Get(ctx, "c", "1")
	if err != nil {
		t.Fatal(err)
	}
	if got.N != writers*each {
		t.Fatalf("counter = %d, want %d: increments were lost", got.N, writers*each)
	}
	t.Logf("%d increments, %d retried rounds", writers*each, retried)
}

// TestModifyGivesUpWithErrContention injects a writer between the read and
// the write of every round.
func TestModifyGivesUpWithErrContention(t *testing.T) {
	ctx := context.Background()
	counters, _ := entity.NewTable[Counter](env.TableWith(t, env.NoRetryClientOptions()))
	if err := counters.Insert(ctx, &Counter{PartitionKey: "c", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	rounds := 0
	_, err := counters.Modify(ctx, "c", "1", func(c *Counter) error {
		rounds++
		intruder := Counter{PartitionKey: "c", RowKey: "1", N: 1000}
		if err := counters.UpdateAny(ctx, &intruder, entity.Replace); err != nil {
			return err
		}
		c.N++
		return nil
	}, entity.ModifyOptions{Mode: entity.Replace, Retry: entity.RetryPolicy{Attempts: 3, BaseDelay: time.Millisecond}})
	if !errors.Is(err, entity.ErrContention) || !errors.Is(err, entity.ErrPreconditionFailed) || rounds != 3 {
		t.Fatalf("got %v after %d rounds", err, rounds)
	}
	if got, _ := counters.Get(ctx, "c", "1"); got.N != 1000 {
		t.Fatalf("the losing writes changed the counter: %d", got.N)
	}
	// A cancelled context stops the loop.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := counters.Modify(cctx, "c", "1", func(*Counter) error { return nil }, entity.ModifyOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestModifyReturnsTheChangesErrorAsIs: a change that gives up with an
// error matching ErrPreconditionFailed (say, a conditional write of its
// own that lost) is called once and its error returned as is, not taken
// for a lost round; nothing is written.
func TestModifyReturnsTheChangesErrorAsIs(t *testing.T) {
	ctx := context.Background()
	counters, _ := entity.NewTable[Counter](env.Table(t))
	if err := counters.Insert(ctx, &Counter{PartitionKey: "c", RowKey: "1", N: 5}); err != nil {
		t.Fatal(err)
	}
	giveUp := fmt.Errorf("the change's own write lost: %w", entity.ErrPreconditionFailed)
	calls := 0
	_, err := counters.Modify(ctx, "c", "1", func(c *Counter) error {
		calls++
		c.N = 99
		return giveUp
	}, entity.ModifyOptions{Retry: entity.RetryPolicy{Attempts: 5, BaseDelay: time.Millisecond}})
	if err != giveUp || calls != 1 {
		t.Fatalf("Modify returned %v after %d calls of change, want the change's error after 1", err, calls)
	}
	if got, _ := counters.Get(ctx, "c", "1"); got.N != 5 {
		t.Fatalf("a change that gave up was written: %d", got.N)
	}
}

// TestDynamicTable reads and changes an entity of unknown shape through the
// property bag, as the guide's EmployeeCount example does, guarded by its
// ETag.
func TestDynamicTable(t *testing.T) {
	ctx := context.Background()
	client := env.TableWith(t, env.NoRetryClientOptions())
	bags, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	dept := (&entity.DynamicEntity{PartitionKey: "Sales", RowKey: "DEPARTMENT"}).Set("EmployeeCount", int32(7)).Set("Budget", int64(1)<<40).Set("Ratio", 2.0)
	if err := bags.Insert(ctx, dept); err != nil {
		t.Fatal(err)
	}
	got, err := bags.Get(ctx, "Sales", "DEPARTMENT")
	if err != nil {
		t.Fatal(err)
	}
	if got.ETag != dept.ETag || got.Properties["Budget"] != int64(1)<<40 || got.Properties["Ratio"] != 2.0 {
		t.Fatalf("read back %+v", got)
	}
	objects, err := entity.NewTable[json.RawMessage](client)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := objects.Get(ctx, "Sales", "DEPARTMENT")
	if err != nil || !strings.Contains(string(raw), `"Budget@odata.type":"Edm.Int64"`) || !strings.Contains(string(raw), `"odata.etag"`) {
		t.Fatalf("Table[json.RawMessage].Get: %s %v", raw, err)
	}
	if _, err := objects.Get(ctx, "Sales", "nobody"); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("Table[json.RawMessage].Get of a missing entity: %v", err)
	}
	n, _ := entity.Prop[int32](&got, "EmployeeCount")
	patch := entity.DynamicEntity{PartitionKey: got.PartitionKey, RowKey: got.RowKey, ETag: got.ETag}
	patch.Set("EmployeeCount", n+1)
	if err := bags.Update(ctx, &patch, entity.Merge); err != nil {
		t.Fatal(err)
	}
	// A second writer still holding the old ETag loses.
	stale := entity.DynamicEntity{PartitionKey: got.PartitionKey, RowKey: got.RowKey, ETag: got.ETag}
	stale.Set("EmployeeCount", n+100)
	if err := bags.Update(ctx, &stale, entity.Merge); !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Fatalf("stale bag update: %v", err)
	}
	final, _ := bags.Get(ctx, "Sales", "DEPARTMENT")
	if final.Properties["EmployeeCount"] != int32(8) || final.Properties["Budget"] != int64(1)<<40 {
		t.Fatalf("after merge: %+v", final.Properties)
	}
	var rows int
	for bag, err := range bags.Query(ctx, entity.Query{Filter: filter.PK("Sales"), Select: []string{"EmployeeCount"}}) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := bag.Properties["Budget"]; ok || bag.Properties["EmployeeCount"] != int32(8) {
			t.Fatalf("projection of a bag: %+v", bag.Properties)
		}
		rows++
	}
	if rows != 1 {
		t.Fatalf("%d rows", rows)
	}
}

func TestTableLifecycle(t *testing.T) {
	ctx := context.Background()
	svc, err := env.NewTableService(env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	people, err := entity.NewTableFromService[Person](svc, name)
	if err != nil {
		t.Fatal(err)
	}
	if people.Name() != name {
		t.Fatalf("Name() = %q", people.Name())
	}
	// A missing table is not a missing entity.
	if _, err := people.Get(ctx, "p", "r"); !errors.Is(err, entity.ErrTableNotFound) || errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("get from a missing table: %v", err)
	}
	if deleted, err := people.DeleteIfExists(ctx, "p", "r"); !errors.Is(err, entity.ErrTableNotFound) || deleted {
		t.Fatalf("DeleteIfExists on a missing table: %v, %v", deleted, err)
	}
	if err := people.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := people.CreateTable(ctx); !errors.Is(err, entity.ErrAlreadyExists) {
		t.Fatalf("second CreateTable: %v", err)
	}
	if err := people.CreateTableIfNotExists(ctx); err != nil {
		t.Fatalf("CreateTableIfNotExists on an existing table: %v", err)
	}
	if err := people.Insert(ctx, &Person{Dept: "p", ID: "r"}); err != nil {
		t.Fatal(err)
	}
	if err := people.DeleteTable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := people.Get(ctx, "p", "r"); !errors.Is(err, entity.ErrTableNotFound) {
		t.Fatalf("get after DeleteTable: %v", err)
	}
	// A deleted table's name cannot be reused for a while on the service: a new name.
	fromConn, err := entity.NewTableFromConnectionString[Person](env.ConnectionString, env.TableName(t), env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := fromConn.CreateTableIfNotExists(ctx); err != nil {
		t.Fatalf("CreateTableIfNotExists on a new table: %v", err)
	}
	if err := fromConn.Insert(ctx, &Person{Dept: "p", ID: "again"}); err != nil {
		t.Fatal(err)
	}
}

func TestNilEntitiesAreErrors(t *testing.T) {
	ctx := context.Background()
	people := newPeople(t)
	for name, call := range map[string]func() error{
		"insert":    func() error { return people.Insert(ctx, nil) },
		"upsert":    func() error { return people.Upsert(ctx, nil, entity.Merge) },
		"update":    func() error { return people.Update(ctx, nil, entity.Merge) },
		"updateAny": func() error { return people.UpdateAny(ctx, nil, entity.Replace) },
		"delete":    func() error { return people.DeleteEntity(ctx, nil) },
	} {
		if err := call(); !errors.Is(err, entity.ErrInvalidType) {
			t.Errorf("%s(nil): %v", name, err)
		}
	}
	// An empty PartitionKey is a key like any other (tablekit's own
	// request path addresses it).
	if err := people.Upsert(ctx, &Person{Dept: "", ID: "r"}, entity.Merge); err != nil {
		t.Errorf("upsert with an empty PartitionKey: %v", err)
	}
}

func TestConstructorsRefuseBadNamesAndStrings(t *testing.T) {
	for _, name := range []string{"", "ab", "1abc", "has-dash", "tables", "Tables", strings.Repeat("a", 64)} {
		_, err := entity.NewTableFromService[Person](env.TableService, name)
		var ve *entity.ValidationError
		if !errors.As(err, &ve) || ve.Rule != entity.RuleTableName || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("table name %q: %v", name, err)
		}
	}
	for _, cs := range []string{"", "AccountName=a", "nonsense", "UseDevelopmentStorage=false"} {
		_, err := entity.NewTableFromConnectionString[Person](cs, "Orders", nil)
		if !errors.Is(err, entity.ErrInvalidConnectionString) {
			t.Errorf("connection string %q: %v", cs, err)
		}
	}
	// The emulator shorthand names Azurite's default endpoint.
	tbl, err := entity.NewTableFromConnectionString[Person]("UseDevelopmentStorage=true", "Orders", nil)
	if err != nil || tbl.Name() != "Orders" {
		t.Fatalf("UseDevelopmentStorage=true: %v", err)
	}
}

// Errors read as one line: the operation, the table and the answer; the
// HTTP exchange stays reachable through errors.As.
func TestServiceErrorIsOneLine(t *testing.T) {
	tbl, err := entity.NewTable[Person](env.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	p := &Person{Dept: "p", ID: "r", Name: "a"}
	if err := tbl.Insert(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	err = tbl.Insert(t.Context(), &Person{Dept: "p", ID: "r"})
	if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "409 EntityAlreadyExists") || !strings.HasPrefix(err.Error(), "entity: Insert on table tk") {
		t.Errorf("Error() = %q", err)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 409 {
		t.Errorf("the response error is not reachable: %v", err)
	}
}
