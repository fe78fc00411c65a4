package indextest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// NewStore makes the tables (and, when the adapter has Blob layouts, the
// container) of one run.
func (a *Adapter) NewStore(t testing.TB) Store {
	t.Helper()
	st := Store{
		Primaries: patterntest.Table[entity.DynamicEntity](t, a.Env),
		Entries:   patterntest.Table[entity.DynamicEntity](t, a.Env),
	}
	if a.hasPlacement(Blob) {
		st.Container = a.Env.Container(t)
	}
	return st
}

// Processor returns a processor over a new queue, its clients made from
// e: patterntest.Fast with a redelivery window — RetryDelay 200 ms,
// doubling to 1 s, 20 deliveries: 19 s — since secondaryindex's unique
// OtherPartition and TableWide indexes wait for their reservations'
// Config.Grace by failing, which defaults to two thirds of the window
// (Fast alone redelivers at once, and no Grace fits it).
func Processor(t testing.TB, e *integration.Env) *eventual.Processor {
	t.Helper()
	qs := patterntest.Queues(t, e, 1)
	cfg := patterntest.Fast()
	cfg.RetryDelay, cfg.MaxRetryDelay, cfg.MaxDeliveries = 200*time.Millisecond, time.Second, 20
	p, err := eventual.New(patterntest.SameQueues(t, e, qs), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Drain runs p until its queue is empty and fails the test if a message
// was poisoned; it returns how many deliveries failed and were retried.
func Drain(t testing.TB, p *eventual.Processor) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := p.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.InPoison != 0 {
		t.Errorf("%d messages poisoned: %+v", rep.InPoison, rep)
	}
	return rep.Retried
}

// Findings runs s's Check and returns what it found.
func Findings(t testing.TB, s Set) []drift.Finding {
	t.Helper()
	return patterntest.Collect(t, s.Check(context.Background()))
}

// NoDrift fails the test when s's Check finds anything.
func NoDrift(t testing.TB, what string, s Set) {
	t.Helper()
	fs := Findings(t, s)
	for i, f := range fs {
		if i == 8 {
			t.Errorf("%s: … %d findings in all", what, len(fs))
			break
		}
		t.Errorf("%s: drift: %v", what, f)
	}
}

// keyOrder sorts keys as the service does: PartitionKey, then RowKey.
func keyOrder(a, b drift.Key) int {
	if c := keys.Compare(a.PartitionKey, b.PartitionKey); c != 0 {
		return c
	}
	return keys.Compare(a.RowKey, b.RowKey)
}

// Holders returns, for each value, the keys of the orders holding it, in
// key order.
func Holders(orders []*entity.DynamicEntity) map[string][]drift.Key {
	out := map[string][]drift.Key{}
	for _, o := range orders {
		if v, ok := Status(o); ok {
			out[v] = append(out[v], drift.Key{PartitionKey: o.PartitionKey, RowKey: o.RowKey})
		}
	}
	for _, ks := range out {
		slices.SortFunc(ks, keyOrder)
	}
	return out
}

// Lookups checks that every lookup of every value of want returns
// exactly its holders, in key order, listed and found alike.
func Lookups(t testing.TB, s Set, l Layout, partitions []string, want map[string][]drift.Key) {
	t.Helper()
	ctx := context.Background()
	for _, v := range slices.Sorted(maps.Keys(want)) {
		scopes := partitions
		if l.Placement == Wide {
			scopes = []string{""}
		}
		for _, pk := range scopes {
			var exp []drift.Key
			for _, k := range want[v] {
				if pk == "" || k.PartitionKey == pk {
					exp = append(exp, k)
				}
			}
			for name, lookup := range map[string]func(context.Context, string, string) ([]drift.Key, error){"listed": s.Listed, "found": s.Found} {
				got, err := lookup(ctx, pk, v)
				if err != nil {
					t.Fatalf("%s %q in %q: %v", name, v, pk, err)
				}
				if !slices.Equal(got, exp) {
					t.Errorf("%s %q in %q: %v, want %v", name, v, pk, got, exp)
				}
			}
		}
	}
}

// Contents is what a store holds, read raw: each table's entities by
// "table/pk/rk" with their properties (metadata, Timestamp and the write
// token left out; tablekit's own entities, the outbox's and eventual's,
// too), and each blob's content by name.
func Contents(t testing.TB, e *integration.Env, st Store) map[string]any {
	t.Helper()
	out := map[string]any{}
	for name, tbl := range map[string]*entity.Table[entity.DynamicEntity]{"primaries": st.Primaries, "entries": st.Entries} {
		raw := patterntest.View[json.RawMessage](t, e, tbl)
		for b, err := range raw.Query(context.Background(), entity.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			pk, _ := m["PartitionKey"].(string)
			rk, _ := m["RowKey"].(string)
			if strings.HasPrefix(rk, "tablekit.") {
				continue
			}
			for k := range m {
				if strings.HasPrefix(k, "odata.") || strings.HasPrefix(k, "Timestamp") || strings.HasPrefix(k, "TkWrite") {
					delete(m, k)
				}
			}
			out[name+"/"+pk+"/"+rk] = m
		}
	}
	if st.Container != nil {
		for name, data := range blobs(t, st.Container) {
			out["blob/"+name] = data
		}
	}
	return out
}

func blobs(t testing.TB, c *container.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	pager := c.NewListBlobsFlatPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			resp, err := c.NewBlobClient(*b.Name).DownloadStream(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			out[*b.Name] = string(data)
		}
	}
	return out
}

// SameContents fails the test where got and want differ.
func SameContents(t testing.TB, got, want map[string]any) {
	t.Helper()
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(got)) {
		w, ok := want[k]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("extra %s: %v", k, got[k]))
		case !reflect.DeepEqual(got[k], w):
			diffs = append(diffs, fmt.Sprintf("%s: %v, want %v", k, got[k], w))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if _, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("missing %s: %v", k, want[k]))
		}
	}
	for i, d := range diffs {
		if i == 10 {
			t.Errorf("… %d differences in all", len(diffs))
			break
		}
		t.Error(d)
	}
}
