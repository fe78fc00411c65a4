// Command wide keeps an employee with 1,000 skill ratings — more
// properties than one entity of the Table service may hold (252) — as
// several rows of one partition, written by one transaction and read by one
// query, never torn: the design guide's wide entities pattern (§6.10),
// package patterns/wide.
//
// It runs on the storage account the environment names, creates the table
// EmployeeSkills if it does not exist, and leaves what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/wide
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/patterns/wide"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Skills string // table
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Skills: "EmployeeSkills"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "wide example:", err)
		os.Exit(1)
	}
}

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

// run tells the story on acct, in the resources names gives, to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	// The meter counts what each step costs; a service gives one to
	// account in main, or none.
	meter := cost.NewMeter()
	acct, err := acct.WithOptions(func(o *account.Options) { o.Meter = meter })
	if err != nil {
		return err
	}
	tables, err := acct.TableService()
	if err != nil {
		return err
	}
	tbl, err := entity.NewTableFromService[Employee](tables, names.Skills)
	if err != nil {
		return err
	}
	emps, err := wide.New(tbl, wide.Config{})
	if err != nil {
		return err
	}
	if err := emps.Provision(ctx); err != nil { // the table, unless it exists
		return err
	}
	fmt.Fprintln(out, "== wide: an employee with 1,000 skill ratings, more properties than one entity holds (design guide §6.10)")
	// costOf runs f and says how many storage transactions it took.
	costOf := func(f func() error) (int64, error) {
		before := meter.Snapshot()
		err := f()
		return meter.Snapshot().Sub(before).Total(), err
	}
	raw, err := entity.NewTableFromService[entity.DynamicEntity](tables, names.Skills)
	if err != nil {
		return err
	}

	const dept, id = "Engineering", "000123"
	e := Employee{Dept: dept, ID: id, Name: "Jonathan Jones", Title: "Principal engineer", Skills: skills(1000)}
	tx, err := costOf(func() error { return emps.Insert(ctx, &e) })
	if err != nil {
		return err
	}
	rows, err := stored(ctx, raw, dept, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "1. Insert: %s with %d ratings in %d storage transaction: one entity group transaction of %d rows.\n", e.Name, len(e.Skills), tx, len(rows))
	for _, r := range rows {
		note := ""
		if strings.HasSuffix(r.key, " 00") {
			note = "   (the head: version, rows, manifest, history; no skill)"
		}
		fmt.Fprintf(out, "     RowKey %-10q %3d properties%s\n", r.key, r.props, note)
	}

	var read Employee
	tx, err = costOf(func() error { read, err = emps.Get(ctx, dept, id); return err })
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "2. Get: one range query, %d storage transaction: %s, %d ratings, Go = %v; never a mix of two versions.\n", tx, read.Name, len(read.Skills), read.Skills["Go"])

	before := rows
	tx, err = costOf(func() error {
		_, err := emps.Modify(ctx, dept, id, func(e *Employee) error {
			e.Skills["Go"] = int32(5)
			return nil
		}, entity.ModifyOptions{})
		return err
	})
	if err != nil {
		return err
	}
	if rows, err = stored(ctx, raw, dept, id); err != nil {
		return err
	}
	fmt.Fprintf(out, "3. Modify: Go 1 → 5 in %d storage transactions (a read and a transaction) that rewrote rows %s; the other %d keep their ETags.\n",
		tx, strings.Join(changed(before, rows), ", "), len(rows)-len(changed(before, rows)))

	read.Skills["Rust"] = int32(1)
	err = emps.Replace(ctx, &read)
	if !errors.Is(err, entity.ErrPreconditionFailed) {
		return fmt.Errorf("a replace from a stale read: %v, want ErrPreconditionFailed", err)
	}
	fmt.Fprintf(out, "4. Replace from the read of step 2, made before step 3: refused, ErrPreconditionFailed = %v; nothing changed.\n", errors.Is(err, entity.ErrPreconditionFailed))

	now, err := emps.Get(ctx, dept, id)
	if err != nil {
		return err
	}
	now.Skills = skills(10)
	tx, err = costOf(func() error { return emps.Replace(ctx, &now) })
	if err != nil {
		return err
	}
	if rows, err = stored(ctx, raw, dept, id); err != nil {
		return err
	}
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = fmt.Sprintf("%q", r.key)
	}
	fmt.Fprintf(out, "5. Replace with the top 10 skills: %d storage transaction, which also deleted the rows no longer needed; stored rows: %s.\n", tx, strings.Join(keys, ", "))

	ann := Employee{Dept: dept, ID: "000124", Name: "Ann Lee", Skills: skills(600)}
	if err := emps.Insert(ctx, &ann); err != nil {
		return err
	}
	tx, err = costOf(func() error { return emps.Delete(ctx, dept, ann.ID, ann.ETag) })
	if err != nil {
		return err
	}
	if rows, err = stored(ctx, raw, dept, ann.ID); err != nil {
		return err
	}
	fmt.Fprintf(out, "6. Ann Lee, 600 ratings, leaves: Delete in %d storage transaction; her rows left: %d.\n", tx, len(rows))
	return nil
}

type row struct {
	key, etag string
	props     int
}

// stored lists the rows of one wide entity as the service stores them.
func stored(ctx context.Context, raw *entity.Table[entity.DynamicEntity], pk, id string) ([]row, error) {
	var out []row
	for d, err := range raw.Query(ctx, entity.Query{Filter: filter.And(filter.PK(pk), filter.RowKeyPrefix(id+" "))}) {
		if err != nil {
			return nil, err
		}
		out = append(out, row{key: d.RowKey, etag: d.ETag, props: len(d.Properties)})
	}
	return out, nil
}

// changed lists the keys of the rows whose ETag differs.
func changed(before, after []row) []string {
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
