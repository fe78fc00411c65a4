package denormalize_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/denormalize"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Employee is the guide's employee, in its department's partition. Edits
// counts the changes made to it, so that a change applied twice shows.
type Employee struct {
	PartitionKey string // department
	RowKey       string // "empid 000123"
	ETag         string
	Name         string
	Phone        string
	Title        string
	Edits        int64
	CostCenter   string `table:",omitempty"` // copied from the directory (OtherPartition)
}

// Department is the guide's department entity, in the same partition as
// its employees, with a copy of its manager's name and phone.
type Department struct {
	PartitionKey string
	RowKey       string // "dept …"
	ETag         string
	ManagerID    string // the manager's RowKey
	ManagerName  string `table:",omitempty"`
	ManagerPhone string `table:",omitempty"`
	Budget       int64
}

// Entry is a department's entry in a directory table (partition
// "departments"), with a copy of its manager's name and phone: one
// range query lists every department with its manager.
type Entry struct {
	PartitionKey string // "departments"
	RowKey       string // the department's partition in the employees' table
	ETag         string
	Manager      string // the manager's RowKey
	ManagerName  string `table:",omitempty"`
	ManagerPhone string `table:",omitempty"`
	CostCenter   string
}

const deptPrefix = "dept "

// managerRel is the guide's relation: a department keeps its manager's
// name and phone, in the same partition.
func managerRel() denormalize.Relation[Department, Employee] {
	return denormalize.Relation[Department, Employee]{
		Name:   "manager",
		Fields: []denormalize.Field{{From: "Name", To: "ManagerName"}, {From: "Phone", To: "ManagerPhone"}},
		Source: func(d *Department) (denormalize.Key, bool) {
			return denormalize.Key{PartitionKey: d.PartitionKey, RowKey: d.ManagerID}, d.ManagerID != ""
		},
		// Any department of the employee's partition may have them as its
		// manager: one range query finds them all.
		Targets: func(e *Employee) denormalize.Targets {
			return denormalize.Targets{Ranges: []denormalize.Range{denormalize.Prefix(e.PartitionKey, deptPrefix)}}
		},
	}
}

// directoryRel copies a manager's name and phone into the department's
// directory entry, in another table.
func directoryRel() denormalize.Relation[Entry, Employee] {
	return denormalize.Relation[Entry, Employee]{
		Name:      "manager",
		Placement: denormalize.OtherPartition,
		Fields:    []denormalize.Field{{From: "Name", To: "ManagerName"}, {From: "Phone", To: "ManagerPhone"}},
		Source: func(d *Entry) (denormalize.Key, bool) {
			return denormalize.Key{PartitionKey: d.RowKey, RowKey: d.Manager}, d.Manager != ""
		},
		Targets: func(e *Employee) denormalize.Targets {
			return denormalize.Targets{Keys: []denormalize.Key{{PartitionKey: "departments", RowKey: e.PartitionKey}}}
		},
	}
}

// costCenterRel fans a directory entry's cost center out to every employee
// of its department: one source, many targets in another table.
func costCenterRel() denormalize.Relation[Employee, Entry] {
	return denormalize.Relation[Employee, Entry]{
		Name:      "costcenter",
		Placement: denormalize.OtherPartition,
		Fields:    []denormalize.Field{{From: "CostCenter", To: "CostCenter"}},
		Source: func(e *Employee) (denormalize.Key, bool) {
			return denormalize.Key{PartitionKey: "departments", RowKey: e.PartitionKey}, true
		},
		Targets: func(d *Entry) denormalize.Targets {
			return denormalize.Targets{Ranges: []denormalize.Range{denormalize.Prefix(d.RowKey, "empid ")}}
		},
	}
}

func empID(n int) string { return fmt.Sprintf("empid %06d", n) }

// all reads every entity of a partition.
func all[T any](t testing.TB, tbl *entity.Table[T], pk string) []T {
	t.Helper()
	var out []T
	for e, err := range tbl.Query(context.Background(), entity.Query{Filter: filter.PK(pk)}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// partition is one read of a partition holding departments and employees:
// a single query, so a snapshot of one instant on a partition that fits a
// page.
type partition struct {
	depts map[string]Department
	emps  map[string]Employee
}

func readPartition(ctx context.Context, bags *entity.Table[entity.DynamicEntity], pk string) (partition, error) {
	p := partition{depts: map[string]Department{}, emps: map[string]Employee{}}
	rows, err := entity.NewTable[json.RawMessage](bags.Client())
	if err != nil {
		return p, err
	}
	page, err := rows.QueryPage(ctx, entity.Query{Filter: filter.PK(pk)}, "")
	if err != nil {
		return p, err
	}
	if page.Next != "" {
		return p, fmt.Errorf("partition %s does not fit one page", pk)
	}
	for _, raw := range page.Items {
		var sys entity.DynamicEntity
		if err := entity.Unmarshal(raw, &sys); err != nil {
			return p, err
		}
		switch {
		case len(sys.RowKey) > len(deptPrefix) && sys.RowKey[:len(deptPrefix)] == deptPrefix:
			var d Department
			if err := entity.Unmarshal(raw, &d); err != nil {
				return p, err
			}
			p.depts[d.RowKey] = d
		case len(sys.RowKey) > 6 && sys.RowKey[:6] == "empid ":
			var e Employee
			if err := entity.Unmarshal(raw, &e); err != nil {
				return p, err
			}
			p.emps[e.RowKey] = e
		}
	}
	return p, nil
}

// disagreements lists the departments whose copy differs from their
// manager's name and phone (or that keep a copy of a manager who is gone).
func (p partition) disagreements() []string {
	var bad []string
	for _, d := range p.depts {
		m, ok := p.emps[d.ManagerID]
		switch {
		case d.ManagerID == "" || !ok:
			if d.ManagerName != "" || d.ManagerPhone != "" {
				bad = append(bad, fmt.Sprintf("%s keeps %q/%q of missing manager %q", d.RowKey, d.ManagerName, d.ManagerPhone, d.ManagerID))
			}
		case d.ManagerName != m.Name || d.ManagerPhone != m.Phone:
			bad = append(bad, fmt.Sprintf("%s has %q/%q, manager %s has %q/%q", d.RowKey, d.ManagerName, d.ManagerPhone, m.RowKey, m.Name, m.Phone))
		}
	}
	return bad
}

// counter counts outcomes from several goroutines.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[k]++
}

func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}
