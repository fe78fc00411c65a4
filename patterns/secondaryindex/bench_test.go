package secondaryindex_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// perOp reports the storage transactions per operation since s.
func perOp(b *testing.B, m *cost.Meter, s cost.Snapshot) {
	b.ReportMetric(float64(m.Snapshot().Sub(s).Total())/float64(b.N), "storage-tx/op")
}

// paired runs the operations once each per iteration, in an order that
// rotates, and reports each one's mean time and client CPU, the first's
// speed relative to the others (their time over its) and its CPU relative
// to theirs (its CPU over theirs: cpu-vs-…): on a loaded machine the
// operations share the same moments, so the ratio holds where separate
// sub-benchmarks drift apart.
func paired(b *testing.B, names []string, ops ...func(i int)) {
	d := make([]time.Duration, len(ops))
	cpu := make([]time.Duration, len(ops))
	for i := 0; b.Loop(); i++ {
		for k := range ops {
			j := (k + i) % len(ops)
			t0, c0 := time.Now(), processCPU()
			ops[j](i)
			d[j] += time.Since(t0)
			cpu[j] += processCPU() - c0
		}
	}
	for j, name := range names {
		b.ReportMetric(float64(d[j].Microseconds())/float64(b.N), name+"-µs/op")
		b.ReportMetric(float64(cpu[j].Microseconds())/float64(b.N), name+"-cpu-µs/op")
		if j > 0 {
			b.ReportMetric(float64(d[j])/float64(d[0]), "speed-vs-"+name)
			if cpu[j] > 0 {
				b.ReportMetric(float64(cpu[0])/float64(cpu[j]), "cpu-vs-"+name)
			}
		}
	}
}

func benchEmployee(i int) Employee {
	return Employee{PartitionKey: "Sales", RowKey: empid(i), FirstName: "John", LastName: "Jones", Email: fmt.Sprintf("jones%d@contoso.com", i), Age: 34}
}

// rawBody is the JSON of an employee as aztables takes it.
func rawBody(e Employee, rk string) []byte {
	return fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":%q,"FirstName":%q,"LastName":%q,"Email":%q,"Age":%d}`, e.PartitionKey, rk, e.FirstName, e.LastName, e.Email, e.Age)
}

// BenchmarkWrite inserts employees with an email and a last-name index in
// the same partition: one entity group transaction each (/tablekit),
// against a single insert of the employee alone (/raw) and the same three
// entities in one aztables transaction (/raw-transaction), which is what
// Azurite's transaction costs on its own; /paired alternates the three.
func BenchmarkWrite(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	b.Run("tablekit", func(b *testing.B) {
		s := localSet(b, employees(b, metered))
		start := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			e := benchEmployee(i)
			if err := s.Insert(ctx, &e); err != nil {
				b.Fatal(err)
			}
		}
		perOp(b, meter, start)
	})
	b.Run("raw", func(b *testing.B) {
		c := metered.Table(b)
		start := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			e := benchEmployee(i)
			if _, err := c.AddEntity(ctx, rawBody(e, e.RowKey), nil); err != nil {
				b.Fatal(err)
			}
		}
		perOp(b, meter, start)
	})
	rawTransaction := func(b *testing.B, c *aztables.Client, i int) {
		e := benchEmployee(i)
		actions := []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: rawBody(e, e.RowKey)},
			{ActionType: aztables.TransactionTypeAdd, Entity: rawBody(e, "email_"+e.Email)},
			{ActionType: aztables.TransactionTypeAdd, Entity: rawBody(e, "name_Jones "+e.RowKey)},
		}
		if _, err := c.SubmitTransaction(ctx, actions, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("raw-transaction", func(b *testing.B) {
		c := metered.Table(b)
		start := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			rawTransaction(b, c, i)
		}
		perOp(b, meter, start)
	})
	b.Run("paired", func(b *testing.B) {
		s := localSet(b, employees(b, env))
		c, ct := env.Table(b), env.Table(b)
		paired(b, []string{"tablekit", "raw", "raw-transaction"},
			func(i int) {
				e := benchEmployee(i)
				if err := s.Insert(ctx, &e); err != nil {
					b.Fatal(err)
				}
			},
			func(i int) {
				e := benchEmployee(i)
				if _, err := c.AddEntity(ctx, rawBody(e, e.RowKey), nil); err != nil {
					b.Fatal(err)
				}
			},
			func(i int) { rawTransaction(b, ct, i) })
	})
}

// BenchmarkLookup finds an employee by email, a point query on the email
// entry decoded into an Employee (/tablekit), against a point query of the
// employee by its keys (/raw); /paired alternates the two.
func BenchmarkLookup(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	tbl := employees(b, metered)
	s := localSet(b, tbl)
	const n = 100
	for i := range n {
		e := benchEmployee(i)
		if err := s.Insert(ctx, &e); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("tablekit", func(b *testing.B) {
		start := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			e, err := s.Lookup(ctx, "email", "Sales", fmt.Sprintf("jones%d@contoso.com", i%n), secondaryindex.LookupOptions{})
			if err != nil || e.Age != 34 {
				b.Fatal(e, err)
			}
		}
		perOp(b, meter, start)
	})
	b.Run("raw", func(b *testing.B) {
		c := tbl.Client()
		start := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			resp, err := c.GetEntity(ctx, "Sales", empid(i%n), nil)
			if err != nil || len(resp.Value) == 0 {
				b.Fatal(err)
			}
		}
		perOp(b, meter, start)
	})
	b.Run("paired", func(b *testing.B) {
		c := tbl.Client()
		paired(b, []string{"tablekit", "raw"},
			func(i int) {
				if _, err := s.Lookup(ctx, "email", "Sales", fmt.Sprintf("jones%d@contoso.com", i%n), secondaryindex.LookupOptions{}); err != nil {
					b.Fatal(err)
				}
			},
			func(i int) {
				if _, err := c.GetEntity(ctx, "Sales", empid(i%n), nil); err != nil {
					b.Fatal(err)
				}
			})
	})
}

// BenchmarkCheck checks a table of 2,000 employees (6,000 entities with
// their entries) for drift (/tablekit) against listing the same table
// with aztables (/raw), in entities per second; /paired alternates the
// two.
func BenchmarkCheck(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	tbl := employees(b, metered)
	s := localSet(b, tbl)
	const depts, per = 4, 500
	var load []entity.DynamicEntity
	for d := range depts {
		for i := range per {
			e := benchEmployee(i)
			e.PartitionKey = fmt.Sprintf("D%d", d)
			for _, rk := range []string{e.RowKey, "email_" + strings.ToLower(e.Email), "name_Jones " + e.RowKey} {
				load = append(load, *(&entity.DynamicEntity{PartitionKey: e.PartitionKey, RowKey: rk}).
					Set("FirstName", e.FirstName).Set("LastName", e.LastName).Set("Email", e.Email).Set("Age", e.Age).
					Set(secondaryindex.PropPrimaryPK, e.PartitionKey).Set(secondaryindex.PropPrimaryRK, e.RowKey))
			}
		}
	}
	for i := range load {
		if strings.HasPrefix(load[i].RowKey, "empid_") {
			delete(load[i].Properties, secondaryindex.PropPrimaryPK)
			delete(load[i].Properties, secondaryindex.PropPrimaryRK)
		} else if strings.HasPrefix(load[i].RowKey, "name_") {
			delete(load[i].Properties, "Email")
			delete(load[i].Properties, "Age")
		}
	}
	bags := patterntest.View[entity.DynamicEntity](b, env, tbl)
	if _, err := bags.BulkWrite(ctx, load, entity.BulkOptions{}); err != nil {
		b.Fatal(err)
	}
	if fs := findings(b, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
		b.Fatalf("the loaded table drifts: %v", fs[0])
	}
	total := len(load)
	list := func(b *testing.B) {
		n := 0
		pager := tbl.Client().NewListEntitiesPager(nil)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n += len(page.Entities)
		}
		if n != total {
			b.Fatalf("listed %d of %d", n, total)
		}
	}
	check := func(b *testing.B) {
		for _, err := range s.Check(ctx, secondaryindex.CheckOptions{}) {
			b.Fatal(err)
		}
	}
	b.Run("tablekit", func(b *testing.B) {
		start, t0 := meter.Snapshot(), time.Now()
		for b.Loop() {
			check(b)
		}
		b.ReportMetric(float64(total*b.N)/time.Since(t0).Seconds(), "entities/s")
		perOp(b, meter, start)
	})
	b.Run("raw", func(b *testing.B) {
		start, t0 := meter.Snapshot(), time.Now()
		for b.Loop() {
			list(b)
		}
		b.ReportMetric(float64(total*b.N)/time.Since(t0).Seconds(), "entities/s")
		perOp(b, meter, start)
	})
	b.Run("paired", func(b *testing.B) {
		paired(b, []string{"tablekit", "raw"}, func(int) { check(b) }, func(int) { list(b) })
	})
}
