package secondaryindex_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Employee is the guide's employee: department as PartitionKey, "empid_"
// and a padded id as RowKey.
type Employee struct {
	PartitionKey string
	RowKey       string
	ETag         string
	FirstName    string
	LastName     string
	Email        string `table:",omitempty"`
	Age          int32
}

func empid(i int) string { return fmt.Sprintf("empid_%06d", i) }

// emailIndex and nameIndex are the guide's two indexes: a unique email,
// a non-unique last name copying only the names.
func emailIndex(p secondaryindex.Placement) secondaryindex.Index[Employee] {
	return secondaryindex.Index[Employee]{
		Name: "email", Unique: true, Placement: p,
		Key: func(e *Employee) (string, bool) { return strings.ToLower(e.Email), e.Email != "" },
	}
}

func nameIndex(p secondaryindex.Placement) secondaryindex.Index[Employee] {
	return secondaryindex.Index[Employee]{
		Name: "name", Placement: p, Properties: []string{"FirstName", "LastName"},
		Key: func(e *Employee) (string, bool) { return e.LastName, e.LastName != "" },
	}
}

// employees returns a typed view of a new table on e.
func employees(t testing.TB, e *integration.Env) *entity.Table[Employee] {
	t.Helper()
	tbl, err := entity.NewTable[Employee](e.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// sameTable is a view of tbl's table through e's clients.
func sameTable[T, U any](t testing.TB, e *integration.Env, tbl *entity.Table[U]) *entity.Table[T] {
	t.Helper()
	v, err := entity.NewTableFromService[T](e.TableService, tbl.Name())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func localSet(t testing.TB, tbl *entity.Table[Employee]) *secondaryindex.Set[Employee] {
	t.Helper()
	s, err := secondaryindex.New(tbl, nil, secondaryindex.Config{PrimaryPrefix: "empid_"}, emailIndex(secondaryindex.SamePartition), nameIndex(secondaryindex.SamePartition))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// findings runs a check and returns its findings.
func findings(t testing.TB, s *secondaryindex.Set[Employee], opts secondaryindex.CheckOptions) []drift.Finding {
	t.Helper()
	var out []drift.Finding
	for f, err := range s.Check(context.Background(), opts) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// rowKeys lists the RowKeys of a partition of tbl.
func rowKeys[T any](t testing.TB, tbl *entity.Table[T], pk string) []string {
	t.Helper()
	var rks []string
	for e, err := range tbl.Query(context.Background(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		sys, _ := entity.SystemOf(&e)
		if pk == "" || sys.PartitionKey == pk {
			rks = append(rks, sys.PartitionKey+"/"+sys.RowKey)
		}
	}
	slices.Sort(rks)
	return rks
}

var _ = eventual.New
