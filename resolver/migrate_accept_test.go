package resolver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/resolver"
	"github.com/tablekit/tablekit/throttle"
)

// outage is a per-retry policy that, while on, answers every request with
// the service's 503 Server Busy without sending it: the service (or the
// network to it) unavailable for longer than azcore retries.
// Armed, it turns on at the next write.
type outage struct{ armed, on atomic.Bool }

func (o *outage) Do(req *policy.Request) (*http.Response, error) {
	if o.armed.Load() && req.Raw().Method != http.MethodGet {
		o.on.Store(true)
	}
	if !o.on.Load() {
		return req.Next()
	}
	body := `{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"The server is busy."}}}`
	h := http.Header{}
	h.Set("x-ms-error-code", "ServerBusy")
	h.Set("Content-Type", "application/json")
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Server Busy", Header: h,
		Body: io.NopCloser(bytes.NewReader([]byte(body))), Request: req.Raw()}, nil
}

// noRetries makes a view's clients give up at the first failed try.
func noRetries(o *azcore.ClientOptions) { o.Retry = policy.RetryOptions{MaxRetries: -1} }

// A migration whose service becomes unavailable while it writes its second
// page (its writes and reads answered 503 beyond azcore's retries) ends with an
// error, and the last checkpoint it gave is before the page it could not
// write: a fresh Table resumed from that checkpoint upgrades every row —
// none is skipped because its write failed for a reason that was not the
// row's. The rows are read back raw.
func TestMigrateResumesAfterAnOutageWithoutSkippingRows(t *testing.T) {
	const n = 12
	name := migrationRows(t, n)
	down := &outage{}
	var token string
	pages := 0
	rep, err := migrateTable(t, env.With(down).WithOptions(noRetries), name).Migrate(t.Context(), resolver.MigrateOptions{PageSize: 4,
		Checkpoint: func(c resolver.MigrateCheckpoint) error {
			pages++
			token = c.Token
			if pages == 1 {
				down.armed.Store(true) // the service goes away at the second page's first write
			}
			return nil
		}})
	if err == nil {
		t.Fatalf("a migration through an outage succeeded: %+v", rep)
	}
	var me *resolver.MigrateError
	if errors.As(err, &me) {
		t.Errorf("rows the service did not answer for are reported as rows that cannot be upgraded: %v", err)
	}
	if !errors.Is(err, entity.ErrInvalid) && !bytes.Contains([]byte(err.Error()), []byte("resolver: migrate")) {
		t.Errorf("error %q does not name the package", err)
	}
	if pages != 1 || token == "" {
		t.Fatalf("%d checkpoints, last token %q: want exactly the first page's", pages, token)
	}
	t.Logf("first run: %+v: %v", rep, err)
	again, err := migrateTable(t, env, name).Migrate(t.Context(), resolver.MigrateOptions{PageSize: 4, Resume: token})
	if err != nil {
		t.Fatalf("resumed run: %+v %v", again, err)
	}
	raw := env.TableService.NewClient(name)
	for i := range n {
		checkUpgraded(t, raw, i, fmt.Sprintf("Ann%d Lee", i), 0)
	}
}

// counter is a per-retry policy that counts the tries it sees.
type counter struct{ n atomic.Int64 }

func (c *counter) Do(req *policy.Request) (*http.Response, error) {
	c.n.Add(1)
	return req.Next()
}

// A resume token that is not a checkpoint of a migration of this table —
// tampered with, of another table's migration, of a plain query of this
// table, or of a migration with another Filter — is refused with an error
// matching entity.ErrInvalidToken and entity.ErrInvalid before any
// request, and nothing is written; a checkpoint of this table's own
// migration resumes it.
func TestMigrateRefusesAForeignResumeToken(t *testing.T) {
	const n = 6
	mine, other := migrationRows(t, n), migrationRows(t, n)
	tokenOf := func(name string, f filter.Expr) string {
		t.Helper()
		var token string
		errStop := errors.New("stop after a page")
		_, err := migrateTable(t, env, name).Migrate(t.Context(), resolver.MigrateOptions{PageSize: 2, Filter: f,
			Checkpoint: func(c resolver.MigrateCheckpoint) error { token = c.Token; return errStop }})
		if !errors.Is(err, errStop) || token == "" {
			t.Fatalf("a first page: %v, token %q", err, token)
		}
		return token
	}
	own := tokenOf(mine, filter.Expr{})
	foreign := tokenOf(other, filter.Expr{})
	filtered := tokenOf(mine, filter.PK("p1"))
	// A plain query's token of this table, at the same place.
	page, err := entity.NewTable[entity.DynamicEntity](env.TableService.NewClient(mine))
	if err != nil {
		t.Fatal(err)
	}
	p, err := page.QueryPage(t.Context(), entity.Query{PageSize: 2}, "")
	if err != nil || p.Next == "" {
		t.Fatalf("a plain page: %v, %q", err, p.Next)
	}
	tampered := []byte(own)
	tampered[len(tampered)/2] ^= 1
	if tampered[len(tampered)/2] == '-' || tampered[len(tampered)/2] == '_' {
		tampered[len(tampered)/2] = 'A'
	}
	for what, token := range map[string]string{
		"tampered":          string(tampered),
		"of another table":  foreign,
		"of a plain query":  p.Next,
		"of another Filter": filtered,
		"not base64":        "%%%",
		"truncated":         own[:len(own)-3],
	} {
		c := &counter{}
		rep, err := migrateTable(t, env.With(c), mine).Migrate(t.Context(), resolver.MigrateOptions{PageSize: 2, Resume: token})
		if !errors.Is(err, entity.ErrInvalidToken) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("a token %s: %+v %v, want entity.ErrInvalidToken and entity.ErrInvalid", what, rep, err)
		}
		if c.n.Load() != 0 {
			t.Errorf("a token %s: %d requests sent before it was refused", what, c.n.Load())
		}
	}
	// The first pages of the two runs on this table (p0's c00 and c02,
	// p1's c01 and c03) are upgraded; nothing else was written.
	raw := env.TableService.NewClient(mine)
	for i := range n {
		d, _ := storedRow(t, raw, i)
		if up := d.Properties["EntityType"] == "Customer.v2"; up != (i < 4) {
			t.Errorf("row %d stored as %v", i, d.Properties["EntityType"])
		}
	}
	rep, err := migrateTable(t, env, mine).Migrate(t.Context(), resolver.MigrateOptions{PageSize: 2, Resume: own})
	if err != nil || rep.Read != n-2 || rep.Upgraded != 2 {
		t.Fatalf("resumed from its own checkpoint: %+v %v, want the %d rows after the first page read, c04 and c05 upgraded", rep, err, n-2)
	}
	for i := range n {
		checkUpgraded(t, raw, i, fmt.Sprintf("Ann%d Lee", i), 0)
	}
}

// Rows the schema does not know — a newer version of a registered kind
// (Customer.v3, written by a newer program), another kind, a row with no
// EntityType — are counted Unknown and left exactly as they are (their
// ETags unchanged, read raw), with a lenient schema and with a Strict one
// alike: Strict is about reads, and a migration's run is not a failure
// because the table holds other types. The v1 rows beside them are
// upgraded.
func TestMigrateLeavesUnknownAndNewerRowsAlone(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			name := migrationRows(t, 4)
			raw := env.TableService.NewClient(name)
			others := []string{
				`{"PartitionKey":"p0","RowKey":"x1","EntityType":"Customer.v3","Full":"Ann Lee"}`,
				`{"PartitionKey":"p0","RowKey":"x2","EntityType":"Order.v1","Total":3}`,
				`{"PartitionKey":"p1","RowKey":"x3","Name":"no type at all"}`,
			}
			etags := map[string]azcore.ETag{}
			for _, body := range others {
				resp, err := raw.AddEntity(t.Context(), []byte(body), nil)
				if err != nil {
					t.Fatal(err)
				}
				etags[body] = resp.ETag
			}
			_, v2 := customerSchemas(t)
			if strict {
				var err error
				if v2, err = resolver.NewSchema(resolver.Config{Strict: true}, resolver.Register[Customer]("Customer.v2"),
					resolver.Upgrade("Customer.v1", upgradeCustomer)); err != nil {
					t.Fatal(err)
				}
			}
			tbl, err := resolver.NewTable(raw, v2)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{})
			if err != nil || rep.Unknown != 3 || rep.Upgraded != 4 || len(rep.Failed) != 0 {
				t.Fatalf("migrate: %+v %v, want 3 unknown and 4 upgraded", rep, err)
			}
			for _, body := range others {
				var k struct{ PartitionKey, RowKey string }
				if err := json.Unmarshal([]byte(body), &k); err != nil {
					t.Fatal(err)
				}
				resp, err := raw.GetEntity(t.Context(), k.PartitionKey, k.RowKey, nil)
				if err != nil {
					t.Fatal(err)
				}
				if resp.ETag != etags[body] {
					t.Errorf("%s/%s was written: ETag %s, was %s", k.PartitionKey, k.RowKey, resp.ETag, etags[body])
				}
			}
			for i := range 4 {
				checkUpgraded(t, raw, i, fmt.Sprintf("Ann%d Lee", i), 0)
			}
		})
	}
}

// Two bad rows among hundreds, over pages of 200 rows and transactions of
// 100 (with TABLEKIT_FULL=1 among 2,500, over the service's pages of
// 1,000): one whose upgrade function returns an error (the last row of the
// first page), one whose upgrade panics (the first of the second page).
// Each fails alone, named with its keys; every other row is upgraded (read
// raw). A second run reports the same two rows, upgrades nothing and
// counts the rest Current.
func TestMigrateOneBadRowOverPages(t *testing.T) {
	n, page := 500, 200
	if os.Getenv("TABLEKIT_FULL") == "1" {
		n, page = 2500, 0 // the service's 1,000
	}
	last := 999
	if page > 0 {
		last = page - 1
	}
	bad := map[int]string{last: "poison pill", last + 1: "panic now"}
	v1, _ := customerSchemas(t)
	v2, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Customer]("Customer.v2"),
		resolver.Upgrade("Customer.v1", func(old *CustomerV1) (*Customer, error) {
			if old.Name == "panic now" {
				panic("an upgrade function's bug")
			}
			return upgradeCustomer(old)
		}))
	if err != nil {
		t.Fatal(err)
	}
	client := env.Table(t)
	old, err := resolver.NewTable(client, v1)
	if err != nil {
		t.Fatal(err)
	}
	b := old.NewBatch()
	for i := range n {
		name := bad[i]
		if name == "" {
			name = fmt.Sprintf("Ann%d Lee", i)
		}
		b.Insert(&CustomerV1{PartitionKey: "p", RowKey: fmt.Sprintf("%05d", i), Name: name})
		if b.Len() == 100 {
			if _, err := old.Submit(t.Context(), b); err != nil {
				t.Fatal(err)
			}
			b = old.NewBatch()
		}
	}
	tbl, err := resolver.NewTable(client, v2)
	if err != nil {
		t.Fatal(err)
	}
	check := func(run string, rep resolver.MigrateReport, err error, upgraded int64) {
		t.Helper()
		var me *resolver.MigrateError
		if !errors.As(err, &me) || me.Failed != 2 {
			t.Fatalf("%s: %v, want a MigrateError of 2 rows", run, err)
		}
		var keys []string
		for _, f := range rep.Failed {
			keys = append(keys, f.PartitionKey+"/"+f.RowKey)
			if !errors.Is(f.Err, resolver.ErrUpgrade) {
				t.Errorf("%s: %v does not match ErrUpgrade", run, f)
			}
		}
		slices.Sort(keys)
		if want := []string{fmt.Sprintf("p/%05d", last), fmt.Sprintf("p/%05d", last+1)}; !slices.Equal(keys, want) {
			t.Errorf("%s: failed %q, want %q", run, keys, want)
		}
		if rep.Read != int64(n) || rep.Upgraded != upgraded || rep.Current != int64(n)-2-upgraded {
			t.Errorf("%s: %+v, want %d read, %d upgraded", run, rep, n, upgraded)
		}
	}
	rep, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{PageSize: page})
	check("first run", rep, err, int64(n)-2)
	count := map[string]int{}
	bags, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	for d, err := range bags.Query(t.Context(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		count[fmt.Sprint(d.Properties["EntityType"])]++
		var i int
		fmt.Sscanf(d.RowKey, "%05d", &i)
		if _, isBad := bad[i]; isBad && d.Properties["Name"] != bad[i] {
			t.Errorf("bad row %s changed: %v", d.RowKey, d.Properties)
		}
	}
	if count["Customer.v2"] != n-2 || count["Customer.v1"] != 2 {
		t.Errorf("stored types %v, want %d v2 and 2 v1", count, n-2)
	}
	again, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{PageSize: page})
	check("second run", again, err, 0)
}

// everyWrite is a per-retry policy that runs fn before each write it sees.
type everyWrite struct{ fn func() }

func (h everyWrite) Do(req *policy.Request) (*http.Response, error) {
	if isWrite(req.Raw()) {
		h.fn()
	}
	return req.Next()
}

// A row another writer changes before every write of the migration's (its
// Edits merged up by one each time) is read again and tried again
// MigrateOptions.Attempts times, then named in the report with its keys
// and an error matching entity.ErrPreconditionFailed, left as that writer
// left it (every edit kept, still v1); the rows beside it are upgraded.
func TestMigrateRowThatKeepsChangingFailsAfterItsAttempts(t *testing.T) {
	const n = 6
	name := migrationRows(t, n)
	raw := env.TableService.NewClient(name)
	edits := 0
	h := everyWrite{fn: func() {
		edits++
		if _, err := raw.UpdateEntity(context.Background(), fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":%q,"Edits@odata.type":"Edm.Int64","Edits":"%d"}`, rowPK(2), rowRK(2), edits),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
			t.Error(err)
		}
	}}
	rep, err := migrateTable(t, env.With(h), name).Migrate(t.Context(), resolver.MigrateOptions{Attempts: 3, Concurrency: 1})
	var me *resolver.MigrateError
	if !errors.As(err, &me) || me.Failed != 1 || me.First.PartitionKey != rowPK(2) || me.First.RowKey != rowRK(2) || !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Fatalf("migrate: %+v %v, want row 2 failed on its condition", rep, err)
	}
	if rep.Upgraded != n-1 || rep.Raced < 3 {
		t.Errorf("report %+v, want %d upgraded and row 2 raced 3 times or more", rep, n-1)
	}
	d, _ := storedRow(t, raw, 2)
	if d.Properties["EntityType"] != "Customer.v1" || d.Properties["Edits"] != int64(edits) || d.Properties["Name"] != "Ann2 Lee" {
		t.Errorf("row 2 stored %v, want the v1 row with the other writer's %d edits", d.Properties, edits)
	}
	for _, i := range []int{0, 1, 3, 4, 5} {
		checkUpgraded(t, raw, i, fmt.Sprintf("Ann%d Lee", i), 0)
	}
}

type Visit struct {
	PartitionKey, RowKey string
	ETag                 string `table:",etag"`
	Who                  string
	At                   time.Time
}

// An upgrade that makes one row invalid for the service — a string that
// is not UTF-8, a DateTime before 1601 (a forgotten time.Time field),
// 64 KiB of text in one property — fails that row alone, before it is
// sent: it is named in the report with an error matching
// entity.ErrInvalid, left as it was, and every other row of its
// transaction is upgraded.
func TestMigrateInvalidUpgradeFailsAlone(t *testing.T) {
	v1, _ := customerSchemas(t)
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	v2, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Visit]("Visit.v2"),
		resolver.Upgrade("Customer.v1", func(old *CustomerV1) (*Visit, error) {
			v := &Visit{Who: old.Name, At: at}
			switch old.Name {
			case "utf8":
				v.Who = "caf\xe9"
			case "date":
				v.At = time.Time{}
			case "long":
				v.Who = strings.Repeat("é", 40_000)
			}
			return v, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	client := env.Table(t)
	old, err := resolver.NewTable(client, v1)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "utf8", "b", "date", "c", "long", "d"}
	b := old.NewBatch()
	for i, nm := range names {
		b.Insert(&CustomerV1{PartitionKey: "p", RowKey: fmt.Sprint(i), Name: nm})
	}
	if _, err := old.Submit(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	tbl, err := resolver.NewTable(client, v2)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{})
	var me *resolver.MigrateError
	if !errors.As(err, &me) || me.Failed != 3 || rep.Upgraded != 4 {
		t.Fatalf("migrate: %+v %v, want 3 rows failed and 4 upgraded", rep, err)
	}
	failed := map[string]bool{}
	for _, f := range rep.Failed {
		failed[f.RowKey] = true
		if f.PartitionKey != "p" || !errors.Is(f.Err, entity.ErrInvalid) {
			t.Errorf("failure %v: want its keys and entity.ErrInvalid", f)
		}
	}
	for i, nm := range names {
		resp, err := client.GetEntity(t.Context(), "p", fmt.Sprint(i), nil)
		if err != nil {
			t.Fatal(err)
		}
		var d entity.DynamicEntity
		if err := entity.Unmarshal(resp.Value, &d); err != nil {
			t.Fatal(err)
		}
		bad := len(nm) > 1
		if failed[fmt.Sprint(i)] != bad {
			t.Errorf("row %d (%s): failed %v", i, nm, failed[fmt.Sprint(i)])
		}
		want := map[bool]string{true: "Customer.v1", false: "Visit.v2"}[bad]
		if d.Properties["EntityType"] != want || (!bad && d.Properties["Who"] != nm) {
			t.Errorf("row %d (%s) stored %v, want %s", i, nm, d.Properties, want)
		}
	}
}

// A ByFunc schema whose stamp gives the upgrade another RowKey than the
// row's (v2 keys carry a "cust_" prefix the v1 rows lack) cannot be
// migrated in place: Migrate replaces a row at its own keys. Each such row
// is named in the report with an error matching resolver.ErrUpgrade and
// left as it is — never counted Gone (it is there) nor written at the
// other key; a second run says the same.
func TestMigrateUpgradeThatMovesTheKeyFailsItsRow(t *testing.T) {
	const n = 4
	name := migrationRows(t, n)
	resolve := func(pk, rk string, p resolver.Props) string { return p.String("EntityType") }
	stamp := func(typeName string, e *entity.DynamicEntity) error {
		e.Set("EntityType", typeName)
		if !strings.HasPrefix(e.RowKey, "cust_") {
			e.RowKey = "cust_" + e.RowKey
		}
		return nil
	}
	s, err := resolver.NewSchema(resolver.Config{Discriminator: resolver.ByFunc(resolve, stamp)},
		resolver.Register[Customer]("Customer.v2"), resolver.Upgrade("Customer.v1", upgradeCustomer))
	if err != nil {
		t.Fatal(err)
	}
	raw := env.TableService.NewClient(name)
	tbl, err := resolver.NewTable(raw, s)
	if err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		rep, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{})
		var me *resolver.MigrateError
		if !errors.As(err, &me) || me.Failed != n || rep.Gone != 0 || rep.Upgraded != 0 || !errors.Is(err, resolver.ErrUpgrade) {
			t.Fatalf("run %d: %+v %v, want the %d rows failed with ErrUpgrade, none gone", run+1, rep, err, n)
		}
	}
	count := 0
	for _, err := range tbl.Bags().Query(t.Context(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		count++
	}
	if count != n {
		t.Errorf("%d rows stored, want the %d v1 rows alone", count, n)
	}
	for i := range n {
		if d, _ := storedRow(t, raw, i); d.Properties["EntityType"] != "Customer.v1" {
			t.Errorf("row %d stored as %v", i, d.Properties)
		}
	}
}

// accounted fails t unless every row a report read is counted once:
// upgraded, current, unknown, gone or failed.
func accounted(t *testing.T, rep resolver.MigrateReport) {
	t.Helper()
	if sum := rep.Upgraded + rep.Current + rep.Unknown + rep.Gone + int64(len(rep.Failed)); sum != rep.Read {
		t.Errorf("report %+v counts %d rows, read %d", rep, sum, rep.Read)
	}
}

// Rows another writer replaces between Migrate's read and its write — one
// by a row of a type the schema does not know, one by a current v2 row —
// are read again and counted as what they are now, Unknown and Current,
// and left as that writer left them; every row read is counted once.
func TestMigrateCountsARowAsWhatItBecame(t *testing.T) {
	const n = 6
	name := migrationRows(t, n)
	raw := env.TableService.NewClient(name)
	replace := func(body string) {
		if _, err := raw.UpsertEntity(context.Background(), []byte(body), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
			t.Error(err)
		}
	}
	h := &hook{match: isWrite, fn: func() {
		replace(fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"EntityType":"Order.v1","Total":3}`, rowPK(1), rowRK(1)))
		replace(fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"EntityType":"Customer.v2","First":"Zed","Last":"Zee","Edits@odata.type":"Edm.Int64","Edits":"5"}`, rowPK(3), rowRK(3)))
	}}
	rep, err := migrateTable(t, env.With(h), name).Migrate(t.Context(), resolver.MigrateOptions{})
	if err != nil {
		t.Fatalf("migrate: %+v %v", rep, err)
	}
	if rep.Unknown != 1 || rep.Current != 1 || rep.Upgraded != n-2 {
		t.Errorf("report %+v, want 1 unknown, 1 current, %d upgraded", rep, n-2)
	}
	accounted(t, rep)
	if d, _ := storedRow(t, raw, 1); d.Properties["EntityType"] != "Order.v1" {
		t.Errorf("row 1 stored %v", d.Properties)
	}
	checkUpgraded(t, raw, 3, "Zed Zee", 5)
}

// Two migrations of one table at once (two deployments of the new
// program): both finish, every row ends upgraded once from its v1 row
// (read raw), each run counts every row it read once, and a third run
// upgrades nothing. A row both runs raced for may be counted Upgraded by
// both: each found its own upgrade stored (see Migrate's doc).
func TestTwoMigrationsAtOnce(t *testing.T) {
	const n = 60
	name := migrationRows(t, n)
	var reps [2]resolver.MigrateReport
	var errs [2]error
	done := make(chan int)
	for i := range 2 {
		go func() {
			reps[i], errs[i] = migrateTable(t, env, name).Migrate(t.Context(), resolver.MigrateOptions{PageSize: 7, Concurrency: 2})
			done <- i
		}()
	}
	<-done
	<-done
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("run %d: %+v %v", i, reps[i], errs[i])
		}
		accounted(t, reps[i])
		if reps[i].Read != n {
			t.Errorf("run %d read %d rows, want %d", i, reps[i].Read, n)
		}
	}
	if up := reps[0].Upgraded + reps[1].Upgraded; up < n {
		t.Errorf("the runs upgraded %d rows together, want at least %d", up, n)
	}
	t.Logf("runs: %+v / %+v", reps[0], reps[1])
	raw := env.TableService.NewClient(name)
	for i := range n {
		checkUpgraded(t, raw, i, fmt.Sprintf("Ann%d Lee", i), 0)
	}
	again, err := migrateTable(t, env, name).Migrate(t.Context(), resolver.MigrateOptions{})
	if err != nil || again.Upgraded != 0 || again.Current != n {
		t.Fatalf("a third run: %+v %v", again, err)
	}
}

// A row that raced (another writer changed it between the page read and
// the transaction) is upgraded on its own; the reply of that single write
// is lost, and before azcore's resend a third writer merges an edit into
// the row (or replaces it with a v1 row of its own, or deletes it). The
// migration succeeds; the merge is kept on the upgraded row, the
// replacement is upgraded, the deletion stays; the report counts the row
// once and every row read once.
func TestMigrateLostReplyOnASingleRowWriteBesideAWriter(t *testing.T) {
	for _, kind := range []string{"merge", "replace", "delete"} {
		t.Run(kind, func(t *testing.T) {
			const n = 6
			name := migrationRows(t, n)
			raw := env.TableService.NewClient(name)
			// Before the transaction: row 2's v1 name changes, so it races.
			race := &hook{match: isWrite, fn: func() {
				if _, err := raw.UpsertEntity(context.Background(), v1Body(2, "Bob Ray", 3), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
					t.Error(err)
				}
			}}
			inj := faults.New(faults.Config{})
			single := func(r *http.Request) bool {
				return r.Method == http.MethodPut && strings.Contains(r.URL.String(), rowRK(2))
			}
			inj.LoseNextThen(1, single, func(*http.Request) {
				var err error
				switch kind {
				case "merge":
					_, err = raw.UpdateEntity(context.Background(), fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":%q,"Edits@odata.type":"Edm.Int64","Edits":"42"}`, rowPK(2), rowRK(2)),
						&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
				case "replace":
					_, err = raw.UpsertEntity(context.Background(), v1Body(2, "Cy Dee", 9), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
				case "delete":
					_, err = raw.DeleteEntity(context.Background(), rowPK(2), rowRK(2), nil)
				}
				if err != nil {
					t.Error(err)
				}
			})
			view := env.With(race, inj).WithOptions(func(o *azcore.ClientOptions) {
				o.Retry = policy.RetryOptions{MaxRetries: 3, RetryDelay: 5 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}
			})
			rep, err := migrateTable(t, view, name).Migrate(t.Context(), resolver.MigrateOptions{})
			if err != nil {
				t.Fatalf("migrate: %+v %v", rep, err)
			}
			if inj.Stats().LostReplies != 1 {
				t.Fatalf("%d replies lost: the single-row write was not made", inj.Stats().LostReplies)
			}
			accounted(t, rep)
			switch kind {
			case "merge":
				checkUpgraded(t, raw, 2, "Bob Ray", 42)
			case "replace":
				// Upgraded from the replacement in this run, or — when the
				// write's outcome was settled as done — the replacement
				// itself, which the next run upgrades.
				if d, _ := storedRow(t, raw, 2); d.Properties["EntityType"] != "Customer.v1" {
					checkUpgraded(t, raw, 2, "Cy Dee", 9)
				}
			case "delete":
				if d, found := storedRow(t, raw, 2); found {
					t.Errorf("the deleted row is back: %v", d.Properties)
				}
			}
			for _, i := range []int{0, 1, 3, 4, 5} {
				checkUpgraded(t, raw, i, fmt.Sprintf("Ann%d Lee", i), 0)
			}
			t.Logf("%s: %+v", kind, rep)
			again, err := migrateTable(t, env, name).Migrate(t.Context(), resolver.MigrateOptions{})
			if err != nil {
				t.Fatalf("a second run: %+v %v", again, err)
			}
			if kind == "replace" {
				checkUpgraded(t, raw, 2, "Cy Dee", 9)
			}
		})
	}
}

// Migrate under a simulated service that serves 200 entities/s per
// partition, through an account whose Limiter is paced to the same: every
// row ends upgraded (read raw), none failed, and fewer than 1% of the
// requests were throttled; the Limiter paced every try.
func TestMigrateThrottled(t *testing.T) {
	const partitions, per = 3, 200
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	raw := env.TableService.NewClient(name)
	v1, _ := customerSchemas(t)
	old, err := resolver.NewTable(raw, v1)
	if err != nil {
		t.Fatal(err)
	}
	for p := range partitions {
		b := old.NewBatch()
		for i := range per {
			b.Insert(&CustomerV1{PartitionKey: fmt.Sprintf("p%d", p), RowKey: fmt.Sprintf("%04d", i), Name: fmt.Sprintf("Ann%d Lee%d", i, p)})
			if b.Len() == 100 {
				if _, err := old.Submit(t.Context(), b); err != nil {
					t.Fatal(err)
				}
				b = old.NewBatch()
			}
		}
	}
	lim, err := throttle.NewLimiter(throttle.Config{PartitionRate: 200})
	if err != nil {
		t.Fatal(err)
	}
	acct, sim := env.ThrottledAccount(t, lim, throttle.SimConfig{PartitionRate: 200})
	client, err := acct.Table(name)
	if err != nil {
		t.Fatal(err)
	}
	_, v2 := customerSchemas(t)
	tbl, err := resolver.NewTable(client, v2)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{PageSize: 300})
	if err != nil || rep.Upgraded != partitions*per {
		t.Fatalf("migrate: %+v %v", rep, err)
	}
	st := sim.Stats()
	t.Logf("%+v; simulator %+v; limiter %+v", rep, st, lim.Stats())
	if float64(st.Throttled) >= 0.01*float64(st.Requests) {
		t.Errorf("%d of %d requests throttled, want under 1%%", st.Throttled, st.Requests)
	}
	if lim.Stats().Requests != st.Requests {
		t.Errorf("the Limiter paced %d of the %d tries the Simulator saw", lim.Stats().Requests, st.Requests)
	}
	n := 0
	for d, err := range tbl.Bags().Query(t.Context(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if d.Properties["EntityType"] != "Customer.v2" {
			t.Fatalf("%s/%s stored as %v", d.PartitionKey, d.RowKey, d.Properties["EntityType"])
		}
	}
	if n != partitions*per {
		t.Fatalf("%d rows stored", n)
	}
}

// Upgrades that make 100 rows of a partition larger together than a
// transaction's 4 MiB (about 120 KB each) are still written in
// transactions — the chunk split until each fits, also when it is the
// service that refuses the size (Cosmos DB's 2 MiB, under
// TABLEKIT_PROFILE=cosmos) — not one request per row: every row is
// upgraded (read raw) in a handful of requests.
func TestMigrateLargeUpgradesStillGoInTransactions(t *testing.T) {
	const n = 100
	v1, _ := customerSchemas(t)
	v2, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Gadget]("Gadget.v2"),
		resolver.Upgrade("Customer.v1", func(old *CustomerV1) (*Gadget, error) {
			return &Gadget{Label: old.Name + strings.Repeat("y", 30_000), Blob: strings.Repeat("x", 30_000)}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	client := env.TableService.NewClient(name)
	old, err := resolver.NewTable(client, v1)
	if err != nil {
		t.Fatal(err)
	}
	b := old.NewBatch()
	for i := range n {
		b.Insert(&CustomerV1{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i), Name: fmt.Sprint("g", i)})
	}
	if _, err := old.Submit(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	c := &counter{}
	tbl, err := resolver.NewTable(env.With(c).TableService.NewClient(name), v2)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{})
	if err != nil || rep.Upgraded != n {
		t.Fatalf("migrate: %+v %v", rep, err)
	}
	if c.n.Load() > 10 {
		t.Errorf("%d requests for %d rows: the upgrades were not written in transactions", c.n.Load(), n)
	}
	for i := range n {
		resp, err := client.GetEntity(t.Context(), "p", fmt.Sprintf("%03d", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		var d entity.DynamicEntity
		if err := entity.Unmarshal(resp.Value, &d); err != nil {
			t.Fatal(err)
		}
		if d.Properties["EntityType"] != "Gadget.v2" || len(fmt.Sprint(d.Properties["Blob"])) != 30_000 {
			t.Fatalf("row %d stored as %v", i, d.Properties["EntityType"])
		}
	}
}

// A migration of several partitions written at once (Concurrency 3),
// killed at a request — before it is sent, or once the service executed
// it — and resumed by a fresh Table from its last checkpoint: every row
// ends upgraded from its v1 row (read raw), and a further run upgrades
// nothing.
func TestMigrateKilledMidPageAcrossPartitionsResumes(t *testing.T) {
	const parts, per = 3, 40
	for _, k := range []int{1, 4, 7, 10} {
		for _, executed := range []bool{false, true} {
			t.Run(fmt.Sprintf("after %d executed=%v", k, executed), func(t *testing.T) {
				name := env.TableName(t)
				if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
					t.Fatal(err)
				}
				raw := env.TableService.NewClient(name)
				v1, _ := customerSchemas(t)
				old, err := resolver.NewTable(raw, v1)
				if err != nil {
					t.Fatal(err)
				}
				for p := range parts {
					b := old.NewBatch()
					for i := range per {
						b.Insert(&CustomerV1{PartitionKey: fmt.Sprintf("p%d", p), RowKey: fmt.Sprintf("%03d", i), Name: fmt.Sprintf("A%d B%d", i, p), Edits: int64(i)})
					}
					if _, err := old.Submit(t.Context(), b); err != nil {
						t.Fatal(err)
					}
				}
				killer := crashtest.NewKiller(k)
				if executed {
					killer = crashtest.NewExecutedKiller(k)
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				go func() {
					select {
					case <-killer.Killed():
						cancel()
					case <-ctx.Done():
					}
				}()
				var token string
				opts := resolver.MigrateOptions{PageSize: 25, Concurrency: 3}
				crashed := opts
				crashed.Checkpoint = func(c resolver.MigrateCheckpoint) error { token = c.Token; return nil }
				_, err = migrateTable(t, env.With(killer), name).Migrate(ctx, crashed)
				if !killer.Fired() {
					t.Fatalf("not killed after %d requests: %v", k, err)
				}
				if err == nil {
					t.Fatal("a killed migration reported success")
				}
				resumed := opts
				resumed.Resume = token
				if rep, err := migrateTable(t, env, name).Migrate(t.Context(), resumed); err != nil {
					t.Fatalf("resumed from %q: %+v %v", token, rep, err)
				}
				bags, err := entity.NewTable[entity.DynamicEntity](raw)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for d, err := range bags.Query(t.Context(), entity.Query{}) {
					if err != nil {
						t.Fatal(err)
					}
					n++
					var i, p int
					fmt.Sscanf(d.RowKey, "%03d", &i)
					fmt.Sscanf(d.PartitionKey, "p%d", &p)
					if d.Properties["EntityType"] != "Customer.v2" || d.Properties["First"] != fmt.Sprintf("A%d", i) || d.Properties["Last"] != fmt.Sprintf("B%d", p) || d.Properties["Edits"] != int64(i) {
						t.Errorf("%s/%s stored %v", d.PartitionKey, d.RowKey, d.Properties)
					}
				}
				if n != parts*per {
					t.Fatalf("%d rows stored", n)
				}
				again, err := migrateTable(t, env, name).Migrate(t.Context(), resolver.MigrateOptions{})
				if err != nil || again.Upgraded != 0 || again.Current != parts*per {
					t.Fatalf("a further run: %+v %v", again, err)
				}
			})
		}
	}
}

// A migration whose writes meet 503 Server Busy that never ends (azcore
// retrying each request twice) stops at the first row it cannot write,
// with the service's 503 in its error, after a bounded number of tries —
// it does not spend MigrateOptions.Attempts on every row of the table —
// and gives no checkpoint; a run after the storm upgrades every row.
func TestMigrateUnderPermanentServerBusyStops(t *testing.T) {
	const n = 40
	name := migrationRows(t, n)
	down := &outage{}
	down.armed.Store(true)
	c := &counter{}
	view := env.With(c, down).WithOptions(func(o *azcore.ClientOptions) {
		o.Retry = policy.RetryOptions{MaxRetries: 2, RetryDelay: time.Millisecond, MaxRetryDelay: 2 * time.Millisecond}
	})
	checkpoints := 0
	rep, err := migrateTable(t, view, name).Migrate(t.Context(), resolver.MigrateOptions{
		Checkpoint: func(resolver.MigrateCheckpoint) error { checkpoints++; return nil }})
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("migrate under a permanent 503: %+v %v, want the service's 503", rep, err)
	}
	if checkpoints != 0 || len(rep.Failed) != 0 {
		t.Errorf("%d checkpoints, %d rows reported failed: want none", checkpoints, len(rep.Failed))
	}
	// The page read, then per partition written at once (2) a transaction
	// and one read again, each tried 3 times.
	if c.n.Load() > 1+2*2*3 {
		t.Errorf("%d tries before giving up", c.n.Load())
	}
	t.Logf("%d tries: %v", c.n.Load(), err)
	again, err := migrateTable(t, env, name).Migrate(t.Context(), resolver.MigrateOptions{})
	if err != nil || again.Upgraded != n {
		t.Fatalf("after the storm: %+v %v", again, err)
	}
}
