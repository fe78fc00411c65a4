package resolver_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/resolver"
)

// The v1 and v2 shapes of a customer: v2 splits the name.
type CustomerV1 struct {
	PartitionKey, RowKey string
	Name                 string
	Edits                int64
}

type Customer struct {
	PartitionKey, RowKey string
	ETag                 string `table:",etag"`
	First, Last          string
	Edits                int64
}

func upgradeCustomer(old *CustomerV1) (*Customer, error) {
	first, last, _ := strings.Cut(old.Name, " ")
	if first == "poison" {
		return nil, errors.New("cannot split a poison name")
	}
	return &Customer{PartitionKey: old.PartitionKey, RowKey: old.RowKey, First: first, Last: last, Edits: old.Edits}, nil
}

func customerSchemas(t *testing.T) (v1, v2 *resolver.Schema) {
	t.Helper()
	var err error
	if v1, err = resolver.NewSchema(resolver.Config{}, resolver.Register[CustomerV1]("Customer.v1")); err != nil {
		t.Fatal(err)
	}
	if v2, err = resolver.NewSchema(resolver.Config{}, resolver.Register[Customer]("Customer.v2"),
		resolver.Upgrade("Customer.v1", upgradeCustomer)); err != nil {
		t.Fatal(err)
	}
	return v1, v2
}

// A migration of v1 rows beside 8 writers that keep changing rows (through
// property bags, in whatever version the row has): every row ends v2, no
// writer's change is lost, and a second run upgrades nothing. 300 rows in
// six pages (the writers race the migration of each); with TABLEKIT_FULL=1
// the 50,000:
//
//	TABLEKIT_FULL=1 go test -count=1 -run TestMigrateBesideConcurrentWriters -v ./resolver/
func TestMigrateBesideConcurrentWriters(t *testing.T) {
	partitions, per, page := 10, 30, 50
	if os.Getenv("TABLEKIT_FULL") == "1" {
		per, page = 5000, 500
	}
	v1, v2 := customerSchemas(t)
	client := env.Table(t)
	old, err := resolver.NewTable(client, v1)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]CustomerV1, 0, partitions*per)
	for p := range partitions {
		for i := range per {
			rows = append(rows, CustomerV1{PartitionKey: fmt.Sprintf("region-%d", p), RowKey: fmt.Sprintf("%05d", i), Name: fmt.Sprintf("Ann%d Lee%d", i, p)})
		}
	}
	for p := range partitions {
		b := old.NewBatch()
		for i := range per {
			b.Insert(&rows[p*per+i])
			if b.Len() == 100 || i == per-1 {
				if _, err := old.Submit(t.Context(), b); err != nil {
					t.Fatal(err)
				}
				b = old.NewBatch()
			}
		}
	}
	tbl, err := resolver.NewTable(client, v2)
	if err != nil {
		t.Fatal(err)
	}
	edits := make([]atomic.Int64, len(rows))
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for !stopped.Load() {
				i := rng.IntN(len(rows))
				_, err := tbl.Bags().Modify(t.Context(), rows[i].PartitionKey, rows[i].RowKey, func(d *entity.DynamicEntity) error {
					n, _ := entity.Prop[int64](d, "Edits")
					d.Set("Edits", n+1)
					return nil
				}, entity.ModifyOptions{Mode: entity.Merge})
				if err != nil {
					t.Errorf("writer: %v", err)
					return
				}
				edits[i].Add(1)
			}
		}()
	}
	rep, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{PageSize: page})
	stopped.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatalf("migrate: %+v %v", rep, err)
	}
	t.Logf("first run: %+v", rep)
	if rep.Read != int64(len(rows)) || rep.Upgraded+rep.Current != int64(len(rows)) || rep.Upgraded == 0 {
		t.Errorf("first run %+v", rep)
	}
	// Every row is stored as v2 (read as stored, in one scan), with the
	// split name and every writer's edits.
	index := make(map[[2]string]int, len(rows))
	for i, r := range rows {
		index[[2]string{r.PartitionKey, r.RowKey}] = i
	}
	total, seen := int64(0), 0
	for d, err := range tbl.Bags().Query(t.Context(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		i, ok := index[[2]string{d.PartitionKey, d.RowKey}]
		if !ok {
			t.Fatalf("a row %s/%s nobody wrote", d.PartitionKey, d.RowKey)
		}
		seen++
		if d.Properties["EntityType"] != "Customer.v2" {
			t.Fatalf("%s/%s stored as %v", d.PartitionKey, d.RowKey, d.Properties["EntityType"])
		}
		n, _ := entity.Prop[int64](&d, "Edits")
		if n != edits[i].Load() {
			t.Errorf("row %d: Edits %d, writers made %d: a concurrent change was lost", i, n, edits[i].Load())
		}
		if want := strings.SplitN(rows[i].Name, " ", 2); d.Properties["First"] != want[0] || d.Properties["Last"] != want[1] {
			t.Errorf("row %d: %v", i, d.Properties)
		}
		if _, old := d.Properties["Name"]; old {
			t.Errorf("row %d keeps the v1 Name", i)
		}
		total += n
	}
	if seen != len(rows) {
		t.Fatalf("%d rows stored, want %d", seen, len(rows))
	}
	t.Logf("%d concurrent edits kept", total)
	again, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{})
	if err != nil || again.Upgraded != 0 || again.Current != int64(len(rows)) {
		t.Fatalf("second run: %+v %v, want 0 upgraded", again, err)
	}
}

// A migration stopped after k pages resumes from its checkpoint; rows whose
// upgrade fails are named and left as they are, and the rest are upgraded.
func TestMigrateResumesAndNamesFailures(t *testing.T) {
	v1, v2 := customerSchemas(t)
	client := env.Table(t)
	old, _ := resolver.NewTable(client, v1)
	for i := range 250 {
		name := fmt.Sprintf("A%d B", i)
		if i == 177 {
			name = "poison pill"
		}
		if err := old.Insert(t.Context(), &CustomerV1{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i), Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	tbl, _ := resolver.NewTable(client, v2)
	var token string
	pages := 0
	errStop := errors.New("stop")
	_, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{PageSize: 100, Checkpoint: func(c resolver.MigrateCheckpoint) error {
		pages++
		token = c.Token
		if pages == 1 {
			return errStop
		}
		return nil
	}})
	if !errors.Is(err, errStop) || token == "" {
		t.Fatalf("stopped run: %v, token %q", err, token)
	}
	rep, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{PageSize: 100, Resume: token})
	var me *resolver.MigrateError
	if !errors.As(err, &me) || me.Failed != 1 || me.First.RowKey != "177" {
		t.Fatalf("resumed run: %+v %v, want one failure at 177", rep, err)
	}
	if rep.Read != 150 || rep.Upgraded != 149 {
		t.Errorf("resumed run read %d upgraded %d, want 150 and 149", rep.Read, rep.Upgraded)
	}
	d, err := tbl.Bags().Get(t.Context(), "p", "177")
	if err != nil || d.Properties["Name"] != "poison pill" {
		t.Fatalf("the failed row changed: %v %v", d.Properties, err)
	}
	if _, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{PageSize: -1}); !errors.Is(err, entity.ErrInvalid) {
		t.Fatalf("bad page size: %v", err)
	}
}
