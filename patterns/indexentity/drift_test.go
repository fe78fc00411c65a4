package indexentity_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// driftCase is one way of keeping the lists, for the drift tests.
type driftCase struct {
	name      string
	placement indexentity.Placement
	sameTable bool // OtherPartition: index entities in the employees' table
}

var driftCases = []driftCase{
	{"same partition", indexentity.SamePartition, false},
	{"other partition", indexentity.OtherPartition, false},
	{"other partition, same table", indexentity.OtherPartition, true},
	{"blob", indexentity.Blob, false},
}

// fixture is a Set of one driftCase with its storage.
type fixture struct {
	c    driftCase
	w    *world
	s    *indexentity.Set[Employee]
	p    *eventual.Processor
	rows *entity.Table[entity.DynamicEntity] // where the index entities live
}

func newFixture(t testing.TB, c driftCase) *fixture {
	t.Helper()
	w := newWorld(t, c.placement, 1)
	if c.sameTable || c.placement == indexentity.SamePartition {
		w.entries = patterntest.View[entity.DynamicEntity](t, env, w.emps)
	}
	f := &fixture{c: c, w: w, rows: w.entries}
	f.s, f.p = w.set(t, env, patterntest.Fast(), indexentity.Config{Retry: hot})
	return f
}

// insert writes employees through the Set and lets its lists catch up.
func (f *fixture) insert(t testing.TB, es ...Employee) {
	t.Helper()
	ctx := context.Background()
	for _, e := range es {
		if err := f.s.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	f.settle(t)
}

// settle drains the queue when the lists are kept by patterns/eventual.
func (f *fixture) settle(t testing.TB) {
	t.Helper()
	if f.c.placement == indexentity.SamePartition {
		return
	}
	if err := patterntest.Drain(context.Background(), f.p, f.w.qs); err != nil {
		t.Fatal(err)
	}
}

// setList overwrites value's list of partition pk by hand with text as
// its content (the Members property, or the blob after its header); nil
// deletes it.
func (f *fixture) setList(t testing.TB, pk, value string, text *string) {
	t.Helper()
	ctx := context.Background()
	if f.c.placement == indexentity.Blob {
		b := f.w.blobs(env).NewBlockBlobClient("lastname/" + keys.Compound(pk, value) + ".keys")
		if text == nil {
			if _, err := b.Delete(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.BlobNotFound) {
				t.Fatal(err)
			}
			return
		}
		body := *text
		if body != "garbage" {
			body = "tablekit.indexentity.v1\n" + body
		}
		if _, err := b.Upload(ctx, streaming.NopCloser(bytes.NewReader([]byte(body))), nil); err != nil {
			t.Fatal(err)
		}
		return
	}
	epk := pk
	if f.c.placement == indexentity.OtherPartition {
		epk = "lastname_" + pk
	}
	f.setRow(t, epk, "lastname_"+keys.Compound(value), text)
}

func (f *fixture) setRow(t testing.TB, epk, rk string, text *string) {
	t.Helper()
	ctx := context.Background()
	if text == nil {
		if _, err := f.rows.DeleteIfExists(ctx, epk, rk); err != nil {
			t.Fatal(err)
		}
		return
	}
	e := &entity.DynamicEntity{PartitionKey: epk, RowKey: rk, Properties: map[string]any{indexentity.PropMembers: *text}}
	if err := f.rows.Upsert(ctx, e, entity.Replace); err != nil {
		t.Fatal(err)
	}
}

func ptr(s string) *string { return &s }

// brief is a finding as the tests compare them.
func brief(f drift.Finding) string {
	if f.Kind == drift.Stale {
		return fmt.Sprintf("%v %s", f.Kind, f.Entry.RowKey)
	}
	return fmt.Sprintf("%v %s/%s", f.Kind, f.Primary.PartitionKey, f.Primary.RowKey)
}

func briefs(fs []drift.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = brief(f)
	}
	sort.Strings(out)
	return out
}

// TestDriftCheckAndRebuild corrupts the lists by hand — a member left
// out, a member that is gone, one that holds another value, a list that
// does not decode, a list deleted, a list of a partition with no
// employees, a continuation entity no directory names — and checks that
// Check reports exactly those, that Rebuild repairs them, and that the
// lists are then exact.
func TestDriftCheckAndRebuild(t *testing.T) {
	t.Parallel()
	for _, c := range driftCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, c)
			f.insert(t,
				Employee{PartitionKey: "Sales", RowKey: "000001", LastName: "Jones"},
				Employee{PartitionKey: "Sales", RowKey: "000002", LastName: "Smith"},
				Employee{PartitionKey: "Sales", RowKey: "000003", LastName: "Jones"},
				Employee{PartitionKey: "Sales", RowKey: "000004", LastName: "Smith"},
				Employee{PartitionKey: "Sales", RowKey: "000005", LastName: "Brown"},
				Employee{PartitionKey: "Marketing", RowKey: "000006", LastName: "Jones"},
			)
			noDrift(t, f.s)

			f.setList(t, "Sales", "Jones", ptr("000001\n000002\n000099\n"))
			f.setList(t, "Sales", "Brown", ptr("garbage"))
			f.setList(t, "Marketing", "Jones", nil)
			f.setList(t, "Gone", "Jones", ptr("000042\n"))
			want := []string{
				"missing Sales/000003", "orphan Sales/000002", "orphan Sales/000099",
				"missing Sales/000005", "missing Marketing/000006", "orphan Gone/000042",
			}
			if c.placement == indexentity.Blob {
				want = append(want, "stale lastname/Sales Brown.keys")
			} else {
				want = append(want, "stale lastname_Brown")
				f.setRow(t, map[bool]string{true: "Sales", false: "lastname_Sales"}[c.placement == indexentity.SamePartition], "lastname_Smith 7", ptr("000004\n"))
				want = append(want, "stale lastname_Smith 7")
			}
			sort.Strings(want)
			if got := briefs(findings(t, f.s, indexentity.CheckOptions{})); !slices.Equal(got, want) {
				t.Fatalf("findings:\n%q\nwant\n%q", got, want)
			}
			// Only the partitions asked for.
			got := briefs(findings(t, f.s, indexentity.CheckOptions{Partitions: []string{"Marketing", "Gone"}}))
			if !slices.Equal(got, []string{"missing Marketing/000006", "orphan Gone/000042"}) {
				t.Errorf("findings of Marketing and Gone: %q", got)
			}

			sum, err := f.s.Rebuild(ctx, indexentity.CheckOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Drift() < len(want) || sum.Repaired < len(want) || sum.Next != "" {
				t.Errorf("Rebuild: %+v", sum)
			}
			t.Logf("Rebuild: %+v", sum)
			noDrift(t, f.s)
			for pk, byName := range map[string]map[string][]string{
				"Sales":     {"Jones": {"000001", "000003"}, "Smith": {"000002", "000004"}, "Brown": {"000005"}},
				"Marketing": {"Jones": {"000006"}},
				"Gone":      {"Jones": nil},
			} {
				for name, rks := range byName {
					got, err := f.s.Members(ctx, "lastname", pk, name)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, rks) {
						t.Errorf("%s in %s: %v, want %v", name, pk, got, rks)
					}
				}
			}
		})
	}
}

// TestRebuildResumes kills a rebuild of six partitions half-way — its
// context cancelled and every later request stopped — and resumes it
// from the last token it passed to Checkpoint: the second run starts
// after the partitions the first finished, and the lists end exact.
func TestRebuildResumes(t *testing.T) {
	t.Parallel()
	for _, c := range []driftCase{driftCases[0], driftCases[1]} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, c)
			var es []Employee
			for d := range 6 {
				for i := range 5 {
					es = append(es, Employee{PartitionKey: fmt.Sprintf("D%d", d), RowKey: keys.Pad(int64(i), 6), LastName: []string{"Jones", "Smith"}[i%2]})
				}
			}
			f.insert(t, es...)
			for d := range 6 {
				f.setList(t, fmt.Sprintf("D%d", d), "Jones", nil) // three employees missing from each
			}

			killer := crashtest.NewKiller(-1)
			victim := &fixture{c: c, w: f.w, rows: f.rows}
			victim.s, victim.p = f.w.set(t, env.With(killer), patterntest.Fast(), indexentity.Config{Retry: hot})
			kctx, cancel := context.WithCancel(ctx)
			var tokens []string
			_, err := victim.s.Rebuild(kctx, indexentity.CheckOptions{Checkpoint: func(tok string) {
				tokens = append(tokens, tok)
				if len(tokens) == 3 {
					killer.Kill()
					cancel()
				}
			}})
			cancel()
			if err == nil || !errors.Is(err, crashtest.ErrKilled) && !errors.Is(err, context.Canceled) {
				t.Fatalf("the killed rebuild returned %v", err)
			}
			if len(tokens) != 3 {
				t.Fatalf("%d checkpoints before the kill", len(tokens))
			}
			left := findings(t, f.s, indexentity.CheckOptions{})
			if n := len(left); n != 9 {
				t.Errorf("after the kill %d findings, want the 9 of three partitions: %q", n, briefs(left))
			}
			sum, err := f.s.Rebuild(ctx, indexentity.CheckOptions{Resume: tokens[len(tokens)-1]})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Missing != 9 || sum.Repaired != 9 {
				t.Errorf("the resumed rebuild: %+v, want 9 missing repaired", sum)
			}
			noDrift(t, f.s)
			if _, err := f.s.Rebuild(ctx, indexentity.CheckOptions{Resume: "nonsense"}); !errors.Is(err, indexentity.ErrInvalidToken) {
				t.Errorf("a bad token: %v", err)
			}
		})
	}
}

// TestRebuildWhileWriting rebuilds lists that were corrupted by hand
// while eight writers keep renaming the same employees: the repairs are
// conditional on what they read, so none undoes a write; once the
// writers stop, one more rebuild leaves the lists exact.
func TestRebuildWhileWriting(t *testing.T) {
	t.Parallel()
	for _, c := range []driftCase{driftCases[0], driftCases[1]} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, c)
			names := []string{"Jones", "Smith", "Brown"}
			var es []Employee
			for i := range 60 { // 20 a name: more than Rebuild repairs member by member
				es = append(es, Employee{PartitionKey: "Sales", RowKey: keys.Pad(int64(i), 6), LastName: names[i%3]})
			}
			f.insert(t, es...)
			f.setList(t, "Sales", "Jones", ptr("000001\n000099\n"))
			f.setList(t, "Sales", "Smith", nil)

			stop := make(chan struct{})
			done := make(chan error, 4)
			var writes atomic.Int64
			for w := range 4 {
				go func() {
					done <- func() error {
						for i := w; ; i += 4 {
							select {
							case <-stop:
								return nil
							default:
							}
							writes.Add(1)
							rk := keys.Pad(int64(i*7%60), 6)
							if _, err := f.s.Modify(ctx, "Sales", rk, func(e *Employee) error { e.LastName = names[i%3]; return nil }, entity.ModifyOptions{}); err != nil {
								return err
							}
						}
					}()
				}()
			}
			var sums []drift.Summary
			for range 2 {
				sum, err := f.s.Rebuild(ctx, indexentity.CheckOptions{})
				if err != nil {
					t.Fatal(err)
				}
				sums = append(sums, sum)
			}
			close(stop)
			for range 4 {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%d writes during two rebuilds: %+v", writes.Load(), sums)
			if sums[0].Drift() == 0 {
				t.Error("the first rebuild found nothing")
			}
			f.settle(t)
			if _, err := f.s.Rebuild(ctx, indexentity.CheckOptions{}); err != nil {
				t.Fatal(err)
			}
			noDrift(t, f.s)
			want := expect(t, f.w.emps, "Sales", lastName)
			for _, name := range names {
				if got := lookup(t, f.s, "lastname", "Sales", name); !slices.Equal(got, want[name]) {
					t.Errorf("%s: %v, want %v", name, got, want[name])
				}
			}
		})
	}
}

// TestRebuildFence has a writer rename an employee from Jones to Smith
// just before Rebuild rewrites Jones's list whole (20 employees missing
// from it): the rename's transaction does not touch Jones's list, which
// did not name the employee, so the rewrite — conditional on the list
// alone — lists a Smith as a Jones. Rebuild then reads the partition's
// employees again, finds the renamed one changed, and resyncs it: the
// lists end exact.
func TestRebuildFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other, emps := newLocal(t, indexentity.Config{})
	for i := range 20 {
		if err := other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: keys.Pad(int64(i), 6), LastName: "Jones"}); err != nil {
			t.Fatal(err)
		}
	}
	bags := patterntest.View[entity.DynamicEntity](t, env, emps)
	if _, err := bags.DeleteIfExists(ctx, "Sales", "lastname_Jones"); err != nil {
		t.Fatal(err)
	}
	hook := &patterntest.Before{Match: isBatch, Fn: func() {
		if _, err := other.Modify(ctx, "Sales", "000003", func(e *Employee) error { e.LastName = "Smith"; return nil }, entity.ModifyOptions{}); err != nil {
			t.Error(err)
		}
	}}
	s, err := indexentity.New(patterntest.View[Employee](t, env.With(hook), emps), indexentity.Config{},
		indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.Rebuild(ctx, indexentity.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Missing != 20 || sum.Repaired != 20 {
		t.Errorf("Rebuild: %+v", sum)
	}
	noDrift(t, s)
	if got := lookup(t, s, "lastname", "Sales", "Smith"); !slices.Equal(got, []string{"000003"}) {
		t.Errorf("Smith: %v", got)
	}
	if got, _ := s.Members(ctx, "lastname", "Sales", "Jones"); len(got) != 19 || slices.Contains(got, "000003") {
		t.Errorf("Jones's list: %v", got)
	}
}
