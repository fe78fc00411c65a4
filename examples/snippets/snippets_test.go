package snippets

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/resolver"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

type Department struct {
	PartitionKey, RowKey, ETag string
	Manager                    string
}

type Employee struct {
	PartitionKey, RowKey, ETag string
	FirstName, LastName        string
	Vacation                   int32
}

type EmployeeV1 struct {
	PartitionKey, RowKey string
	Name                 string
}

func upgradeEmployee(old *EmployeeV1) (*Employee, error) {
	first, last, _ := strings.Cut(old.Name, " ")
	return &Employee{FirstName: first, LastName: last}, nil
}

// TestResolver runs README's "Several entity types in one table" block:
// two types written in one transaction, an Employee.v1 row read upgraded,
// and a row of a type the schema does not know read as a property bag.
func TestResolver(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	old, err := resolver.NewSchema(resolver.Config{}, resolver.Register[EmployeeV1]("Employee.v1"))
	if err != nil {
		t.Fatal(err)
	}
	oldTbl, err := resolver.NewTable(client, old)
	if err != nil {
		t.Fatal(err)
	}
	if err := oldTbl.Insert(ctx, &EmployeeV1{PartitionKey: "Sales", RowKey: "000001", Name: "Ann Lee"}); err != nil {
		t.Fatal(err)
	}
	bag := (&entity.DynamicEntity{PartitionKey: "Sales", RowKey: "zz"}).Set("EntityType", "Badge.v1")
	bags, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	if err := bags.Insert(ctx, bag); err != nil {
		t.Fatal(err)
	}
	dept := Department{PartitionKey: "Sales", RowKey: "!dept", Manager: "Ann"}
	emp := Employee{PartitionKey: "Sales", RowKey: "000002", FirstName: "Bo", LastName: "Chen"}
	var seen []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }

	err = func() error {
		// readme:begin resolver
		schema, err := resolver.NewSchema(resolver.Config{}, // rows told apart by their EntityType property
			resolver.Register[Department]("Department.v1"),
			resolver.Register[Employee]("Employee.v2"),
			resolver.Upgrade[EmployeeV1, Employee]("Employee.v1", upgradeEmployee),
		)
		if err != nil {
			return err
		}
		tbl, err := resolver.NewTable(client, schema)
		if err != nil {
			return err
		}
		b := tbl.NewBatch() // two types, one transaction; the type names are stamped, never forgotten
		b.Insert(&dept).Insert(&emp)
		if _, err := tbl.Submit(ctx, b); err != nil {
			return err
		}
		for row, err := range tbl.Query(ctx, entity.Query{Filter: filter.PK("Sales")}) {
			if err != nil {
				return err
			}
			switch v := row.(type) {
			case *Department:
				note("department managed by " + v.Manager)
			case *Employee: // Employee.v1 rows arrive upgraded
				note("employee " + v.FirstName + " " + v.LastName)
			case *entity.DynamicEntity: // a type this program does not know
				note("unknown " + v.RowKey)
			}
		}
		// readme:end
		return nil
	}()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"department managed by Ann", "employee Ann Lee", "employee Bo Chen", "unknown zz"}
	if strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Fatalf("rows read as %q; want %q", seen, want)
	}
}

// TestModify runs README's lost-reply block with 8 concurrent writers:
// every increment is applied once.
func TestModify(t *testing.T) {
	ctx := context.Background()
	emps, err := entity.NewTable[Employee](env.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := emps.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000123"}); err != nil {
		t.Fatal(err)
	}
	increment := func(emps *entity.Table[Employee]) (Employee, error) {
		// readme:begin modify
		emps = emps.WithWriteTokens() // opt in: a token per write in the reserved property TkWrite
		e, err := emps.Modify(ctx, "Sales", "000123", func(e *Employee) error {
			e.Vacation++ // applied once, even when a reply is lost
			return nil
		}, entity.ModifyOptions{}) // Merge, up to 40 rounds against concurrent writers
		// readme:end
		return e, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := increment(emps)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := emps.Get(ctx, "Sales", "000123")
	if err != nil || got.Vacation != 8 {
		t.Fatalf("after 8 increments: %+v, %v; want Vacation 8", got, err)
	}
}

type Order struct {
	UserID string `table:"PartitionKey,pk"`
	ID     string `table:"RowKey,rk"`
	Total  float64
}

// TestSAS runs README's SAS block: the URL lets its holder write in their
// own partition, and the service refuses what the permissions leave out.
func TestSAS(t *testing.T) {
	ctx := context.Background()
	client := env.Table(t)
	table := tableName(t, client)
	connStr, userID := env.ConnectionString, "user42"
	if connStr == "" {
		t.Fatal("the SAS block needs an account key: no connection string in this environment")
	}
	var orders *entity.Table[Order]
	err := func() error {
		// readme:begin sas
		// On the server, where the account key lives:
		iss, err := sas.NewIssuerFromConnectionString(connStr, sas.Config{TTL: 15 * time.Minute})
		if err != nil {
			return err
		}
		url, err := iss.Grant(table, sas.Partition(userID), sas.ReadWrite)
		if err != nil {
			return err
		}

		// In the client, which holds only the URL:
		orders, err = sas.OpenTable[Order](url, nil)
		// readme:end
		return err
	}()
	if err != nil {
		t.Fatal(err)
	}
	if err := orders.Insert(ctx, &Order{UserID: userID, ID: "1", Total: 9.5}); err != nil {
		t.Fatalf("insert in the granted partition: %v", err)
	}
	got, err := orders.Get(ctx, userID, "1")
	if err != nil || got.Total != 9.5 {
		t.Fatalf("Get through the SAS: %+v, %v", got, err)
	}
	// Azurite does not enforce a SAS's key range (README says so); the
	// permissions it does: a read-only URL cannot write.
	iss, _ := sas.NewIssuerFromConnectionString(connStr, sas.Config{})
	roURL, err := iss.Grant(table, sas.Partition(userID), sas.Read)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := sas.OpenTable[Order](roURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.Insert(ctx, &Order{UserID: userID, ID: "2"}); err == nil || !isAuth(err) {
		t.Fatalf("insert with a read-only SAS: %v; want ErrUnauthorized", err)
	}
}

func tableName(t *testing.T, client *aztables.Client) string {
	t.Helper()
	tbl, err := entity.NewTable[Order](client)
	if err != nil || tbl.Name() == "" {
		t.Fatalf("table name of the test client: %q, %v", tbl.Name(), err)
	}
	return tbl.Name()
}

func isAuth(err error) bool { return errors.Is(err, entity.ErrUnauthorized) }
