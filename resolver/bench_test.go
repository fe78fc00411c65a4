package resolver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/resolver"
)

const benchRows = 999

// benchPages writes a partition of departments, employees and projects,
// interleaved by RowKey, and a partition of employees only, and returns
// each as the raw page the service sends (minimal metadata, as
// Table[json.RawMessage] reads it), with the Go type of each mixed row.
func benchPages(b *testing.B, s *resolver.Schema) (mixed, employees [][]byte, types []reflect.Type) {
	b.Helper()
	ctx := context.Background()
	tbl, err := resolver.NewTable(env.Table(b), s)
	if err != nil {
		b.Fatal(err)
	}
	for _, pk := range []string{"Mixed", "Employees"} {
		batch := tbl.NewBatch()
		for i := range benchRows {
			id := fmt.Sprintf("%06d", i)
			var v any = &Employee{PartitionKey: pk, RowKey: id, FirstName: "Jonathan", LastName: "Jones", Email: "jonesj@contoso.com", Age: 38, Salary: 72500.5, EmployeeID: 9000000000 + int64(i)}
			if pk == "Mixed" {
				switch i % 3 {
				case 0:
					v = &Department{PartitionKey: pk, RowKey: id, Name: "Sales", Manager: "Jones", EmployeeCount: int32(i)}
				case 2:
					v = &Project{PartitionKey: pk, RowKey: id, Title: "Launch of the new product line", Budget: 1 << 40, Due: due()}
				}
			}
			batch.Insert(v)
			if batch.Len() == entity.MaxBatchOperations || i == benchRows-1 {
				if _, err := tbl.Submit(ctx, batch); err != nil {
					b.Fatal(err)
				}
				batch = tbl.NewBatch()
			}
		}
	}
	raw, err := entity.NewTable[json.RawMessage](tbl.Client())
	if err != nil {
		b.Fatal(err)
	}
	read := func(pk string) [][]byte {
		p, err := raw.QueryPage(ctx, entity.Query{Filter: filter.PK(pk)}, "")
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Items) != benchRows || p.Next != "" {
			b.Fatalf("page of %d rows, next %q", len(p.Items), p.Next)
		}
		rows := make([][]byte, len(p.Items))
		for i, r := range p.Items {
			rows[i] = r
		}
		return rows
	}
	mixed, employees = read("Mixed"), read("Employees")
	// The baseline is told each row's type: the one it was written as.
	counts := map[reflect.Type]int{}
	for _, body := range mixed {
		v, err := s.Decode(body)
		if err != nil {
			b.Fatal(err)
		}
		t := reflect.TypeOf(v).Elem()
		types = append(types, t)
		counts[t]++
	}
	if len(counts) != 3 || counts[reflect.TypeFor[Employee]()] != benchRows/3 {
		b.Fatalf("mixed page of %v", counts)
	}
	return mixed, employees, types
}

// BenchmarkDecodeRatio decodes a page of 999 rows as the service sent it.
// The resolver finds each row's type by itself; the baseline is told it:
// entity.Unmarshal into the known type of each row (the mixed page), or into
// a []Employee as entity.Table[Employee].QueryPage does (a page of
// employees). The two run alternately, page by page, and the median of
// their per-page time ratios is reported ("ratio"): on a shared machine,
// alternating cancels the drift that separate runs suffer.
func BenchmarkDecodeRatio(b *testing.B) {
	for _, sc := range []struct {
		name string
		s    *resolver.Schema
	}{{"property", propertySchema(b)}, {"prefix", prefixSchema(b)}} {
		mixed, employees, types := benchPages(b, sc.s)
		resolve := func(bodies [][]byte) {
			for _, body := range bodies {
				if _, err := sc.s.Decode(body); err != nil {
					b.Fatal(err)
				}
			}
		}
		knownMixed := func(bodies [][]byte) {
			for i, body := range bodies {
				if err := entity.Unmarshal(body, reflect.New(types[i]).Interface()); err != nil {
					b.Fatal(err)
				}
			}
		}
		knownEmployees := func(bodies [][]byte) {
			page := make([]Employee, len(bodies))
			for i, body := range bodies {
				if err := entity.Unmarshal(body, &page[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		for _, page := range []struct {
			name   string
			bodies [][]byte
			known  func([][]byte)
		}{{"mixed", mixed, knownMixed}, {"employees", employees, knownEmployees}} {
			b.Run(sc.name+"/"+page.name, func(b *testing.B) {
				var ratios []float64
				var tr, tk time.Duration
				odd := false
				for b.Loop() {
					// Alternate which goes first, so that neither always
					// pays for the garbage of the other.
					var dr, dk time.Duration
					if odd {
						dk = timed(page.known, page.bodies)
						dr = timed(resolve, page.bodies)
					} else {
						dr = timed(resolve, page.bodies)
						dk = timed(page.known, page.bodies)
					}
					odd = !odd
					tr += dr
					tk += dk
					ratios = append(ratios, float64(dr)/float64(dk))
				}
				slices.Sort(ratios)
				b.ReportMetric(ratios[len(ratios)/2], "ratio")
				b.ReportMetric(float64(tr.Nanoseconds())/float64(b.N*benchRows), "resolver-ns/row")
				b.ReportMetric(float64(tk.Nanoseconds())/float64(b.N*benchRows), "known-ns/row")
			})
		}
	}
}

func timed(f func([][]byte), bodies [][]byte) time.Duration {
	t0 := time.Now()
	f(bodies)
	return time.Since(t0)
}

// BenchmarkPeek measures the alternative to the resolver's scanner for
// finding a row's type name: entity.Unmarshal into a small struct. Compare
// with BenchmarkFind (the scanner) and the known-ns/row of
// BenchmarkDecodeRatio (a whole decode).
func BenchmarkPeek(b *testing.B) {
	s := propertySchema(b)
	mixed, _, _ := benchPages(b, s)
	b.Run("unmarshal-small-struct", func(b *testing.B) {
		for b.Loop() {
			for _, body := range mixed {
				var h struct {
					PartitionKey, RowKey string
					EntityType           string
				}
				if err := entity.Unmarshal(body, &h); err != nil || h.EntityType == "" {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRows), "ns/row")
	})
}
