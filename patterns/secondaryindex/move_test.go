package secondaryindex_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// movedSet is the Set of the move tests: email (unique) and name
// TableWide, employee age SamePartition.
func movedSet(t testing.TB, e *integration.Env, qs []eventual.Queue, tbl *entity.Table[Employee], pcfg eventual.Config) (*secondaryindex.Set[Employee], *eventual.Processor) {
	t.Helper()
	p, err := eventual.New(patterntest.SameQueues(t, e, qs), nil, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	email, name := emailIndex(secondaryindex.TableWide), wideName()
	email.Buckets = wideBuckets
	age := secondaryindex.Index[Employee]{Name: "age", Key: func(e *Employee) (string, bool) { return fmt.Sprintf("%03d", e.Age), true }}
	s, err := secondaryindex.New(patterntest.View[Employee](t, e, tbl), withProcessor(remoteConfig(nil), p), email, name, age)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// indexRows lists the rows of the table named name that are index
// entries or tablekit's own (intents), read raw.
func indexRows(t testing.TB, name string) []string {
	t.Helper()
	ks, _ := rawScan(t, name)
	var out []string
	for _, k := range ks {
		_, rk, _ := strings.Cut(k, "/")
		if !strings.HasPrefix(rk, "empid_") {
			out = append(out, k)
		}
	}
	return out
}

// TestMoveCrashAtEveryStep archives an employee indexed table-wide and in
// its partition with MoveTo, and kills the process after each storage
// request in turn. Recovery is what an eventual handler's redelivery
// does — MoveTo again — then the outbox relay and a worker that drains
// the queue: the employee is in the archive (read raw) and not in the
// table, no entry or intent is left (0 orphan entries, 0 lost rows), and
// Check finds nothing.
func TestMoveCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Timeout: time.Minute, Prepare: func(t *testing.T) crashtest.Run {
		ctx := context.Background()
		tbl := employees(t, env)
		archive := employees(t, env)
		qs := patterntest.Queues(t, env, 1)
		s, p := movedSet(t, env, qs, tbl, crashy())
		e := Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "John", LastName: "Jones", Email: "j@contoso.com", Age: 34}
		if err := s.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
		drainWide(t, p, qs)
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				ks, _ := movedSet(t, kenv, qs, tbl, crashy())
				return ks.MoveTo(ctx, "Sales", empid(1), patterntest.View[Employee](t, kenv, archive))
			},
			Crashed: func(t *testing.T, passed int) {
				// Never lost: in the table or in the archive.
				c := rawTable(t, tbl.Name())
				if rawGet(t, c, "Sales", empid(1)) == nil && rawGet(t, rawTable(t, archive.Name()), "Sales", empid(1)) == nil {
					t.Errorf("after %d requests the employee is in neither table", passed)
				}
			},
			Recover: func(ctx context.Context) error {
				if err := s.MoveTo(ctx, "Sales", empid(1), archive); err != nil {
					return err
				}
				if _, err := s.Relay(ctx); err != nil {
					return err
				}
				_, p := movedSet(t, env, qs, tbl, crashy())
				dctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				return patterntest.Drain(dctx, p, qs)
			},
			Check: func(t *testing.T) {
				if m := rawGet(t, rawTable(t, tbl.Name()), "Sales", empid(1)); m != nil {
					t.Errorf("the employee is still in the table: %v", m)
				}
				m := rawGet(t, rawTable(t, archive.Name()), "Sales", empid(1))
				if m == nil || m["Email"] != "j@contoso.com" || m["LastName"] != "Jones" {
					t.Errorf("the archived employee: %v", m)
				}
				if rows := indexRows(t, tbl.Name()); len(rows) != 0 {
					t.Errorf("left in the table: %q", rows)
				}
				if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
					t.Errorf("drift: %v", fs)
				}
				if n := poisoned(t, qs); n != 0 {
					t.Errorf("%d messages poisoned", n)
				}
			},
		}
	}})
	// read, copy, read, transaction (delete, age entry, intent), enqueue,
	// intent delete: at least 6.
	if n < 6 {
		t.Errorf("the scenario made %d requests", n)
	}
}

// TestMoveToRefused: a nil destination or the Set's own table is a
// *ConfigError before any request; a missing primary is a move done.
func TestMoveToRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	s := localSet(t, tbl)
	var ce *secondaryindex.ConfigError
	if err := s.MoveTo(ctx, "Sales", empid(1), nil); !errors.As(err, &ce) {
		t.Errorf("nil destination: %v", err)
	}
	if err := s.MoveTo(ctx, "Sales", empid(1), tbl); !errors.As(err, &ce) {
		t.Errorf("own table: %v", err)
	}
	if err := s.MoveTo(ctx, "Sales", empid(1), employees(t, env)); err != nil {
		t.Errorf("missing primary: %v", err)
	}
}

// TestPlainWriteBesideSet: writes through a plain entity.Table (and
// eventual.Move's plain delete) to primaries a Set manages break the
// ownership rule, and Check reports exactly the drift the package
// documentation predicts: a plain update of an indexed value leaves the
// old value's entry an Orphan and the new one Missing (a changed copied
// property: Stale); a plain delete leaves its entries Orphans; a plain
// insert's entries are Missing. Rebuild repairs it all.
func TestPlainWriteBesideSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	qs := patterntest.Queues(t, env, 1)
	s, p := movedSet(t, env, qs, tbl, fast())
	for i := range 3 {
		e := Employee{PartitionKey: "Sales", RowKey: empid(i), LastName: "Jones", Email: fmt.Sprintf("e%d@contoso.com", i), Age: 30}
		if err := s.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	drainWide(t, p, qs)
	plain := patterntest.View[Employee](t, env, tbl)
	// 0: new email, plain update.
	if _, err := plain.Modify(ctx, "Sales", empid(0), func(e *Employee) error { e.Email = "new@contoso.com"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	// 1: deleted plainly.
	if err := plain.Delete(ctx, "Sales", empid(1), entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	// 3: inserted plainly.
	e3 := Employee{PartitionKey: "Sales", RowKey: empid(3), LastName: "Smith", Email: "e3@contoso.com", Age: 30}
	if err := plain.Insert(ctx, &e3); err != nil {
		t.Fatal(err)
	}
	email := func(v string) string { return "email_" + keys.Bucket(v, wideBuckets) + "/email_" + v }
	name := func(v string, i int) string {
		return "name_" + keys.Bucket(v, wideBuckets) + "/name_" + keys.Compound(v, "Sales", empid(i))
	}
	age := func(i int) string { return "Sales/age_" + keys.Compound("030", empid(i)) }
	want := []string{
		fmt.Sprintf("%v email Sales/%s %s", drift.Missing, empid(0), email("new@contoso.com")),
		fmt.Sprintf("%v email Sales/%s %s", drift.Orphan, empid(0), email("e0@contoso.com")),
		fmt.Sprintf("%v email Sales/%s %s", drift.Orphan, empid(1), email("e1@contoso.com")),
		fmt.Sprintf("%v name Sales/%s %s", drift.Orphan, empid(1), name("Jones", 1)),
		fmt.Sprintf("%v age Sales/%s %s", drift.Orphan, empid(1), age(1)),
		fmt.Sprintf("%v email Sales/%s %s", drift.Missing, empid(3), email("e3@contoso.com")),
		fmt.Sprintf("%v name Sales/%s %s", drift.Missing, empid(3), name("Smith", 3)),
		fmt.Sprintf("%v age Sales/%s %s", drift.Missing, empid(3), age(3)),
		// The email index copies every property: the plain update's new
		// email makes the other entries' copies stale too.
		fmt.Sprintf("%v age Sales/%s %s", drift.Stale, empid(0), age(0)),
	}
	var got []string
	for _, f := range findings(t, s, secondaryindex.CheckOptions{}) {
		got = append(got, fmt.Sprintf("%v %s %s/%s %s/%s", f.Kind, f.Index, f.Primary.PartitionKey, f.Primary.RowKey, f.Entry.PartitionKey, f.Entry.RowKey))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := s.Rebuild(ctx, secondaryindex.CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	drainWide(t, p, qs)
	if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
		t.Errorf("drift after Rebuild: %v", fs)
	}
}
