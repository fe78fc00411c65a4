package crypt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
)

var (
	env        *integration.Env
	exampleSeq atomic.Int64
)

func TestMain(m *testing.M) { integration.Main(m, &env) }

// onAzurite returns a new table of the test's Azurite, typed and
// encrypting, with the aztables client that reads it raw.
func onAzurite[T any](t testing.TB, e *integration.Env, cfg crypt.Config) (*crypt.Table[T], *aztables.Client) {
	t.Helper()
	name := e.TableName(t)
	tbl, err := entity.NewTableFromService[T](e.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.CreateTableIfNotExists(t.Context()); err != nil {
		t.Fatal(err)
	}
	if cfg.Key == nil {
		cfg.Key = newLocalKey(t, "kek-1", 1)
	}
	ct, err := crypt.New(tbl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ct, e.TableService.NewClient(name)
}

// rawBodies reads every stored entity as the service returns it, through
// aztables alone.
func rawBodies(t testing.TB, c *aztables.Client) [][]byte {
	t.Helper()
	var out [][]byte
	pager := c.NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Entities...)
	}
	return out
}

// TestOnAzurite writes encrypted entities every way (insert, replace,
// upsert, transaction, bulk), reads them back every way, and checks that
// what the service stores holds none of the plaintexts.
func TestOnAzurite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ct, raw := onAzurite[allTypes](t, env, crypt.Config{})
	a := allTypesValue()
	if err := ct.Insert(ctx, &a); err != nil {
		t.Fatal(err)
	}
	if a.ETag == "" {
		t.Fatal("Insert wrote no ETag back")
	}
	got, err := ct.Get(ctx, a.PartitionKey, a.RowKey)
	if err != nil {
		t.Fatal(err)
	}
	if got.ETag != a.ETag {
		t.Fatalf("ETag %q, want %q", got.ETag, a.ETag)
	}
	a.ETag = ""
	got.ETag = ""
	if !equalAllTypes(got, a) {
		t.Fatalf("Get:\n got %+v\nwant %+v", got, a)
	}

	// Replace under the ETag; a stale ETag is refused.
	got, _ = ct.Get(ctx, a.PartitionKey, a.RowKey)
	stale := got
	got.Str = "second secret string"
	if err := ct.Update(ctx, &got, entity.Replace); err != nil {
		t.Fatal(err)
	}
	stale.Str = "lost update"
	if err := ct.Update(ctx, &stale, entity.Replace); !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Fatalf("stale update: %v", err)
	}

	// A transaction and a bulk load, each entity under its own content key.
	batch := ct.NewBatch()
	for i := range 5 {
		e := allTypesValue()
		e.RowKey = fmt.Sprintf("b%03d", i)
		batch.Insert(&e)
	}
	if _, err := ct.Submit(ctx, batch); err != nil {
		t.Fatal(err)
	}
	var bulk []allTypes
	for i := range 30 {
		e := allTypesValue()
		e.PartitionKey = fmt.Sprintf("bulk%d", i%3)
		e.RowKey = fmt.Sprintf("r%03d", i)
		bulk = append(bulk, e)
	}
	if _, err := ct.BulkWrite(ctx, bulk, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for e, err := range ct.Query(ctx, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.I64 != a.I64 || !bytes.Equal(e.Bin, a.Bin) || e.Addr != a.Addr {
			t.Fatalf("queried %+v", e)
		}
		n++
	}
	if n != 36 {
		t.Fatalf("query read %d entities, want 36", n)
	}
	// Projection brings the protected properties along, so the signature
	// can be checked.
	page, err := ct.QueryPage(ctx, entity.Query{Filter: filter.PK("Sales"), Select: []string{"Plain"}}, "")
	if err != nil || len(page.Items) != 6 || page.Items[0].Plain != "plain" {
		t.Fatalf("projection: %d items, %v", len(page.Items), err)
	}

	// What the service stores.
	bodies := rawBodies(t, raw)
	if len(bodies) != 36 {
		t.Fatalf("%d raw entities", len(bodies))
	}
	for _, b := range bodies {
		for _, s := range append(secrets, "second secret") {
			if bytes.Contains(b, []byte(s)) {
				t.Fatalf("stored entity holds %q:\n%s", s, b)
			}
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m[crypt.MetadataProperty]; !ok {
			t.Fatalf("stored entity without metadata: %s", b)
		}
	}
}

func equalAllTypes(a, b allTypes) bool {
	return a.Str == b.Str && a.I32 == b.I32 && a.I64 == b.I64 && a.U16 == b.U16 && a.F64 == b.F64 &&
		a.F32 == b.F32 && a.Whole == b.Whole && a.Bool == b.Bool && a.Time.Equal(b.Time) && a.GUID == b.GUID &&
		bytes.Equal(a.Bin, b.Bin) && *a.Ptr == *b.Ptr && a.Nil == nil && b.Nil == nil && a.Addr == b.Addr &&
		slices.Equal(a.JSON, b.JSON) && a.Hook == b.Hook && a.Quoted == b.Quoted && a.SignedStr == b.SignedStr &&
		a.SignedI64 == b.SignedI64 && a.SignedTime.Equal(b.SignedTime) && a.Plain == b.Plain
}

// TestBeaconQueryOnAzurite runs an equality filter on an encrypted
// property through its beacon.
func TestBeaconQueryOnAzurite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ct, raw := onAzurite[beaconed](t, env, crypt.Config{Beacons: []string{"Email", "Age"}, BeaconKey: bytes.Repeat([]byte{5}, 32)})
	for i := range 10 {
		e := beaconed{PartitionKey: "p", RowKey: fmt.Sprint(i), Email: fmt.Sprintf("user%d@contoso.com", i%3), Age: int32(30 + i), Secret: "s", Level: int32(i)}
		if err := ct.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	var rows []string
	q := entity.Query{Filter: filter.PK("p").And(filter.Eq("Email", "user1@contoso.com"), filter.Ge("Level", int32(4)))}
	for e, err := range ct.Query(ctx, q) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, e.RowKey)
	}
	if !slices.Equal(rows, []string{"4", "7"}) {
		t.Fatalf("beacon query returned %v, want [4 7]", rows)
	}
	rows = nil
	for e, err := range ct.Query(ctx, entity.Query{Filter: filter.PK("p").And(filter.Ne("Age", int32(33)))}) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, e.RowKey)
	}
	if len(rows) != 9 || slices.Contains(rows, "3") {
		t.Fatalf("ne on a beacon returned %v", rows)
	}
	// Someone with write access copies entity 1's beacon onto entity 2
	// (whose own beacon is signed) and onto entity x (written without
	// beacons), so that the service matches them: the query refuses both.
	nobeacons, err := crypt.New(entityTable[beaconed](t, raw), crypt.Config{Key: newLocalKey(t, "kek-1", 1), Table: ct.Name()})
	if err != nil {
		t.Fatal(err)
	}
	if err := nobeacons.Insert(ctx, &beaconed{PartitionKey: "p", RowKey: "x", Email: "x@contoso.com"}); err != nil {
		t.Fatal(err)
	}
	e1, err := raw.GetEntity(ctx, "p", "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	var m1 map[string]any
	_ = json.Unmarshal(e1.Value, &m1)
	for _, rk := range []string{"2", "x"} {
		patch, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": rk, "_tkEq_Email@odata.type": "Edm.Binary", "_tkEq_Email": m1["_tkEq_Email"]})
		if _, err := raw.UpdateEntity(ctx, patch, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
			t.Fatal(err)
		}
		q := entity.Query{Filter: filter.PK("p").And(filter.RK(rk), filter.Eq("Email", "user1@contoso.com"))}
		refused := false
		for e, err := range ct.Query(ctx, q) {
			if !errors.Is(err, crypt.ErrTampered) {
				t.Fatalf("entity %s matched through a copied beacon: %+v %v", rk, e, err)
			}
			refused = true
		}
		if !refused {
			t.Fatalf("the service did not match entity %s by the copied beacon", rk)
		}
	}
	// A point read sees the changed signed beacon of entity 2, and ignores
	// the stray one of entity x, whose data authenticates.
	if _, err := ct.Get(ctx, "p", "2"); !errors.Is(err, crypt.ErrTampered) {
		t.Fatalf("point read of 2: %v", err)
	}
	if e, err := ct.Get(ctx, "p", "x"); err != nil || e.Email != "x@contoso.com" {
		t.Fatalf("point read of x: %+v %v", e, err)
	}
}

// TestRotationUnderConcurrentReads rewraps every entity under a new key
// while readers read them, with lost replies on the rewrapping merges and a
// crash (a checkpoint that fails) half-way: readers never fail, the
// rotation resumes from its token, and at the end every entity is under the
// new key, read by a table that no longer holds the old one.
func TestRotationUnderConcurrentReads(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	isMerge := func(r *http.Request) bool {
		return r.Method == http.MethodPatch || r.Header.Get("X-HTTP-Method") == "MERGE"
	}
	inj := faults.New(faults.Config{LoseReply: 0.2, Seed: 7, Match: isMerge})
	faulty := env.With(inj)
	old, next := newLocalKey(t, "kek-old", 1), newLocalKey(t, "kek-new", 2)
	ct, raw := onAzurite[person](t, faulty, crypt.Config{Key: old})
	const n = 45
	want := make(map[string]person, n)
	for i := range n {
		e := personValue(fmt.Sprintf("%03d", i))
		e.Email = fmt.Sprintf("user%d@contoso.com", i)
		if err := ct.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
		e.ETag = ""
		want[e.RowKey] = e
	}
	rotating, err := crypt.New(entityTable[person](t, raw), crypt.Config{Key: crypt.Keyring(next, old), Table: ct.Name()})
	if err != nil {
		t.Fatal(err)
	}
	// Readers with both keys, for the whole rotation.
	stop := make(chan struct{})
	var reads atomic.Int64
	var readErr atomic.Pointer[error]
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				rk := fmt.Sprintf("%03d", rng.IntN(n))
				got, err := rotating.Get(ctx, "Sales", rk)
				got.ETag = ""
				if err == nil && got != want[rk] {
					err = fmt.Errorf("read %+v, want %+v", got, want[rk])
				}
				if err != nil {
					readErr.Store(&err)
					return
				}
				reads.Add(1)
			}
		}()
	}
	// Run the rotation as a job would: it stops at a crash (a checkpoint
	// that fails after every second page) or at a lost reply azcore's
	// retries did not get past, and is resumed from its last checkpoint.
	crash := errors.New("crash")
	pages, runs, rewrapped := 0, 0, 0
	var token string
	for ; runs < 30; runs++ {
		res, err := rotating.Rotate(ctx, crypt.RotateOptions{PageSize: 10, From: token, Checkpoint: func(next string) error {
			token = next
			if pages++; pages%2 == 0 {
				return crash
			}
			return nil
		}})
		rewrapped += res.Rewrapped
		if err == nil {
			break
		}
		if !errors.Is(err, crash) && !errors.Is(err, faults.ErrInjected) {
			t.Fatalf("rotation run %d: %v", runs, err)
		}
	}
	if runs < 2 || rewrapped == 0 || rewrapped > n {
		t.Fatalf("%d runs rewrapped %d entities", runs+1, rewrapped)
	}
	// Again from the start: nothing left to do.
	inj.SetEnabled(false)
	res, err := rotating.Rotate(ctx, crypt.RotateOptions{})
	if err != nil || res.Current != n || res.Rewrapped != 0 {
		t.Fatalf("third run: %+v %v", res, err)
	}
	close(stop)
	wg.Wait()
	if p := readErr.Load(); p != nil {
		t.Fatalf("a reader failed during the rotation: %v", *p)
	}
	if reads.Load() == 0 {
		t.Fatal("no reads ran during the rotation")
	}
	if st := inj.Stats(); st.LostReplies == 0 {
		t.Fatalf("no merge reply was lost: %+v", st)
	}
	onlyNew, err := crypt.New(entityTable[person](t, raw), crypt.Config{Key: next, Table: ct.Name()})
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for e, err := range onlyNew.Query(ctx, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		e.ETag = ""
		if e != want[e.RowKey] {
			t.Fatalf("after rotation %+v", e)
		}
		count++
	}
	if count != n {
		t.Fatalf("read %d entities under the new key, want %d", count, n)
	}
	if _, err := ct.Get(ctx, "Sales", "000"); !errors.Is(err, crypt.ErrUnknownKey) {
		t.Fatalf("the old key alone: %v", err)
	}
}

func entityTable[T any](t testing.TB, c *aztables.Client) *entity.Table[T] {
	t.Helper()
	tbl, err := entity.NewTable[T](c)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestLegacyMigrationOnAzurite stores an entity as the .NET client wrote
// it, reads it, and moves it to the authenticated format with Rotate.
func TestLegacyMigrationOnAzurite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ct, raw := onAzurite[legacyPerson](t, env, crypt.Config{Key: legacyKey(t), Legacy: true})
	body, err := os.ReadFile("testdata/legacy/dotnet.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "odata.etag")
	delete(m, "Timestamp")
	stored, _ := json.Marshal(m)
	if _, err := raw.AddEntity(ctx, stored, nil); err != nil {
		t.Fatal(err)
	}
	got, err := ct.Get(ctx, "Sales", "000123")
	if err != nil || got.Email != "jonesj@contoso.com" || got.Name != "Jonathan Jones" {
		t.Fatalf("legacy read: %+v %v", got, err)
	}
	res, err := ct.Rotate(ctx, crypt.RotateOptions{Reencrypt: true})
	if err != nil || res.Reencrypted != 1 {
		t.Fatalf("migration: %+v %v", res, err)
	}
	after := rawBodies(t, raw)
	if len(after) != 1 || bytes.Contains(after[0], []byte("_ClientEncryptionMetadata")) || !bytes.Contains(after[0], []byte(crypt.MetadataProperty)) {
		t.Fatalf("migrated entity: %s", after)
	}
	strict, err := crypt.New(entityTable[legacyPerson](t, raw), crypt.Config{Key: legacyKey(t), Table: ct.Name()})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := strict.Get(ctx, "Sales", "000123"); err != nil || got.Email != "jonesj@contoso.com" {
		t.Fatalf("after migration, without Legacy: %+v %v", got, err)
	}
}

// TestLostRepliesOnAzurite: lost replies on encrypted inserts and
// replaces are reported as entity reports them, and the stored entity
// always decrypts.
func TestLostRepliesOnAzurite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	inj := faults.New(faults.Config{LoseReply: 0.3, Seed: 3})
	ct, _ := onAzurite[person](t, env.With(inj), crypt.Config{})
	for i := range 20 {
		e := personValue(fmt.Sprintf("%03d", i))
		err := ct.Upsert(ctx, &e, entity.Replace)
		if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) {
			t.Fatalf("upsert %d: %v", i, err)
		}
	}
	inj.SetEnabled(false)
	for e, err := range ct.Query(ctx, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Email != "jonesj@contoso.com" {
			t.Fatalf("%+v", e)
		}
	}
	if inj.Stats().LostReplies == 0 {
		t.Fatal("no reply was lost")
	}
}
