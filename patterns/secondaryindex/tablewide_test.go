package secondaryindex_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// wideBuckets is the bucket count of the tests' TableWide indexes.
const wideBuckets = 4

// wideSet makes a processor over qs and the Set of tbl with the email
// (unique) and name indexes TableWide, wideBuckets buckets each.
func wideSet(t testing.TB, qs []eventual.Queue, tbl *entity.Table[Employee], entries *entity.Table[entity.DynamicEntity], pcfg eventual.Config) (*secondaryindex.Set[Employee], *eventual.Processor) {
	t.Helper()
	return wideSetOn(t, env, qs, tbl, entries, pcfg)
}

// wideSetOn is wideSet with every client made from e.
func wideSetOn(t testing.TB, env *integration.Env, qs []eventual.Queue, tbl *entity.Table[Employee], entries *entity.Table[entity.DynamicEntity], pcfg eventual.Config) (*secondaryindex.Set[Employee], *eventual.Processor) {
	t.Helper()
	p, err := eventual.New(patterntest.SameQueues(t, env, qs), nil, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	var ent *entity.Table[entity.DynamicEntity]
	if entries != nil {
		ent = patterntest.View[entity.DynamicEntity](t, env, entries)
	}
	email, name := emailIndex(secondaryindex.TableWide), nameIndex(secondaryindex.TableWide)
	email.Buckets, name.Buckets = wideBuckets, wideBuckets
	s, err := secondaryindex.New(patterntest.View[Employee](t, env, tbl), withProcessor(remoteConfig(ent), p), email, name)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

func drainWide(t testing.TB, p *eventual.Processor, qs []eventual.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := patterntest.Drain(ctx, p, qs); err != nil {
		t.Fatal(err)
	}
}

// rawScan lists every entity of the table named name as "pk/rk" with a
// raw client, and the raw entities by key.
func rawScan(t testing.TB, name string) ([]string, map[string]map[string]any) {
	t.Helper()
	c := rawTable(t, name)
	pager := c.NewListEntitiesPager(nil)
	var ks []string
	all := map[string]map[string]any{}
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Entities {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			k := m["PartitionKey"].(string) + "/" + m["RowKey"].(string)
			ks = append(ks, k)
			all[k] = m
		}
	}
	return ks, all
}

func names(t testing.TB, seq func(func(Employee, error) bool)) []string {
	t.Helper()
	var out []string
	for e, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.PartitionKey+"/"+e.RowKey+" "+e.LastName)
	}
	return out
}

// TestTableWide: employees of many departments, their email and last name
// indexed table-wide. The entries live in partitions named by the value's
// bucket (read back with a raw client); lookups need no PartitionKey: a
// unique lookup is one point query, a non-unique one one range query, a
// prefix one a query per bucket, merged in value order; a verified lookup
// never returns an employee whose value changed; Check finds 0 drift after
// the queue drained, then exactly the drift written around the Set, and
// Rebuild (resumed from each of its checkpoints) repairs it.
func TestTableWide(t *testing.T) {
	t.Parallel()
	for _, other := range []bool{false, true} {
		t.Run(map[bool]string{false: "same table", true: "entries table"}[other], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tbl := employees(t, env)
			var entries *entity.Table[entity.DynamicEntity]
			entriesName := tbl.Name()
			if other {
				et := employees(t, env)
				entries = patterntest.View[entity.DynamicEntity](t, env, et)
				entriesName = et.Name()
			}
			qs := patterntest.Queues(t, env, 1)
			s, p := wideSet(t, qs, tbl, entries, fast())
			lasts := []string{"Jones", "Jonas", "Smith", "Jonsson", "Brown", "Jones"}
			var want []Employee
			for i := range 24 {
				e := Employee{PartitionKey: fmt.Sprintf("Dept%02d", i%7), RowKey: empid(i), FirstName: fmt.Sprint("F", i), LastName: lasts[i%len(lasts)], Email: fmt.Sprintf("user%02d@contoso.com", i)}
				if err := s.Insert(ctx, &e); err != nil {
					t.Fatal(err)
				}
				want = append(want, e)
			}
			// Before the worker ran: the unique entry (its reservation)
			// answers a verified lookup already.
			got, err := s.LookupValue(ctx, "email", "user05@contoso.com", secondaryindex.LookupOptions{Verify: true})
			if err != nil || got.RowKey != empid(5) || got.PartitionKey != "Dept05" || got.ETag == "" {
				t.Fatalf("verified lookup before the worker ran: %+v, %v", got, err)
			}
			drainWide(t, p, qs)
			if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
				t.Fatalf("drift after the queue drained: %v", fs)
			}
			// The entries, read raw, are where the documentation says.
			ks, all := rawScan(t, entriesName)
			for _, e := range want {
				ek := "email_" + keys.Bucket(strings.ToLower(e.Email), wideBuckets) + "/email_" + strings.ToLower(e.Email)
				nk := "name_" + keys.Bucket(e.LastName, wideBuckets) + "/name_" + keys.Compound(e.LastName, e.PartitionKey, e.RowKey)
				for _, k := range []string{ek, nk} {
					m, ok := all[k]
					if !ok || m[secondaryindex.PropPrimaryPK] != e.PartitionKey || m[secondaryindex.PropPrimaryRK] != e.RowKey {
						t.Errorf("entry %s: %v", k, m)
					}
				}
			}
			nEntries := 0
			for _, k := range ks {
				if strings.HasPrefix(k, "email_") || strings.HasPrefix(k, "name_") {
					nEntries++
				}
			}
			if nEntries != 2*len(want) {
				t.Errorf("%d entries, want %d", nEntries, 2*len(want))
			}

			// Non-unique: all the Joneses, whatever their department, in
			// the primaries' key order.
			var jones []string
			for _, e := range want {
				if e.LastName == "Jones" {
					jones = append(jones, e.PartitionKey+"/"+e.RowKey+" Jones")
				}
			}
			slices.Sort(jones)
			if got := names(t, s.LookupValueAll(ctx, "name", "Jones", secondaryindex.LookupOptions{})); !inOrder(got, jones) {
				t.Errorf("LookupValueAll Jones = %q, want %q", got, jones)
			}
			// Prefix: merged over the buckets, in value order, exact.
			var jo []string
			for _, e := range want {
				if strings.HasPrefix(e.LastName, "Jo") {
					jo = append(jo, e.LastName+" "+e.PartitionKey+"/"+e.RowKey)
				}
			}
			slices.SortFunc(jo, keys.Compare)
			for _, verify := range []bool{false, true} {
				var gotJo []string
				for e, err := range s.LookupValuePrefix(ctx, "name", "Jo", secondaryindex.LookupOptions{Verify: verify}) {
					if err != nil {
						t.Fatal(err)
					}
					gotJo = append(gotJo, e.LastName+" "+e.PartitionKey+"/"+e.RowKey)
				}
				if !inOrder(gotJo, jo) {
					t.Errorf("LookupValuePrefix Jo (verify %v) = %q, want %q", verify, gotJo, jo)
				}
			}
			if got := names(t, s.LookupValuePrefix(ctx, "name", "Jo", secondaryindex.LookupOptions{Limit: 3})); len(got) != 3 {
				t.Errorf("Limit 3: %q", got)
			}
			var emails []string
			for e, err := range s.LookupValuePrefix(ctx, "email", "user1", secondaryindex.LookupOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				emails = append(emails, e.Email)
			}
			if !(slices.IsSorted(emails) || env.Cosmos()) || len(emails) != 10 {
				t.Errorf("LookupValuePrefix user1 = %q", emails)
			}

			// The placements' lookups refuse each other's indexes.
			if _, err := s.Lookup(ctx, "email", "Dept05", "user05@contoso.com", secondaryindex.LookupOptions{}); !errors.Is(err, secondaryindex.ErrPlacement) {
				t.Errorf("Lookup of a TableWide index: %v", err)
			}

			// A new email: until the worker runs, the old entry still
			// finds the employee without Verify, never with it.
			if _, err := s.Modify(ctx, "Dept05", empid(5), func(e *Employee) error {
				e.Email, e.LastName = "moved@contoso.com", "Jonas"
				return nil
			}, entity.ModifyOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.LookupValue(ctx, "email", "user05@contoso.com", secondaryindex.LookupOptions{Verify: true}); !errors.Is(err, entity.ErrNotFound) {
				t.Errorf("verified lookup of the old email: %v", err)
			}
			for e, err := range s.LookupValueAll(ctx, "name", "Jones", secondaryindex.LookupOptions{Verify: true}) {
				if err != nil || e.LastName != "Jones" {
					t.Errorf("verified name lookup returned %+v, %v", e, err)
				}
			}
			drainWide(t, p, qs)
			if got, err := s.LookupValue(ctx, "email", "moved@contoso.com", secondaryindex.LookupOptions{}); err != nil || got.RowKey != empid(5) {
				t.Errorf("new email after the worker: %+v, %v", got, err)
			}
			if _, all := rawScan(t, entriesName); all["email_"+keys.Bucket("user05@contoso.com", wideBuckets)+"/email_user05@contoso.com"] != nil {
				t.Error("the old email's entry is still stored")
			}

			// Drift written around the Set: an entry deleted, an orphan
			// (an entry no primary holds), a stale copy.
			raw := rawTable(t, entriesName)
			e7 := want[7]
			ek7, erk7 := "email_"+keys.Bucket(e7.Email, wideBuckets), "email_"+e7.Email
			rawDelete(t, raw, ek7, erk7)
			oek, oerk := "name_"+keys.Bucket("Ghost", wideBuckets), "name_"+keys.Compound("Ghost", "Dept09", empid(99))
			body, _ := json.Marshal(map[string]any{"PartitionKey": oek, "RowKey": oerk, secondaryindex.PropPrimaryPK: "Dept09", secondaryindex.PropPrimaryRK: empid(99)})
			if _, err := raw.UpsertEntity(ctx, body, nil); err != nil {
				t.Fatal(err)
			}
			e8 := want[8]
			nk8, nrk8 := "name_"+keys.Bucket(e8.LastName, wideBuckets), "name_"+keys.Compound(e8.LastName, e8.PartitionKey, e8.RowKey)
			rawMerge(t, raw, nk8, nrk8, map[string]any{"FirstName": "Changed"})
			table := ""
			if other {
				table = entriesName
			}
			wantF := []string{
				fmt.Sprintf("%v email %s/%s %s/%s", drift.Missing, e7.PartitionKey, e7.RowKey, ek7, erk7),
				fmt.Sprintf("%v name %s/%s %s/%s", drift.Stale, e8.PartitionKey, e8.RowKey, nk8, nrk8),
				fmt.Sprintf("%v name Dept09/%s %s/%s", drift.Orphan, empid(99), oek, oerk),
			}
			var tokens []string
			fs := patterntest.Collect(t, s.Check(ctx, secondaryindex.CheckOptions{Checkpoint: func(tok string) { tokens = append(tokens, tok) }}))
			var gotF []string
			for _, f := range fs {
				if f.Entry.Table != table {
					t.Errorf("finding %v names table %q, want %q", f, f.Entry.Table, table)
				}
				gotF = append(gotF, fmt.Sprintf("%v %s %s/%s %s/%s", f.Kind, f.Index, f.Primary.PartitionKey, f.Primary.RowKey, f.Entry.PartitionKey, f.Entry.RowKey))
			}
			slices.Sort(gotF)
			slices.Sort(wantF)
			if !slices.Equal(gotF, wantF) {
				t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(gotF, "\n"), strings.Join(wantF, "\n"))
			}
			// Each checkpoint resumes: what it reports is a tail of the
			// findings, and the findings of each finding's token on are.
			strip := func(fs []drift.Finding) []drift.Finding {
				for i := range fs {
					fs[i].Resume = ""
				}
				return fs
			}
			resumes := []string{}
			for _, f := range fs {
				resumes = append(resumes, f.Resume)
			}
			full := strip(slices.Clone(fs))
			for _, tok := range append(tokens, resumes...) {
				rest := strip(patterntest.Collect(t, s.Check(ctx, secondaryindex.CheckOptions{Resume: tok})))
				if env.Cosmos() {
					// No key order: a resumed check finds some of the
					// findings, never others (see the package doc).
					if !isSubset(findingLines(rest), findingLines(full)) {
						t.Errorf("resumed at %q: %v", tok, rest)
					}
					continue
				}
				if len(rest) > len(full) || !slices.Equal(rest, full[len(full)-len(rest):]) {
					t.Errorf("resumed at %q: %v", tok, rest)
				}
			}
			for i, r := range resumes {
				rest := strip(patterntest.Collect(t, s.Check(ctx, secondaryindex.CheckOptions{Resume: r})))
				if env.Cosmos() {
					// A finding's token resumes at its partition.
					if !slices.Contains(rest, full[i]) {
						t.Errorf("resumed at finding %d's token: %v", i, rest)
					}
					continue
				}
				if len(rest) < len(full)-i {
					t.Errorf("resumed at finding %d's token: %v", i, rest)
				}
			}
			sum, err := s.Rebuild(ctx, secondaryindex.CheckOptions{})
			if err != nil || sum.Repaired != 3 {
				t.Errorf("Rebuild: %+v, %v", sum, err)
			}
			if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
				t.Errorf("drift after Rebuild: %v", fs)
			}
		})
	}
}

// TestTableWideUniqueRace: eight writers in eight departments claim one
// email table-wide at the same moment, by inserts and by modifies: exactly
// one wins, the others get a *UniqueError naming the winner, and nothing of
// a loser is written (read back with a raw client: no loser's primary, no
// entry naming a loser); after the queue drained nothing drifted.
func TestTableWideUniqueRace(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"insert", "modify"} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			const writers = 8
			tbl := employees(t, env)
			qs := patterntest.Queues(t, env, 1)
			s, p := wideSet(t, qs, tbl, nil, fast())
			dept := func(i int) string { return fmt.Sprintf("Dept%d", i) }
			if op == "modify" {
				for i := range writers {
					e := Employee{PartitionKey: dept(i), RowKey: empid(i), LastName: "Jones", Email: fmt.Sprintf("e%d@contoso.com", i)}
					if err := s.Insert(ctx, &e); err != nil {
						t.Fatal(err)
					}
				}
				drainWide(t, p, qs)
			}
			barrier := crashtest.NewBarrier(writers)
			var wg sync.WaitGroup
			errs := make([]error, writers)
			for i := range writers {
				wg.Go(func() {
					if err := barrier.Wait(ctx); err != nil {
						errs[i] = err
						return
					}
					if op == "insert" {
						e := Employee{PartitionKey: dept(i), RowKey: empid(100 + i), LastName: "Smith", Email: "race@contoso.com"}
						errs[i] = s.Insert(ctx, &e)
						return
					}
					_, errs[i] = s.Modify(ctx, dept(i), empid(i), func(e *Employee) error {
						e.Email = "race@contoso.com"
						return nil
					}, entity.ModifyOptions{})
				})
			}
			wg.Wait()
			key := func(i int) string {
				if op == "insert" {
					return dept(i) + "/" + empid(100+i)
				}
				return dept(i) + "/" + empid(i)
			}
			winner := -1
			for i, err := range errs {
				if err == nil {
					if winner >= 0 {
						t.Errorf("writers %d and %d both won", winner, i)
					}
					winner = i
				}
			}
			if winner < 0 {
				t.Fatalf("no writer won: %v", errs)
			}
			for i, err := range errs {
				var ue *secondaryindex.UniqueError
				switch {
				case i == winner:
				case !errors.As(err, &ue):
					t.Errorf("writer %d: %v, want a *UniqueError", i, err)
				case ue.Holder.PartitionKey+"/"+ue.Holder.RowKey != key(winner) && !ue.Pending:
					t.Errorf("writer %d: the error names %v, want the winner %s", i, ue.Holder, key(winner))
				}
			}
			drainWide(t, p, qs)
			// Nothing of a loser: read raw.
			_, all := rawScan(t, tbl.Name())
			for i := range writers {
				m := all[key(i)]
				switch {
				case op == "insert" && i != winner && m != nil:
					t.Errorf("loser %d's primary is stored: %v", i, m)
				case op == "modify" && i != winner && m["Email"] != fmt.Sprintf("e%d@contoso.com", i):
					t.Errorf("loser %d's primary changed: %v", i, m)
				case i == winner && (m == nil || m["Email"] != "race@contoso.com"):
					t.Errorf("the winner's primary: %v", m)
				}
			}
			for k, m := range all {
				if !strings.HasPrefix(k, "email_") {
					continue
				}
				owner := fmt.Sprint(m[secondaryindex.PropPrimaryPK], "/", m[secondaryindex.PropPrimaryRK])
				if strings.HasSuffix(k, "/email_race@contoso.com") {
					if owner != key(winner) {
						t.Errorf("the race's entry names %s, want %s", owner, key(winner))
					}
					continue
				}
				for i := range writers {
					if i != winner && owner == key(i) && op == "insert" {
						t.Errorf("an entry of loser %d is stored: %s", i, k)
					}
				}
			}
			got, err := s.LookupValue(ctx, "email", "race@contoso.com", secondaryindex.LookupOptions{Verify: true})
			if err != nil || got.PartitionKey+"/"+got.RowKey != key(winner) {
				t.Errorf("the email finds %s/%s (%v), want the winner %s", got.PartitionKey, got.RowKey, err, key(winner))
			}
			if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
				t.Errorf("drift: %v", fs)
			}
		})
	}
}

// TestTableWideRefused: a bucket count out of range, or set on an index
// that is not TableWide, is a *DeclarationError (Field "Buckets"); a
// TableWide index needs a processor; the lookups of one placement refuse
// the other's indexes with ErrPlacement, before any request.
func TestTableWideRefused(t *testing.T) {
	t.Parallel()
	tbl := employees(t, env)
	qs := patterntest.Queues(t, env, 1)
	p, err := eventual.New(patterntest.SameQueues(t, env, qs), nil, fast())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		placement secondaryindex.Placement
		buckets   int
	}{{secondaryindex.TableWide, -1}, {secondaryindex.TableWide, secondaryindex.MaxBuckets + 1}, {secondaryindex.OtherPartition, 4}, {secondaryindex.SamePartition, 4}} {
		ix := emailIndex(c.placement)
		ix.Buckets = c.buckets
		_, err := secondaryindex.New(tbl, withProcessor(remoteConfig(nil), p), ix)
		var de *secondaryindex.DeclarationError
		if !errors.As(err, &de) || de.Field != "Buckets" || !errors.Is(err, secondaryindex.ErrInvalidConfig) {
			t.Errorf("%v with %d buckets: %v", c.placement, c.buckets, err)
		}
	}
	var ce *secondaryindex.ConfigError
	if _, err := secondaryindex.New(tbl, remoteConfig(nil), emailIndex(secondaryindex.TableWide)); !errors.As(err, &ce) || ce.Field != "Config.Processor" || err.Error() != "secondaryindex: invalid Config.Processor: is nil, and OtherPartition and TableWide indexes need one" {
		t.Errorf("TableWide without a processor: %v", err)
	}
	ctx := context.Background()
	local := localSet(t, tbl)
	if _, err := local.LookupValue(ctx, "email", "x", secondaryindex.LookupOptions{}); !errors.Is(err, secondaryindex.ErrPlacement) {
		t.Errorf("LookupValue of a SamePartition index: %v", err)
	}
	for _, seq := range []func(func(Employee, error) bool){
		local.LookupValueAll(ctx, "name", "x", secondaryindex.LookupOptions{}),
		local.LookupValuePrefix(ctx, "name", "x", secondaryindex.LookupOptions{}),
	} {
		for _, err := range seq {
			if !errors.Is(err, secondaryindex.ErrPlacement) {
				t.Errorf("a table-wide lookup of a SamePartition index: %v", err)
			}
		}
	}
	s, _ := wideSet(t, qs, tbl, nil, fast())
	for _, seq := range []func(func(Employee, error) bool){
		s.LookupAll(ctx, "name", "Sales", "x", secondaryindex.LookupOptions{}),
		s.LookupPrefix(ctx, "name", "Sales", "x", secondaryindex.LookupOptions{}),
	} {
		for _, err := range seq {
			if !errors.Is(err, secondaryindex.ErrPlacement) {
				t.Errorf("a partition lookup of a TableWide index: %v", err)
			}
		}
	}
	if _, err := s.LookupValue(ctx, "name", "x", secondaryindex.LookupOptions{}); !errors.Is(err, secondaryindex.ErrNotUnique) {
		t.Errorf("LookupValue of a non-unique index: %v", err)
	}
	if _, err := s.LookupValue(ctx, "email", "nobody", secondaryindex.LookupOptions{}); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("LookupValue of a missing value: %v", err)
	}
}
