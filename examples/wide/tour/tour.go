// Package tour is the wide-entities step of tablekit's tour: an employee
// with 1,000 skill ratings, more properties than one entity of the Table
// service may hold (252), kept as several rows of one partition, written by
// one transaction and read by one query, never torn (design guide §6.10).
package tour

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/patterns/wide"
)

// Employee is an employee and a rating, 1 to 5, for each skill: the skills
// are properties of their own (Skills["Go"] is the property Go), so a query
// can filter on them, and there are a thousand of them.
type Employee struct {
	Dept   string         `table:"PartitionKey,pk"`
	ID     string         `table:"RowKey,rk"`
	ETag   string         `table:",etag"`
	Name   string         `table:",omitempty"`
	Title  string         `table:",omitempty"`
	Skills map[string]any `table:",extra"`
}

var named = []string{"Go", "SQL", "Kubernetes", "Rust", "TypeScript", "Terraform", "Python", "Kusto", "Networking", "Negotiation"}

// skills returns n ratings: the named skills first, then Skill0011 ….
func skills(n int) map[string]any {
	out := make(map[string]any, n)
	for i := range n {
		name := fmt.Sprintf("Skill%04d", i+1)
		if i < len(named) {
			name = named[i]
		}
		out[name] = int32(i%5 + 1)
	}
	return out
}

// Tour creates its own uniquely named table, runs the story against it,
// printing what happens and what it costs to out, and deletes the table.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	meter := cost.NewMeter()
	client, drop, err := env.With(meter.Policy()).ScratchTable(ctx, "widetour")
	if err != nil {
		return err
	}
	defer func() {
		if derr := drop(); derr != nil {
			err = errors.Join(err, derr)
		} else {
			fmt.Fprintln(out, "Deleted the table.")
		}
	}()
	fmt.Fprintln(out, "== wide: an employee with 1,000 skill ratings, more properties than one entity holds (design guide §6.10)")
	tbl, err := entity.NewTable[Employee](client)
	if err != nil {
		return err
	}
	emps, err := wide.New(tbl, wide.Config{})
	if err != nil {
		return err
	}
	s := &story{ctx: ctx, out: out, meter: meter, client: client, emps: emps}
	return s.run()
}

type story struct {
	ctx    context.Context
	out    io.Writer
	meter  *cost.Meter
	client *aztables.Client
	emps   *wide.Table[Employee]
}

// cost runs f and says how many storage transactions it took.
func (s *story) cost(f func() error) (int64, error) {
	before := s.meter.Snapshot()
	err := f()
	return s.meter.Snapshot().Sub(before).Total(), err
}

func (s *story) run() error {
	const dept, id = "Engineering", "000123"
	e := Employee{Dept: dept, ID: id, Name: "Jonathan Jones", Title: "Principal engineer", Skills: skills(1000)}
	tx, err := s.cost(func() error { return s.emps.Insert(s.ctx, &e) })
	if err != nil {
		return err
	}
	rows, err := s.rows(dept)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "1. Insert: %s with %d ratings in %d storage transaction: one entity group transaction of %d rows.\n", e.Name, len(e.Skills), tx, len(rows))
	for _, r := range rows {
		note := ""
		if strings.HasSuffix(r.key, " 00") {
			note = "   (the head: version, rows, manifest, history; no skill)"
		}
		fmt.Fprintf(s.out, "     RowKey %-10q %3d properties%s\n", r.key, r.props, note)
	}

	var read Employee
	tx, err = s.cost(func() error { read, err = s.emps.Get(s.ctx, dept, id); return err })
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "2. Get: one range query, %d storage transaction: %s, %d ratings, Go = %v; never a mix of two versions.\n", tx, read.Name, len(read.Skills), read.Skills["Go"])

	before := rows
	tx, err = s.cost(func() error {
		_, err := s.emps.Modify(s.ctx, dept, id, func(e *Employee) error {
			e.Skills["Go"] = int32(5)
			return nil
		}, entity.ModifyOptions{})
		return err
	})
	if err != nil {
		return err
	}
	if rows, err = s.rows(dept); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "3. Modify: Go 1 → 5 in %d storage transactions (a read and a transaction) that rewrote rows %s; the other %d keep their ETags.\n",
		tx, strings.Join(changed(before, rows), ", "), len(rows)-len(changed(before, rows)))

	read.Skills["Rust"] = int32(1)
	err = s.emps.Replace(s.ctx, &read)
	fmt.Fprintf(s.out, "4. Replace from the read of step 2, made before step 3: refused, ErrPreconditionFailed = %v; nothing changed.\n", errors.Is(err, entity.ErrPreconditionFailed))

	now, err := s.emps.Get(s.ctx, dept, id)
	if err != nil {
		return err
	}
	now.Skills = skills(10)
	tx, err = s.cost(func() error { return s.emps.Replace(s.ctx, &now) })
	if err != nil {
		return err
	}
	if rows, err = s.rows(dept); err != nil {
		return err
	}
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = fmt.Sprintf("%q", r.key)
	}
	fmt.Fprintf(s.out, "5. Replace with the top 10 skills: %d storage transaction, which also deleted the rows no longer needed; stored rows: %s.\n", tx, strings.Join(keys, ", "))

	tx, err = s.cost(func() error { return s.emps.Delete(s.ctx, dept, id, now.ETag) })
	if err != nil {
		return err
	}
	if rows, err = s.rows(dept); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "6. Delete: %d storage transaction; rows left: %d.\n", tx, len(rows))
	return nil
}

type stored struct {
	key, etag string
	props     int
}

// rows lists the partition's rows as the service stores them.
func (s *story) rows(pk string) ([]stored, error) {
	raw, err := entity.NewTable[entity.DynamicEntity](s.client)
	if err != nil {
		return nil, err
	}
	var out []stored
	for d, err := range raw.Query(s.ctx, entity.Query{Filter: filter.PK(pk)}) {
		if err != nil {
			return nil, err
		}
		out = append(out, stored{key: d.RowKey, etag: d.ETag, props: len(d.Properties)})
	}
	return out, nil
}

// changed lists the keys of the rows whose ETag differs.
func changed(before, after []stored) []string {
	was := map[string]string{}
	for _, r := range before {
		was[r.key] = r.etag
	}
	var out []string
	for _, r := range after {
		if was[r.key] != r.etag {
			out = append(out, fmt.Sprintf("%q", r.key))
		}
	}
	return out
}
