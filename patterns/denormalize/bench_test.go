package denormalize_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/denormalize"
)

const benchDepts = 10

// benchGuide is a metered guide partition with benchDepts departments,
// each managed by its own employee.
func benchGuide(b *testing.B) (guide, *cost.Meter, *aztables.Client) {
	b.Helper()
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	g := newGuide(b, metered, denormalize.Config{})
	for i := range benchDepts {
		if err := g.copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(i), Name: fmt.Sprint("Manager ", i), Phone: "425-555-0100"}); err != nil {
			b.Fatal(err)
		}
		if err := g.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: fmt.Sprint(deptPrefix, i), ManagerID: empID(i)}); err != nil {
			b.Fatal(err)
		}
	}
	return g, meter, metered.TableService.NewClient(g.emps.Name())
}

func report(b *testing.B, meter *cost.Meter, before cost.Snapshot) {
	used := meter.Snapshot().Sub(before)
	b.ReportMetric(float64(used.Total())/float64(b.N), "storage-tx/op")
}

// BenchmarkRead reads a department with its manager's name and phone.
// /tablekit reads the denormalised department, one point query;
// /raw is the normalised read with raw aztables, the department then its
// manager (two point queries); /raw-denormalised is the one point query
// with raw aztables, to show what tablekit's typed read costs.
func BenchmarkRead(b *testing.B) {
	ctx := context.Background()
	g, meter, raw := benchGuide(b)
	b.Run("tablekit", func(b *testing.B) {
		before := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			d, err := g.depts.Get(ctx, "Sales", fmt.Sprint(deptPrefix, i%benchDepts))
			if err != nil || d.ManagerName == "" || d.ManagerPhone == "" {
				b.Fatal(d, err)
			}
		}
		report(b, meter, before)
	})
	b.Run("raw", func(b *testing.B) {
		before := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			resp, err := raw.GetEntity(ctx, "Sales", fmt.Sprint(deptPrefix, i%benchDepts), nil)
			if err != nil {
				b.Fatal(err)
			}
			var d struct{ ManagerID string }
			if err := json.Unmarshal(resp.Value, &d); err != nil {
				b.Fatal(err)
			}
			resp, err = raw.GetEntity(ctx, "Sales", d.ManagerID, nil)
			if err != nil {
				b.Fatal(err)
			}
			var m struct{ Name, Phone string }
			if err := json.Unmarshal(resp.Value, &m); err != nil || m.Name == "" || m.Phone == "" {
				b.Fatal(m, err)
			}
		}
		report(b, meter, before)
	})
	b.Run("raw-denormalised", func(b *testing.B) {
		before := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			resp, err := raw.GetEntity(ctx, "Sales", fmt.Sprint(deptPrefix, i%benchDepts), nil)
			if err != nil {
				b.Fatal(err)
			}
			var d struct{ ManagerName, ManagerPhone string }
			if err := json.Unmarshal(resp.Value, &d); err != nil || d.ManagerName == "" || d.ManagerPhone == "" {
				b.Fatal(d, err)
			}
		}
		report(b, meter, before)
	})
}

// BenchmarkWrite changes a manager's phone: the price of denormalisation
// on the write side. /tablekit is ModifySource (read the employee, read
// the departments of the partition, one transaction with the employee and
// the department's copy); /raw is the normalised write with raw aztables
// (read, conditional update); /handwritten is the same denormalised write
// as /tablekit by hand with raw aztables (read, query, transaction).
func BenchmarkWrite(b *testing.B) {
	ctx := context.Background()
	g, meter, raw := benchGuide(b)
	b.Run("tablekit", func(b *testing.B) {
		before := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			_, err := g.copies.ModifySource(ctx, "Sales", empID(i%benchDepts), func(e *Employee) error {
				e.Phone = fmt.Sprint("tk-", i)
				return nil
			}, entity.ModifyOptions{})
			if err != nil {
				b.Fatal(err)
			}
		}
		report(b, meter, before)
	})
	b.Run("raw", func(b *testing.B) {
		before := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			id := empID(i % benchDepts)
			resp, err := raw.GetEntity(ctx, "Sales", id, nil)
			if err != nil {
				b.Fatal(err)
			}
			var e map[string]any
			if err := json.Unmarshal(resp.Value, &e); err != nil {
				b.Fatal(err)
			}
			strip(e)
			e["Phone"] = fmt.Sprint("raw-", i)
			body, _ := json.Marshal(e)
			if _, err := raw.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: &resp.ETag, UpdateMode: aztables.UpdateModeReplace}); err != nil {
				b.Fatal(err)
			}
		}
		report(b, meter, before)
	})
	b.Run("handwritten", func(b *testing.B) {
		before := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			id := empID(i % benchDepts)
			resp, err := raw.GetEntity(ctx, "Sales", id, nil)
			if err != nil {
				b.Fatal(err)
			}
			var e map[string]any
			if err := json.Unmarshal(resp.Value, &e); err != nil {
				b.Fatal(err)
			}
			strip(e)
			e["Phone"] = fmt.Sprint("hw-", i)
			body, _ := json.Marshal(e)
			actions := []aztables.TransactionAction{{ActionType: aztables.TransactionTypeUpdateReplace, Entity: body, IfMatch: &resp.ETag}}
			pager := raw.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'Sales' and RowKey ge 'dept ' and RowKey lt 'dept!'")})
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for _, v := range page.Entities {
					var d map[string]any
					if err := json.Unmarshal(v, &d); err != nil {
						b.Fatal(err)
					}
					if d["ManagerID"] != id {
						continue
					}
					etag, _ := d["odata.etag"].(string)
					strip(d)
					d["ManagerPhone"] = e["Phone"]
					body, _ := json.Marshal(d)
					actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeUpdateReplace, Entity: body, IfMatch: to.Ptr(azcore.ETag(etag))})
				}
			}
			if _, err := raw.SubmitTransaction(ctx, actions, nil); err != nil {
				b.Fatal(err)
			}
		}
		report(b, meter, before)
	})
	g.check(b, "Sales")
}

// strip removes what the service sends but does not take back.
func strip(e map[string]any) {
	for k := range e {
		if strings.HasPrefix(k, "odata.") {
			delete(e, k)
		}
	}
	delete(e, "Timestamp")
}
