package entity_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/keys"
)

// Tests of write outcomes under lost replies: a fault-injecting policy
// lets the service execute a request and drops its reply, so azcore
// resends it; a loopback proxy resets connections in the middle of
// replies. Every test checks what was reported against what is stored.

// Request matchers for faults.Injector.
var (
	isBatch  = func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/$batch") }
	isInsert = func(r *http.Request) bool { return r.Method == http.MethodPost && !isBatch(r) }
	isUpdate = func(r *http.Request) bool {
		return r.Method == http.MethodPut || r.Method == http.MethodPatch || r.Method == "MERGE"
	}
	isDelete = func(r *http.Request) bool { return r.Method == http.MethodDelete }
	isWrite  = func(r *http.Request) bool { return r.Method != http.MethodGet }
)

// faultyTable is a table whose client carries tablekit's policies, azcore
// retries (up to retries) and the injector f, disabled while the table is
// created.
func faultyTable[T any](t *testing.T, f *faults.Injector, retries int32) *entity.Table[T] {
	t.Helper()
	opts := env.ClientOptions()
	opts.Retry.MaxRetries = retries
	f.SetEnabled(false)
	client := env.With(f).TableWith(t, entity.ClientOptions(opts))
	f.SetEnabled(true)
	tbl, err := entity.NewTable[T](client)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestInsertLostReply: an insert whose reply was lost is reported written,
// not ErrAlreadyExists; one that met a real conflict still reports it.
func TestInsertLostReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	people := faultyTable[Person](t, f, 2)

	// A row that exists for a while before the write whose reply is lost.
	old := Person{Dept: "d", ID: "old", Name: "first"}
	if err := people.Insert(ctx, &old); err != nil {
		t.Fatal(err)
	}
	settled := time.Now()

	for _, tokens := range []bool{false, true} {
		tbl := people
		if tokens {
			tbl = people.WithWriteTokens()
		}
		p := Person{Dept: "d", ID: fmt.Sprint("new-", tokens), Name: "mine"}
		f.LoseNext(1, isInsert)
		if err := tbl.Insert(ctx, &p); err != nil {
			t.Fatalf("tokens=%v: insert whose reply was lost: %v", tokens, err)
		}
		got, err := people.Get(ctx, p.Dept, p.ID)
		if err != nil || got.Name != "mine" {
			t.Fatalf("tokens=%v: stored %+v, %v", tokens, got, err)
		}
		if p.ETag != got.ETag {
			t.Fatalf("tokens=%v: ETag written back %q, stored %q", tokens, p.ETag, got.ETag)
		}
	}

	// A real conflict met by a resend: a stored row stamped well before
	// the first try is certainly not this insert's.
	time.Sleep(time.Until(settled.Add(2500 * time.Millisecond)))
	f.LoseNext(1, isInsert)
	dup := Person{Dept: "d", ID: "old", Name: "second"}
	err := people.Insert(ctx, &dup)
	switch {
	case env.Cosmos():
		// An ETag without a time cannot show the row predates the first
		// try: the resend's 409 may answer that try's own insert.
		if !errors.Is(err, entity.ErrOutcomeUnknown) || errors.Is(err, entity.ErrAlreadyExists) {
			t.Fatalf("resent insert over an old row under Cosmos DB: %v, want ErrOutcomeUnknown only", err)
		}
	case !errors.Is(err, entity.ErrAlreadyExists) || errors.Is(err, entity.ErrOutcomeUnknown):
		t.Fatalf("resent insert over an old row: %v, want ErrAlreadyExists", err)
	}

	// A resend meeting a row written just before, not as sent: nothing can
	// tell whether the first try wrote it and another writer changed it.
	fresh := Person{Dept: "d", ID: "fresh", Name: "theirs"}
	if err := people.Insert(ctx, &fresh); err != nil {
		t.Fatal(err)
	}
	f.LoseNext(1, isInsert)
	err = people.Insert(ctx, &Person{Dept: "d", ID: "fresh", Name: "mine"})
	if !errors.Is(err, entity.ErrOutcomeUnknown) || errors.Is(err, entity.ErrAlreadyExists) {
		t.Fatalf("resent insert over a fresh row: %v, want ErrOutcomeUnknown only", err)
	}
	if s := f.Stats(); s.LostReplies != 4 {
		t.Fatalf("faults: %+v", s)
	}
}

// TestUpdateLostReply: a conditional update whose reply was lost is
// reported applied with write tokens, and is never ErrPreconditionFailed
// without them.
func TestUpdateLostReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	plain := faultyTable[Person](t, f, 2)
	tokens := plain.WithWriteTokens()
	for _, tbl := range []*entity.Table[Person]{plain, tokens} {
		p := Person{Dept: "d", ID: fmt.Sprint("u", tbl == tokens), Name: "v0", Age: 1}
		if err := tbl.Insert(ctx, &p); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []entity.UpdateMode{entity.Merge, entity.Replace} {
			p.Age++
			f.LoseNext(1, isUpdate)
			err := tbl.Update(ctx, &p, mode)
			got, gerr := tbl.Get(ctx, p.Dept, p.ID)
			if gerr != nil || got.Age != p.Age {
				t.Fatalf("the update was not applied: %+v %v", got, gerr)
			}
			switch {
			case tbl == tokens && err != nil:
				t.Fatalf("tokens, %v: update whose reply was lost: %v", mode, err)
			case tbl == tokens && p.ETag != got.ETag:
				t.Fatalf("tokens: ETag %q, stored %q", p.ETag, got.ETag)
			case tbl == plain && !errors.Is(err, entity.ErrOutcomeUnknown):
				t.Fatalf("no tokens, %v: %v, want ErrOutcomeUnknown", mode, err)
			case errors.Is(err, entity.ErrPreconditionFailed):
				t.Fatalf("%v reported as a conflict", err)
			}
			p = got
		}
	}
	// A delete whose reply was lost: its resend finds nothing, and whether
	// this call deleted it is unknown; repeating it settles.
	f.LoseNext(1, isDelete)
	deleted, err := plain.DeleteIfExists(ctx, "d", "ufalse")
	if deleted || !errors.Is(err, entity.ErrOutcomeUnknown) || errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("DeleteIfExists after a lost reply: %v %v", deleted, err)
	}
	if deleted, err := plain.DeleteIfExists(ctx, "d", "ufalse"); deleted || err != nil {
		t.Fatalf("DeleteIfExists again: %v %v", deleted, err)
	}
}

// TestSubmitLostReply: a transaction whose reply was lost is reported
// written, not as a *TransactionError ("nothing was written"); BulkWrite
// in insert mode no longer reports a written chunk as refused.
func TestSubmitLostReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	people := faultyTable[Person](t, f, 2)

	for _, tbl := range []*entity.Table[Person]{people, people.WithWriteTokens()} {
		pk := fmt.Sprint("tx-", tbl != people)
		b := tbl.NewBatch()
		for i := range 20 {
			b.Insert(&Person{Dept: pk, ID: keys.Pad(int64(i), 3), Name: "n"})
		}
		// Merges by ETag too, so that a resend fails at an update.
		base := Person{Dept: pk, ID: "base", Name: "b"}
		if err := tbl.Insert(ctx, &base); err != nil {
			t.Fatal(err)
		}
		base.Age = 7
		b.Update(&base, entity.Merge)
		f.LoseNext(1, isBatch)
		if _, err := tbl.Submit(ctx, b); err != nil {
			t.Fatalf("%s: transaction whose reply was lost: %v", pk, err)
		}
		if n := len(count(t, people, entity.Query{Filter: filter.PK(pk)})); n != 21 {
			t.Fatalf("%s: %d stored", pk, n)
		}
	}

	// BulkWrite, insert mode: 250 rows in three transactions, the reply of
	// the second lost.
	var in []Person
	for i := range 250 {
		in = append(in, Person{Dept: "bulk", ID: keys.Pad(int64(i), 3), Name: "n"})
	}
	var n int
	f.LoseNext(1, func(r *http.Request) bool { n++; return isBatch(r) && n == 2 })
	outcomes, err := people.BulkWrite(ctx, in, entity.BulkOptions{Mode: entity.OpInsert})
	if err != nil {
		t.Fatalf("bulk insert with a lost reply: %v", err)
	}
	for i, o := range outcomes {
		if o.Err != nil {
			t.Fatalf("outcome %d: %v", i, o.Err)
		}
	}
	if got := len(count(t, people, entity.Query{Filter: filter.PK("bulk")})); got != 250 {
		t.Fatalf("%d stored", got)
	}
	if s := f.Stats(); s.LostReplies != 3 {
		t.Fatalf("faults: %+v", s)
	}
}

// runCounters runs 6 goroutines, each incrementing each of 3 counters
// rounds times through Modify, and checks that every counter ends between
// the increments reported done and those plus the ErrOutcomeUnknown ones:
// no increment applied twice, none reported done and lost. With write
// tokens (exact) an unknown outcome is left only where another worker
// changed the counter between a lost reply and Modify's read-back, which
// takes the token away; the test logs how many.
func runCounters(t *testing.T, tbl *entity.Table[Counter], rounds int, exact bool) (done, unknown int) {
	t.Helper()
	ctx := context.Background()
	const workers, counters = 6, 3
	var mu sync.Mutex
	ok := make([]int, counters)
	unk := make([]int, counters)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for c := range counters {
					c := (c + w + r) % counters
					_, err := tbl.Modify(ctx, "c", fmt.Sprint(c), func(e *Counter) error {
						e.N++
						return nil
					}, entity.ModifyOptions{Retry: entity.RetryPolicy{Attempts: 50, BaseDelay: 5 * time.Millisecond, MaxDelay: 100 * time.Millisecond}})
					mu.Lock()
					switch {
					case err == nil:
						ok[c]++
					case errors.Is(err, entity.ErrOutcomeUnknown):
						unk[c]++
					default:
						t.Errorf("modify: %v", err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for c := range counters {
		got, err := tbl.Get(ctx, "c", fmt.Sprint(c))
		if err != nil {
			t.Fatal(err)
		}
		if exact && unk[c] != 0 {
			t.Logf("counter %d = %d, %d increments reported done, %d unknown (another worker wrote between a lost reply and the read-back)", c, got.N, ok[c], unk[c])
		}
		if got.N < int64(ok[c]) || got.N > int64(ok[c]+unk[c]) {
			t.Errorf("counter %d = %d, outside [%d done, +%d unknown]", c, got.N, ok[c], unk[c])
		}
		done += ok[c]
		unknown += unk[c]
	}
	return done, unknown
}

func insertCounters(t *testing.T, tbl *entity.Table[Counter]) {
	t.Helper()
	for c := range 3 {
		if err := tbl.Insert(context.Background(), &Counter{PartitionKey: "c", RowKey: fmt.Sprint(c)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestModifyCountersUnderLostReplies is the reproduction: with about 5% of
// replies lost, counters incremented through Modify ended above the
// increments reported done. Modify never applies a change twice and
// reports what it cannot tell as ErrOutcomeUnknown: with write tokens only
// where another writer changed the entity between the lost reply and the
// read-back, without them also where the ETag's time cannot tell.
func TestModifyCountersUnderLostReplies(t *testing.T) {
	t.Parallel()
	f := faults.New(faults.Config{LoseReply: 0.05, Seed: 3, Match: isWrite})
	tbl := faultyTable[Counter](t, f, 3).WithWriteTokens()
	insertCounters(t, tbl)
	done, unknown := runCounters(t, tbl, 4, true)
	if s := f.Stats(); s.LostReplies == 0 || done == 0 {
		t.Fatalf("no lost replies (%+v) or nothing done (%d)", s, done)
	} else {
		t.Logf("%d increments done, %d unknown; %d lost replies of %d writes", done, unknown, s.LostReplies, s.Requests)
	}

	f2 := faults.New(faults.Config{LoseReply: 0.05, Seed: 4, Match: isWrite})
	plain := faultyTable[Counter](t, f2, 3)
	insertCounters(t, plain)
	done, unknown = runCounters(t, plain, 2, false)
	t.Logf("without tokens: %d increments done, %d unknown; %d lost replies", done, unknown, f2.Stats().LostReplies)
}

// TestModifyCountersThroughResettingProxy: the same counters through a TCP
// proxy that resets 10% of replies mid-way, below the HTTP client.
func TestModifyCountersThroughResettingProxy(t *testing.T) {
	t.Parallel()
	opts := env.ClientOptions()
	opts.Retry.MaxRetries = 6
	svc, proxy, name := proxiedService(t, 5, opts)
	tbl, err := entity.NewTableFromService[Counter](svc, name)
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithWriteTokens()
	insertCounters(t, tbl)
	proxy.SetResetRate(0.10)
	done, _ := runCounters(t, tbl, 4, true)
	if proxy.Resets() == 0 || done == 0 {
		t.Fatalf("no resets (%d) or nothing done (%d)", proxy.Resets(), done)
	}
	t.Logf("%d increments done; %d resets over %d connections", done, proxy.Resets(), proxy.Conns())
}

// TestOutcomesMatchTheTable writes through Insert, Submit and BulkWrite
// with 10% of replies lost and checks every reported outcome against the
// table: written means stored as sent, refused means another row was
// there first, unknown is never reported when the read-back can tell.
func TestOutcomesMatchTheTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{LoseReply: 0.10, Seed: 9, Match: isWrite})
	people := faultyTable[Person](t, f, 4)

	// Rows written well before, which some inserts below collide with.
	f.SetEnabled(false)
	var old []Person
	for i := 0; i < 300; i += 7 {
		old = append(old, Person{Dept: fmt.Sprint("p", i%3), ID: keys.Pad(int64(i), 4), Name: "old"})
	}
	if _, err := people.BulkWrite(ctx, old, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	f.SetEnabled(true)

	type report struct {
		p   Person
		err error
	}
	var reports []report
	// Single inserts.
	for i := 0; i < 300; i += 5 {
		p := Person{Dept: fmt.Sprint("p", i%3), ID: keys.Pad(int64(i), 4), Name: "single"}
		err := people.Insert(ctx, &p)
		reports = append(reports, report{p, err})
	}
	// Transactions of 10 inserts, one of which may collide.
	for i := 1; i < 300; i += 30 {
		b := people.NewBatch()
		var ps []Person
		for j := i; j < i+10; j++ {
			p := Person{Dept: "tx", ID: keys.Pad(int64(j), 4), Name: "tx"}
			ps = append(ps, p)
			b.Insert(&p)
		}
		_, err := people.Submit(ctx, b)
		for _, p := range ps {
			reports = append(reports, report{p, err})
		}
	}
	// A bulk insert over the partitions.
	var bulk []Person
	for i := 0; i < 300; i += 2 {
		bulk = append(bulk, Person{Dept: fmt.Sprint("p", i%3), ID: keys.Pad(int64(i), 4) + "b", Name: "bulk"})
	}
	bulk = append(bulk, old[:5]...) // collisions
	outcomes, _ := people.BulkWrite(ctx, bulk, entity.BulkOptions{Mode: entity.OpInsert})
	for i, o := range outcomes {
		reports = append(reports, report{bulk[i], o.Err})
	}

	f.SetEnabled(false)
	stored := count(t, people, entity.Query{})
	var written, refused, unknown int
	for _, r := range reports {
		got, ok := stored[r.p.Dept+"/"+r.p.ID]
		switch {
		case r.err == nil:
			written++
			if !ok || got.Name != r.p.Name {
				t.Errorf("%s/%s reported written, stored %+v", r.p.Dept, r.p.ID, got)
			}
		case errors.Is(r.err, entity.ErrOutcomeUnknown):
			unknown++
			// Under Cosmos DB's ETags, which carry no time, a resend that
			// meets a stored row not as sent, or a transaction's resend
			// failing on one stored as sent, cannot be told apart from
			// another writer's: ErrOutcomeUnknown is the truth there.
			if !env.Cosmos() {
				t.Errorf("%s/%s: outcome unknown: %v", r.p.Dept, r.p.ID, r.err)
			}
		case errors.Is(r.err, entity.ErrAlreadyExists):
			refused++
			if ok && got.Name == r.p.Name && r.p.Name != "old" {
				t.Errorf("%s/%s reported refused, stored as sent: %v", r.p.Dept, r.p.ID, r.err)
			}
		default:
			t.Errorf("%s/%s: %v", r.p.Dept, r.p.ID, r.err)
		}
	}
	s := f.Stats()
	t.Logf("%d written, %d refused, %d unknown; %d lost replies of %d writes", written, refused, unknown, s.LostReplies, s.Requests)
	if s.LostReplies < 5 || refused == 0 {
		t.Fatalf("the test did not exercise lost replies (%+v) or conflicts (%d refused)", s, refused)
	}
}

// TestLostReplyCounting: the policies see azcore's resends, and nothing
// else changes for a client that does not lose replies.
func TestLostReplyCountingNeedsThePolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	// A client without tablekit's policies cannot see the resend: the
	// answer to it is reported as the service gave it.
	svc, err := env.With(f).NewTableService(&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: 2, RetryDelay: 10 * time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	if _, err := svc.CreateTable(ctx, name, nil); err != nil {
		t.Fatal(err)
	}
	people, err := entity.NewTable[Person](svc.NewClient(name))
	if err != nil {
		t.Fatal(err)
	}
	f.LoseNext(1, isInsert)
	if err := people.Insert(ctx, &Person{Dept: "d", ID: "x"}); !errors.Is(err, entity.ErrAlreadyExists) {
		t.Fatalf("without the policies: %v (the misreport this documents)", err)
	}
}

// Tracked carries the write-token chain through reads (a string field for
// the TkWrite property), so its conditional writes are judged as Modify's.
type Tracked struct {
	PartitionKey, RowKey string
	ETag                 string
	Chain                string `table:"TkWrite"`
	N                    int32
}

// TestUpdateLostReplyAfterAnotherWriterWon: the first try of an update met
// a real conflict and its reply was lost; the resend's 412 is then proved
// to be the truth by the chain another writer left, for a type that reads
// the chain, and is ErrOutcomeUnknown for one that does not.
func TestUpdateLostReplyAfterAnotherWriterWon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	tracked := faultyTable[Tracked](t, f, 2).WithWriteTokens()
	people, err := entity.NewTable[Person](tracked.Client())
	if err != nil {
		t.Fatal(err)
	}
	people = people.WithWriteTokens()
	e := Tracked{PartitionKey: "p", RowKey: "r"}
	if err := tracked.Insert(ctx, &e); err != nil {
		t.Fatal(err)
	}
	mine, err := tracked.Get(ctx, "p", "r")
	if err != nil || mine.Chain == "" {
		t.Fatalf("read: %+v %v", mine, err)
	}
	asPerson, err := people.Get(ctx, "p", "r")
	if err != nil {
		t.Fatal(err)
	}
	// Another writer wins the version both read.
	if _, err := tracked.Modify(ctx, "p", "r", func(x *Tracked) error { x.N = 10; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	mine.N = 1
	f.LoseNext(1, isUpdate)
	if err := tracked.Update(ctx, &mine, entity.Merge); !errors.Is(err, entity.ErrPreconditionFailed) || errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Fatalf("resent update over another writer's win: %v, want ErrPreconditionFailed", err)
	}
	asPerson.Age = 1
	f.LoseNext(1, isUpdate)
	if err := people.Update(ctx, &asPerson, entity.Merge); !errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Fatalf("the same without the chain: %v, want ErrOutcomeUnknown", err)
	}
	if got, _ := tracked.Get(ctx, "p", "r"); got.N != 10 {
		t.Fatalf("stored %+v", got)
	}
	if s := f.Stats(); s.LostReplies != 2 {
		t.Fatalf("faults %+v", s)
	}
}

// proxiedService is a table service client whose connections go through a
// loopback proxy that resets replies at the rate given to its
// SetResetRate, and a freshly created table name on it; the proxy closes
// with the test.
func proxiedService(t *testing.T, seed uint64, opts *aztables.ClientOptions) (*aztables.ServiceClient, *faults.Proxy, string) {
	t.Helper()
	u, err := url.Parse(env.TableEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faults.NewProxy(u.Host, seed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	endpoint, err := proxy.Rewrite(env.TableEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := aztables.NewSharedKeyCredential(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := aztables.NewServiceClientWithSharedKey(endpoint, cred, entity.ClientOptions(opts))
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(context.Background(), name, nil); err != nil {
		t.Fatal(err)
	}
	return svc, proxy, name
}

// TestLostReplyReportsStoredETags: a transaction whose reply was lost and
// that reading back shows applied reports each entity's stored ETag (the
// lost reply held them), written back into the entities too, so callers
// can write conditionally next; an entity another writer changed in the
// retry window reports none (its ETag is not this write's version).
func TestLostReplyReportsStoredETags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	people := faultyTable[Person](t, f, 2)
	raw := env.TableService.NewClient(people.Name()) // no injector
	for _, tbl := range []*entity.Table[Person]{people, people.WithWriteTokens()} {
		tokens := tbl != people
		// BulkWrite, insert mode: 120 rows in two transactions, the reply
		// of the second lost; another writer replaces row 105 before the
		// resend.
		pk := fmt.Sprint("bulk-", tokens)
		var in []Person
		for i := range 120 {
			in = append(in, Person{Dept: pk, ID: keys.Pad(int64(i), 3), Name: "n"})
		}
		var n int
		f.LoseNextThen(1, func(r *http.Request) bool { n++; return isBatch(r) && n == 2 }, func(*http.Request) {
			body, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": keys.Pad(105, 3), "Name": "theirs"})
			if _, err := raw.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
				t.Error(err)
			}
		})
		n = 0
		outcomes, err := tbl.BulkWrite(ctx, in, entity.BulkOptions{Mode: entity.OpInsert})
		if err != nil {
			t.Fatalf("tokens=%v: bulk insert with a lost reply: %v", tokens, err)
		}
		stored := count(t, people, entity.Query{Filter: filter.PK(pk)})
		for i, o := range outcomes {
			s := stored[pk+"/"+o.RowKey]
			switch {
			case o.Err != nil:
				t.Fatalf("tokens=%v: outcome %d: %v", tokens, i, o.Err)
			case i == 105 && o.ETag != "":
				t.Errorf("tokens=%v: row 105, replaced by another writer, reported ETag %q (theirs is %q)", tokens, o.ETag, s.ETag)
			case i != 105 && (o.ETag == "" || o.ETag != s.ETag):
				t.Errorf("tokens=%v: outcome %d: ETag %q, stored %q", tokens, i, o.ETag, s.ETag)
			}
		}

		// Submit: the same, written back into the entities.
		pk = fmt.Sprint("tx-", tokens)
		b := tbl.NewBatch()
		var ps []*Person
		for i := range 10 {
			p := &Person{Dept: pk, ID: keys.Pad(int64(i), 3), Name: "tx"}
			ps = append(ps, p)
			b.Insert(p)
		}
		f.LoseNext(1, isBatch)
		etags, err := tbl.Submit(ctx, b)
		if err != nil {
			t.Fatalf("tokens=%v: transaction whose reply was lost: %v", tokens, err)
		}
		stored = count(t, people, entity.Query{Filter: filter.PK(pk)})
		for i, p := range ps {
			if s := stored[pk+"/"+p.ID]; etags[i] == "" || etags[i] != s.ETag || p.ETag != s.ETag {
				t.Errorf("tokens=%v: op %d: returned %q, written back %q, stored %q", tokens, i, etags[i], p.ETag, s.ETag)
			}
		}
		// The reported ETag is good for a conditional write.
		ps[3].Age = 9
		if err := tbl.Update(ctx, ps[3], entity.Merge); err != nil {
			t.Fatalf("tokens=%v: update with the reported ETag: %v", tokens, err)
		}
	}
}
