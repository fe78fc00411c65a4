package apisweep_test

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/resolver"
)

// Unmappable is an entity type tablekit cannot map: a channel field.
type Unmappable struct {
	PartitionKey, RowKey string
	C                    chan int
}

// Dept and Emp are a denormalize relation's target and source.
type Dept struct {
	PartitionKey, RowKey string
	ETag                 string
	ManagerID            string
	ManagerName          string
}

type Emp struct {
	PartitionKey, RowKey string
	ETag                 string
	Name                 string
}

// sent counts the requests that reach the pipeline's transport stage.
type sent struct{ n atomic.Int64 }

func (s *sent) Do(req *policy.Request) (*http.Response, error) {
	s.n.Add(1)
	return req.Next()
}

// counted is an offline client (see offline) whose requests are counted.
func counted(t *testing.T, s *sent) *aztables.Client {
	t.Helper()
	opts := entity.ClientOptions(&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, PerRetryPolicies: []policy.Policy{s},
	}})
	c, err := aztables.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/nowhere", opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// firstErr is the first error a sequence yields.
func firstErr[K, V any](s iter.Seq2[K, V]) error {
	for _, v := range s {
		if err, ok := any(v).(error); ok && err != nil {
			return err
		}
	}
	return nil
}

// TestRefusalsMatchErrInvalid calls the public operations of entity,
// resolver, backup and denormalize with arguments they refuse — nil
// values, unmappable types, bad keys, modes, options and tokens — and
// checks that each refusal matches entity.ErrInvalid (besides its own
// sentinel, where it has one) and that no request was sent: one
// errors.Is(err, entity.ErrInvalid) tells "nothing was sent, an argument
// broke a rule", whichever package refused it.
func TestRefusalsMatchErrInvalid(t *testing.T) {
	ctx := context.Background()
	var reqs sent
	client := counted(t, &reqs)
	people, err := entity.NewTable[Person](client)
	if err != nil {
		t.Fatal(err)
	}
	bags, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	var nilPeople *entity.Table[Person]
	schema, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Person]("Person"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Person]("Person"))
	if err != nil {
		t.Fatal(err)
	}
	rtable, err := resolver.NewTable(client, schema)
	if err != nil {
		t.Fatal(err)
	}
	rother, err := resolver.NewTable(client, other)
	if err != nil {
		t.Fatal(err)
	}
	depts, err := entity.NewTable[Dept](client)
	if err != nil {
		t.Fatal(err)
	}
	emps, err := entity.NewTable[Emp](client)
	if err != nil {
		t.Fatal(err)
	}
	copies, err := denormalize.New(depts, emps, denormalize.Config{}, denormalize.Relation[Dept, Emp]{
		Name:   "manager",
		Fields: []denormalize.Field{{From: "Name", To: "ManagerName"}},
		Source: func(d *Dept) (denormalize.Key, bool) {
			return denormalize.Key{PartitionKey: d.PartitionKey, RowKey: d.ManagerID}, d.ManagerID != ""
		},
		Targets: func(e *Emp) denormalize.Targets {
			return denormalize.Targets{Keys: []denormalize.Key{{PartitionKey: e.PartitionKey, RowKey: "department"}}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	noETag := &Person{PartitionKey: "p", RowKey: "r"}
	badKey := &Person{PartitionKey: "a/b", RowKey: "r"}
	dyn := &entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}
	cs := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=http://127.0.0.1:1/devstoreaccount1;"
	cases := []struct {
		name string
		call func() error
		also error // the refusal's own sentinel, when it has one
	}{
		// entity: constructors.
		{"entity.NewTable(nil)", func() error { _, err := entity.NewTable[Person](nil); return err }, nil},
		{"entity.NewTable[Unmappable]", func() error { _, err := entity.NewTable[Unmappable](client); return err }, entity.ErrInvalidType},
		{"entity.NewTableFromService(nil)", func() error { _, err := entity.NewTableFromService[Person](nil, "t"); return err }, nil},
		{"entity.NewTableFromConnectionString(garbage)", func() error {
			_, err := entity.NewTableFromConnectionString[Person]("garbage", "t", nil)
			return err
		}, entity.ErrInvalidConnectionString},
		{"entity.NewTableFromConnectionString(bad name)", func() error {
			_, err := entity.NewTableFromConnectionString[Person](cs, "no such name!", nil)
			return err
		}, nil},
		{"entity.NewTableWithCredential(nil credential)", func() error {
			_, err := entity.NewTableWithCredential[Person]("http://127.0.0.1:1/", "t", nil, nil)
			return err
		}, nil},
		// entity: the codec.
		{"entity.Marshal(nil)", func() error { _, err := entity.Marshal(nil); return err }, nil},
		{"entity.Marshal(unmappable)", func() error { _, err := entity.Marshal(&Unmappable{PartitionKey: "p", RowKey: "r"}); return err }, entity.ErrInvalidType},
		{"entity.Unmarshal(into nil)", func() error { return entity.Unmarshal([]byte(`{}`), nil) }, entity.ErrInvalidType},
		{"entity.Unmarshal(into unmappable)", func() error { return entity.Unmarshal([]byte(`{}`), &Unmappable{}) }, entity.ErrInvalidType},
		{"entity.Validate(nil)", func() error { return entity.Validate(nil) }, nil},
		{"entity.Validate(unmappable)", func() error { return entity.Validate(&Unmappable{}) }, entity.ErrInvalidType},
		{"entity.ToDynamic(nil)", func() error { _, err := entity.ToDynamic(nil); return err }, nil},
		{"entity.FromDynamic(nil)", func() error { return entity.FromDynamic(nil, &Person{}) }, nil},
		{"entity.FromDynamic(into nil)", func() error { return entity.FromDynamic(dyn, nil) }, nil},
		{"entity.MarshalStored(nil)", func() error { _, err := entity.MarshalStored(nil); return err }, nil},
		{"entity.SystemOf(nil)", func() error { _, err := entity.SystemOf(nil); return err }, nil},
		// entity: a nil table.
		{"nil Table.Get", func() error { _, err := nilPeople.Get(ctx, "p", "r"); return err }, nil},
		{"nil Table.Insert", func() error { return nilPeople.Insert(ctx, noETag) }, nil},
		{"nil Table.Query", func() error { return firstErr(nilPeople.Query(ctx, entity.Query{})) }, nil},
		{"nil Table.Submit", func() error { _, err := nilPeople.Submit(ctx, nil); return err }, nil},
		{"nil Table.CreateTable", func() error { return nilPeople.CreateTable(ctx) }, nil},
		// entity: a table's calls.
		{"Table.Insert(nil)", func() error { return people.Insert(ctx, nil) }, entity.ErrInvalidType},
		{"Table.Upsert(nil)", func() error { return people.Upsert(ctx, nil, entity.Merge) }, entity.ErrInvalidType},
		{"Table.Update(nil)", func() error { return people.Update(ctx, nil, entity.Merge) }, entity.ErrInvalidType},
		{"Table.UpdateAny(nil)", func() error { return people.UpdateAny(ctx, nil, entity.Merge) }, entity.ErrInvalidType},
		{"Table.DeleteEntity(nil)", func() error { return people.DeleteEntity(ctx, nil) }, entity.ErrInvalidType},
		{"Table.Insert(bad key)", func() error { return people.Insert(ctx, badKey) }, nil},
		{"Table.Update(no etag)", func() error { return people.Update(ctx, noETag, entity.Merge) }, entity.ErrNoETag},
		{"Table.DeleteEntity(no etag)", func() error { return people.DeleteEntity(ctx, noETag) }, entity.ErrNoETag},
		{"Table.Delete(no etag)", func() error { return people.Delete(ctx, "p", "r", "") }, entity.ErrNoETag},
		{"Table.Update(mode 9)", func() error {
			return people.Update(ctx, &Person{PartitionKey: "p", RowKey: "r", ETag: `W/"x"`}, entity.UpdateMode(9))
		}, nil},
		{"Table.Get(bad key)", func() error { _, err := people.Get(ctx, "a/b", "r"); return err }, nil},
		{"Table.Modify(nil change)", func() error {
			_, err := people.Modify(ctx, "p", "r", nil, entity.ModifyOptions{})
			return err
		}, nil},
		{"Table.Query(page size -1)", func() error { return firstErr(people.Query(ctx, entity.Query{PageSize: -1})) }, nil},
		{"Table.Query(bad filter)", func() error {
			return firstErr(people.Query(ctx, entity.Query{Filter: filter.Eq("bad name", 1)}))
		}, nil},
		{"Table.QueryPage(garbage token)", func() error { _, err := people.QueryPage(ctx, entity.Query{}, "garbage!"); return err }, entity.ErrInvalidToken},
		{"Table.QueryPage(token with CR LF)", func() error {
			_, err := people.QueryPage(ctx, entity.Query{}, "AQEAAAAAAAAAB0\r0A")
			return err
		}, entity.ErrInvalidToken},
		{"Table.QueryPartitions(page size -1)", func() error {
			return firstErr(people.QueryPartitions(ctx, []string{"p"}, entity.Query{PageSize: -1}, entity.FanOutOptions{}))
		}, nil},
		{"Table.Submit(nil)", func() error { _, err := people.Submit(ctx, nil); return err }, nil},
		{"Table.Submit(a Batch not made by a Table)", func() error { _, err := people.Submit(ctx, &entity.Batch{}); return err }, nil},
		{"Table.Submit(no etag)", func() error {
			_, err := people.Submit(ctx, people.NewBatch().Update(noETag, entity.Merge))
			return err
		}, entity.ErrNoETag},
		{"Table.Submit(unmappable)", func() error {
			_, err := people.Submit(ctx, people.NewBatch().Insert(&Unmappable{PartitionKey: "p", RowKey: "r"}))
			return err
		}, entity.ErrInvalidType},
		{"Batch.Validate(no etag)", func() error { return people.NewBatch().DeleteEntity(noETag).Validate() }, entity.ErrNoETag},
		{"Table[DynamicEntity].Insert(bad property name)", func() error {
			return bags.Insert(ctx, &entity.DynamicEntity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"no way": 1}})
		}, nil},
		{"Table.BulkWrite(bad key)", func() error {
			_, err := people.BulkWrite(ctx, []Person{*badKey}, entity.BulkOptions{})
			return err
		}, nil},
		{"RetryPolicy.Retry(nil)", func() error { return entity.RetryPolicy{}.Retry(ctx, nil) }, nil},

		// resolver.
		{"resolver.NewSchema(an empty Registration)", func() error { _, err := resolver.NewSchema(resolver.Config{}, resolver.Registration{}); return err }, resolver.ErrSchema},
		{"resolver.NewSchema(nil upgrade)", func() error {
			_, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Person]("P.v2"), resolver.Upgrade[Person, Person]("P.v1", nil))
			return err
		}, resolver.ErrSchema},
		{"resolver.NewSchema(unmappable)", func() error {
			_, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Unmappable]("U"))
			return err
		}, nil},
		{"resolver.NewSchema(ByFunc(nil, nil))", func() error {
			_, err := resolver.NewSchema(resolver.Config{Discriminator: resolver.ByFunc(nil, nil)}, resolver.Register[Person]("Person"))
			return err
		}, resolver.ErrSchema},
		{"resolver.NewTable(nil schema)", func() error { _, err := resolver.NewTable(client, nil); return err }, nil},
		{"resolver.NewTable(nil client)", func() error { _, err := resolver.NewTable(nil, schema); return err }, nil},
		{"resolver.OfType(nil schema)", func() error { _, err := resolver.OfType[Person](nil); return err }, nil},
		{"resolver.OfType(unregistered)", func() error { _, err := resolver.OfType[Emp](schema); return err }, resolver.ErrUnregistered},
		{"resolver.OfType(function discriminator)", func() error {
			byFunc, err := resolver.NewSchema(resolver.Config{Discriminator: resolver.ByFunc(
				func(string, string, resolver.Props) string { return "Person" },
				func(string, *entity.DynamicEntity) error { return nil })}, resolver.Register[Person]("Person"))
			if err != nil {
				return nil
			}
			_, err = resolver.OfType[Person](byFunc)
			return err
		}, nil},
		{"resolver.RowKeyOf(nil schema)", func() error { _, err := resolver.RowKeyOf[Person](nil, "x"); return err }, nil},
		{"resolver.Get(nil table)", func() error { _, err := resolver.Get[Person](ctx, nil, "p", "r"); return err }, nil},
		{"resolver.Query(nil table)", func() error { return firstErr(resolver.Query[Person](ctx, nil, entity.Query{})) }, nil},
		{"Schema.Stamp(nil schema)", func() error { _, err := (*resolver.Schema)(nil).Stamp(noETag); return err }, nil},
		{"Schema.Stamp(unregistered)", func() error { _, err := schema.Stamp(&Emp{PartitionKey: "p", RowKey: "r"}); return err }, resolver.ErrUnregistered},
		{"Schema.Decode(nil schema)", func() error { _, err := (*resolver.Schema)(nil).Decode([]byte(`{}`)); return err }, nil},
		{"resolver Table.Insert(nil)", func() error { return rtable.Insert(ctx, nil) }, nil},
		{"resolver Table.Insert(unregistered)", func() error { return rtable.Insert(ctx, &Emp{PartitionKey: "p", RowKey: "r"}) }, resolver.ErrUnregistered},
		{"resolver Table.Insert(bad key)", func() error { return rtable.Insert(ctx, badKey) }, nil},
		{"resolver Table.Update(no etag)", func() error { return rtable.Update(ctx, noETag, entity.Merge) }, entity.ErrNoETag},
		{"resolver Table.DeleteEntity(no etag)", func() error { return rtable.DeleteEntity(ctx, noETag) }, entity.ErrNoETag},
		{"resolver Table.Modify(nil change)", func() error {
			_, err := rtable.Modify(ctx, "p", "r", nil, entity.ModifyOptions{})
			return err
		}, nil},
		{"resolver Table.QueryPage(garbage token)", func() error { _, err := rtable.QueryPage(ctx, entity.Query{}, "garbage!"); return err }, entity.ErrInvalidToken},
		{"resolver Table.Submit(nil)", func() error { _, err := rtable.Submit(ctx, nil); return err }, nil},
		{"resolver Table.Submit(another schema's batch)", func() error {
			_, err := rtable.Submit(ctx, rother.NewBatch().Insert(noETag))
			return err
		}, nil},
		{"resolver Table.Submit(unregistered)", func() error {
			_, err := rtable.Submit(ctx, rtable.NewBatch().Insert(&Emp{PartitionKey: "p", RowKey: "r"}))
			return err
		}, resolver.ErrUnregistered},
		{"resolver Table.Migrate(page size -1)", func() error {
			_, err := rtable.Migrate(ctx, resolver.MigrateOptions{PageSize: -1})
			return err
		}, nil},
		{"resolver Table.Migrate(garbage token)", func() error {
			_, err := rtable.Migrate(ctx, resolver.MigrateOptions{Resume: "garbage!"})
			return err
		}, entity.ErrInvalidToken},
		{"nil resolver Table.Get", func() error { _, err := (*resolver.Table)(nil).Get(ctx, "p", "r"); return err }, nil},

		// backup.
		{"backup.Export(nil)", func() error { _, err := backup.Export(ctx, nil, &bytes.Buffer{}, backup.ExportOptions{}); return err }, backup.ErrInvalid},
		{"backup.Export(garbage token)", func() error {
			_, err := backup.Export(ctx, bags, &bytes.Buffer{}, backup.ExportOptions{Resume: "garbage"})
			return err
		}, backup.ErrInvalid},
		{"backup.Import(nil reader)", func() error { _, err := backup.Import(ctx, bags, nil, backup.ImportOptions{}); return err }, backup.ErrInvalid},
		{"backup.Import(mode 9)", func() error {
			_, err := backup.Import(ctx, bags, strings.NewReader(""), backup.ImportOptions{Mode: 9})
			return err
		}, backup.ErrInvalid},
		{"backup.ImportCSV(nil reader)", func() error { _, err := backup.ImportCSV(ctx, bags, nil, backup.ImportOptions{}); return err }, backup.ErrInvalid},
		{"backup.ExportCSV(bad filter)", func() error {
			return backup.ExportCSV(ctx, bags, &bytes.Buffer{}, filter.Eq("bad name", 1))
		}, backup.ErrInvalid},
		{"backup.WriteCSV(nil writer)", func() error { return backup.WriteCSV(nil, nil, nil) }, backup.ErrInvalid},
		{"backup.WriteCSV(reserved column)", func() error { return backup.WriteCSV(&bytes.Buffer{}, []string{"RowKey"}, nil) }, backup.ErrInvalid},
		{"backup.ReadCSV(nil)", func() error { return firstErr(backup.ReadCSV(nil)) }, backup.ErrInvalid},
		{"backup.ExportBlob(nil)", func() error { _, err := backup.ExportBlob(ctx, bags, nil, backup.ExportOptions{}); return err }, backup.ErrInvalid},

		// denormalize.
		{"denormalize.New(nil tables)", func() error { _, err := denormalize.New[Dept, Emp](nil, nil, denormalize.Config{}); return err }, nil},
		{"denormalize.New(no relation)", func() error { _, err := denormalize.New(depts, emps, denormalize.Config{}); return err }, nil},
		{"Copies.InsertSource(nil)", func() error { return copies.InsertSource(ctx, nil) }, entity.ErrInvalidType},
		{"Copies.InsertSource(bad key)", func() error { return copies.InsertSource(ctx, &Emp{PartitionKey: "a/b", RowKey: "r"}) }, nil},
		{"Copies.InsertTarget(nil)", func() error { return copies.InsertTarget(ctx, nil) }, entity.ErrInvalidType},
		{"Copies.ModifySource(nil change)", func() error {
			_, err := copies.ModifySource(ctx, "p", "r", nil, entity.ModifyOptions{})
			return err
		}, nil},
		{"Copies.ModifySource(merge)", func() error {
			_, err := copies.ModifySource(ctx, "p", "r", func(*Emp) error { return nil }, entity.ModifyOptions{Mode: entity.Merge})
			return err
		}, nil},
		{"Copies.ModifyTarget(bad key)", func() error {
			_, err := copies.ModifyTarget(ctx, "p", "r#", func(*Dept) error { return nil }, entity.ModifyOptions{})
			return err
		}, nil},
		{"Copies.DeleteSource(bad key)", func() error { return copies.DeleteSource(ctx, "a/b", "r") }, nil},
		{"Copies.Push(bad key)", func() error { return copies.Push(ctx, "a/b", "r") }, nil},
		{"Copies.Refresh(bad key)", func() error { _, err := copies.Refresh(ctx, "a/b", "r"); return err }, nil},
		{"Copies.InsertSource(messages without a processor)", func() error {
			return copies.InsertSource(ctx, &Emp{PartitionKey: "p", RowKey: "r"}, denormalize.WriteOptions{}, denormalize.WriteOptions{})
		}, nil},
		{"Copies.Check(garbage token)", func() error {
			return firstErr(copies.Check(ctx, denormalize.CheckOptions{Resume: "garbage"}))
		}, denormalize.ErrInvalidToken},
		{"Copies.Check(token with CR LF)", func() error {
			return firstErr(copies.Check(ctx, denormalize.CheckOptions{Resume: "dn1.e30\r\n"}))
		}, denormalize.ErrInvalidToken},
		{"Copies.Rebuild(garbage token)", func() error {
			_, err := copies.Rebuild(ctx, denormalize.CheckOptions{Resume: "garbage"})
			return err
		}, denormalize.ErrInvalidToken},
		{"nil Copies.InsertSource", func() error {
			return (*denormalize.Copies[Dept, Emp])(nil).InsertSource(ctx, &Emp{PartitionKey: "p", RowKey: "r"})
		}, nil},
		{"nil Copies.Relay", func() error { _, err := (*denormalize.Copies[Dept, Emp])(nil).Relay(ctx); return err }, nil},
	}
	for _, c := range cases {
		before := reqs.n.Load()
		err := c.call()
		switch {
		case err == nil:
			t.Errorf("%s: no error", c.name)
		case !errors.Is(err, entity.ErrInvalid):
			t.Errorf("%s: %v (%T) does not match entity.ErrInvalid", c.name, err, err)
		case c.also != nil && !errors.Is(err, c.also):
			t.Errorf("%s: %v does not match its own sentinel %v", c.name, err, c.also)
		}
		if n := reqs.n.Load() - before; n != 0 {
			t.Errorf("%s: refused after %d requests", c.name, n)
		}
	}
	t.Logf("%d refusals checked", len(cases))
}

// TestNilReceiversMatchErrInvalid calls every method of the operational
// types of entity, resolver and denormalize on a nil receiver with zero
// arguments: each error it returns matches entity.ErrInvalid.
func TestNilReceiversMatchErrInvalid(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[entity.Table[Person]](), reflect.TypeFor[entity.Table[entity.DynamicEntity]](), reflect.TypeFor[entity.Batch](),
		reflect.TypeFor[resolver.Table](), reflect.TypeFor[resolver.Schema](), reflect.TypeFor[resolver.Batch](),
		reflect.TypeFor[denormalize.Copies[Dept, Emp]](),
	} {
		ptr := reflect.PointerTo(typ)
		for i := 0; i < ptr.NumMethod(); i++ {
			m := ptr.Method(i)
			args := append([]reflect.Value{reflect.Zero(ptr)}, zeroArgs(m.Type, true)...)
			var out []reflect.Value
			if m.Type.IsVariadic() {
				out = m.Func.CallSlice(args)
			} else {
				out = m.Func.Call(args)
			}
			for j, o := range out {
				var err error
				switch {
				case m.Type.Out(j) == errorType:
					err, _ = o.Interface().(error)
				case o.Kind() == reflect.Func && !o.IsNil():
					err = firstYielded(o)
				}
				if err != nil && !errors.Is(err, entity.ErrInvalid) {
					t.Errorf("(*%v)(nil).%s: %v (%T) does not match entity.ErrInvalid", typ, m.Name, err, err)
				}
			}
		}
	}
}

// firstYielded is the first error an iter.Seq2[_, error] yields.
func firstYielded(seq reflect.Value) error {
	yield := seq.Type().In(0)
	if seq.Type().NumIn() != 1 || yield.Kind() != reflect.Func || yield.NumIn() != 2 || yield.In(1) != errorType {
		return nil
	}
	var first error
	seq.Call([]reflect.Value{reflect.MakeFunc(yield, func(in []reflect.Value) []reflect.Value {
		if e, ok := in[1].Interface().(error); ok && e != nil && first == nil {
			first = e
		}
		return []reflect.Value{reflect.ValueOf(false)}
	})})
	return first
}
