package apisweep_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/patterns/bloblog"
	"github.com/tablekit/tablekit/patterns/bucket"
	"github.com/tablekit/tablekit/patterns/compound"
	"github.com/tablekit/tablekit/patterns/dataseries"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/large"
	"github.com/tablekit/tablekit/patterns/logtail"
	"github.com/tablekit/tablekit/patterns/lookup"
	"github.com/tablekit/tablekit/patterns/rotation"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
	"github.com/tablekit/tablekit/patterns/wide"
	"github.com/tablekit/tablekit/resolver"
)

// Photo is a valid entity type with a blob field, for large.
type Photo struct {
	PartitionKey, RowKey string
	Data                 []byte `table:",blob"`
}

// TestNilClientConstructors calls every constructor that takes a client
// (an *aztables.Client or ServiceClient, an *entity.Table, a queue or a
// container client) with a nil one: each returns an error matching
// entity.ErrInvalid and no value, sending nothing (the clients given
// beside the nil one are offline and count their requests).
func TestNilClientConstructors(t *testing.T) {
	ctx := context.Background()
	s := &sent{}
	client := counted(t, s)
	people, err := entity.NewTable[Person](client)
	if err != nil {
		t.Fatal(err)
	}
	photos, err := entity.NewTable[Photo](client)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Person]("Person"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		nilClient  *aztables.Client
		nilService *aztables.ServiceClient
		nilPeople  *entity.Table[Person]
		nilPhotos  *entity.Table[Photo]
		nilBags    *entity.Table[entity.DynamicEntity]
		nilQueue   *azqueue.QueueClient
		nilBox     *container.Client
	)
	rel := denormalize.Relation[Person, Person]{Name: "r", Fields: []denormalize.Field{{From: "Name", To: "Copy"}},
		Source:  func(*Person) (denormalize.Key, bool) { return denormalize.Key{}, false },
		Targets: func(*Person) denormalize.Targets { return denormalize.Targets{} }}
	cases := map[string]func() (any, error){
		"entity.NewTable(nil)":            func() (any, error) { return entity.NewTable[Person](nilClient) },
		"entity.NewTableFromService(nil)": func() (any, error) { return entity.NewTableFromService[Person](nilService, "People") },
		"entity.NewTableWithCredential(nil)": func() (any, error) {
			return entity.NewTableWithCredential[Person]("https://a.table.core.windows.net/", "People", nil, nil)
		},
		"resolver.NewTable(nil, schema)": func() (any, error) { return resolver.NewTable(nilClient, schema) },
		"resolver.NewTable(client, nil)": func() (any, error) { return resolver.NewTable(client, nil) },
		"crypt.New(nil)":                 func() (any, error) { return crypt.New(nilPeople, crypt.Config{}) },
		"sas.OpenTable(\"\")":            func() (any, error) { return sas.OpenTable[Person]("", nil) },
		"eventual.New(nil queues)":       func() (any, error) { return eventual.New(nil, nil, eventual.Config{}) },
		"eventual.New(nil queue clients)": func() (any, error) {
			return eventual.New([]eventual.Queue{{Work: nilQueue, Poison: nilQueue}}, nil, eventual.Config{})
		},
		"eventual.NewOutbox(nil, nil)": func() (any, error) { return eventual.NewOutbox(nil, nilPeople, eventual.OutboxConfig{}) },
		"large.New(nil, nil)":          func() (any, error) { return large.New(nilPhotos, nilBox, large.Config{}) },
		"large.New(table, nil)":        func() (any, error) { return large.New(photos, nilBox, large.Config{}) },
		"logtail.New(nil)":             func() (any, error) { return logtail.New(nilPeople, logtail.Config{}) },
		"bucket.New(nil)":              func() (any, error) { return bucket.New(nilPeople, bucket.Config{}) },
		"dataseries.New(nil)":          func() (any, error) { return dataseries.New(nilBags, dataseries.Config{}) },
		"wide.New(nil)":                func() (any, error) { return wide.New(nilPeople, wide.Config{}) },
		"lookup.New(nil)":              func() (any, error) { return lookup.New(nilPeople, lookup.Config{}) },
		"bloblog.New(nil)":             func() (any, error) { return bloblog.New(ctx, nilBox, bloblog.Config{Service: "s"}) },
		"bloblog.NewReader(nil)":       func() (any, error) { return bloblog.NewReader(nilBox, bloblog.Config{Service: "s"}) },
		"denormalize.New(nil, nil)":    func() (any, error) { return denormalize.New(nilPeople, nilPeople, denormalize.Config{}, rel) },
		"denormalize.New(table, nil)":  func() (any, error) { return denormalize.New(people, nilPeople, denormalize.Config{}, rel) },
		"secondaryindex.New(nil)":      func() (any, error) { return secondaryindex.New(nilPeople, secondaryindex.Config{}) },
		"indexentity.New(nil)":         func() (any, error) { return indexentity.New(nilPeople, indexentity.Config{}) },
		"rotation.New(nil, nil)":       func() (any, error) { return rotation.New(nilService, nilClient, rotationConfig()) },
		"compound.New(nil)": func() (any, error) {
			return compound.New(nilPeople, compound.Config[string, time.Time]{Parent: compound.Text(), Child: compound.NewestFirst()})
		},
	}
	for name, call := range cases {
		v, err := call()
		if !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: %v, want an error matching entity.ErrInvalid", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: a message of several lines: %q", name, err)
		}
		if !isNil(v) {
			t.Errorf("%s: returned %T with the error", name, v)
		}
	}
	if n := s.n.Load(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func rotationConfig() rotation.Config[Person] {
	return rotation.Config[Person]{Name: "r", Time: func(*Person) time.Time { return time.Time{} }}
}

// isNil reports a nil interface or a nil pointer in one.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
