package apisweep_test

import (
	"bytes"
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/crypt/keyvault"
	"github.com/tablekit/tablekit/entity/filter"
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

// ctxDirs are the packages whose every exported function and method that
// takes a context.Context TestNilAndZeroRefused must call: a new one
// without a case fails the test.
var ctxDirs = []string{
	"account", "backup", "entity", "entity/crypt", "entity/crypt/keyvault", "entity/sas", "resolver",
	"patterns/bloblog", "patterns/bucket", "patterns/compound", "patterns/dataseries", "patterns/denormalize",
	"patterns/eventual", "patterns/indexentity", "patterns/large", "patterns/logtail", "patterns/lookup",
	"patterns/rotation", "patterns/secondaryindex", "patterns/wide",
}

// notSwept are the packages whose entry points taking a context the
// sweep leaves out: none.
var notSwept = map[string]bool{}

// TestNilAndZeroRefused calls, by reflection, every exported method of
// the operational types of tablekit (entity's, resolver's, crypt's, sas's
// and every pattern's but eventual's) on a nil pointer and on a pointer
// to the zero value, and every exported method and function that takes a
// context.Context with a nil one (the receiver working, other arguments
// zero): no call panics, and each error it returns (or an iterator
// yields first) matches entity.ErrInvalid; with a nil context the error
// names ctx and no request reached the (counted, offline) clients.
func TestNilAndZeroRefused(t *testing.T) {
	bg := context.Background()
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
	photos, err := entity.NewTable[Photo](client)
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
	svc, err := aztables.NewServiceClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1", countedOptions(&reqs))
	if err != nil {
		t.Fatal(err)
	}
	box, err := container.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/box", &container.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, PerRetryPolicies: []policy.Policy{&reqs}},
	})
	if err != nil {
		t.Fatal(err)
	}
	schema, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Person]("Person"))
	if err != nil {
		t.Fatal(err)
	}
	must := func(v any, err error) reflect.Value {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return reflect.ValueOf(v)
	}
	kek, err := crypt.NewLocalKey("k1", bytes.Repeat([]byte{0x42}, 32))
	if err != nil {
		t.Fatal(err)
	}
	logger, err := bloblog.New(bg, box, bloblog.Config{Service: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = logger.Close() }()
	key := func(e *Person) (string, bool) { return e.Name, e.Name != "" }
	queues, err := azqueue.NewServiceClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1", &azqueue.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, PerRetryPolicies: []policy.Policy{&reqs}},
	})
	if err != nil {
		t.Fatal(err)
	}
	processor, err := eventual.New(eventual.QueuesOf(queues, "work"), box, eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}

	// Each operational type, with a working value (nil: nil and zero
	// receivers only).
	types := []struct {
		typ     reflect.Type
		working reflect.Value
	}{
		{reflect.TypeFor[entity.Table[Person]](), reflect.ValueOf(people)},
		{reflect.TypeFor[entity.Table[entity.DynamicEntity]](), reflect.ValueOf(bags)},
		{reflect.TypeFor[entity.RetryPolicy](), reflect.ValueOf(&entity.RetryPolicy{})},
		{reflect.TypeFor[resolver.Table](), must(resolver.NewTable(client, schema))},
		{reflect.TypeFor[crypt.Table[Person]](), must(crypt.New(people, crypt.Config{Key: kek}))},
		{reflect.TypeFor[crypt.LocalKey](), reflect.ValueOf(kek)},
		{reflect.TypeFor[keyvault.Key](), must(keyvault.New(must(azkeys.NewClient("https://v.vault.azure.net/", noToken{}, &azkeys.ClientOptions{
			ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, PerRetryPolicies: []policy.Policy{&reqs}},
		})).Interface().(*azkeys.Client), "https://v.vault.azure.net/", "k", keyvault.Config{}))},
		{reflect.TypeFor[sas.Issuer](), must(sas.NewIssuerFromConnectionString("UseDevelopmentStorage=true", sas.Config{}))},
		{reflect.TypeFor[bloblog.Logger](), reflect.ValueOf(logger)},
		{reflect.TypeFor[bloblog.Reader](), must(bloblog.NewReader(box, bloblog.Config{Service: "s"}))},
		{reflect.TypeFor[bucket.Spread[Person]](), must(bucket.New(people, bucket.Config{}))},
		{reflect.TypeFor[compound.Relation[Person, string, time.Time]](), must(compound.New(people,
			compound.Config[string, time.Time]{Parent: compound.Text(), Child: compound.NewestFirst()}))},
		{reflect.TypeFor[dataseries.Series](), must(dataseries.New(bags, dataseries.Config{}))},
		{reflect.TypeFor[denormalize.Copies[Dept, Emp]](), must(denormalize.New(depts, emps, denormalize.Config{}, denormalize.Relation[Dept, Emp]{
			Name: "manager", Fields: []denormalize.Field{{From: "Name", To: "ManagerName"}},
			Source: func(d *Dept) (denormalize.Key, bool) {
				return denormalize.Key{PartitionKey: d.PartitionKey, RowKey: d.ManagerID}, d.ManagerID != ""
			},
			Targets: func(e *Emp) denormalize.Targets {
				return denormalize.Targets{Keys: []denormalize.Key{{PartitionKey: e.PartitionKey, RowKey: "department"}}}
			},
		}))},
		{reflect.TypeFor[indexentity.Set[Person]](), must(indexentity.New(people, indexentity.Config{},
			indexentity.Index[Person]{Name: "name", Value: key}))},
		{reflect.TypeFor[large.Table[Photo]](), must(large.New(photos, box, large.Config{}))},
		{reflect.TypeFor[large.Stream](), reflect.ValueOf(&large.Stream{})},
		{reflect.TypeFor[logtail.Log[Person]](), must(logtail.New(people, logtail.Config{}))},
		{reflect.TypeFor[lookup.Cache[Person]](), must(lookup.New(people, lookup.Config{Query: entity.Query{Filter: filter.PK("p")}}))},
		{reflect.TypeFor[rotation.Rotation[Person]](), must(rotation.New(svc, client, rotationConfig()))},
		{reflect.TypeFor[secondaryindex.Set[Person]](), must(secondaryindex.New(people, secondaryindex.Config{},
			secondaryindex.Index[Person]{Name: "name", Key: key}))},
		{reflect.TypeFor[wide.Table[Person]](), must(wide.New(people, wide.Config{}))},
		{reflect.TypeFor[eventual.Processor](), reflect.ValueOf(processor)},
		{reflect.TypeFor[eventual.Outbox[Person]](), must(eventual.NewOutbox(processor, people, eventual.OutboxConfig{}))},
	}

	// The functions that take a context, each called with a nil one and
	// working other arguments.
	var nilCtx context.Context
	funcs := map[string]func() error{
		"account.Provision": func() error { return account.Provision(nilCtx, people) },
		"backup.Export": func() error {
			_, err := backup.Export(nilCtx, bags, &bytes.Buffer{}, backup.ExportOptions{})
			return err
		},
		"backup.ExportBlob": func() error {
			_, err := backup.ExportBlob(nilCtx, bags, box.NewBlockBlobClient("b"), backup.ExportOptions{})
			return err
		},
		"backup.ExportCSV": func() error { return backup.ExportCSV(nilCtx, bags, &bytes.Buffer{}, filter.Expr{}) },
		"backup.Import": func() error {
			_, err := backup.Import(nilCtx, bags, strings.NewReader(""), backup.ImportOptions{})
			return err
		},
		"backup.ImportCSV": func() error {
			_, err := backup.ImportCSV(nilCtx, bags, strings.NewReader(""), backup.ImportOptions{})
			return err
		},
		"resolver.Get": func() error {
			_, err := resolver.Get[Person](nilCtx, must(resolver.NewTable(client, schema)).Interface().(*resolver.Table), "p", "r")
			return err
		},
		"resolver.Query": func() error {
			return firstErr(resolver.Query[Person](nilCtx, must(resolver.NewTable(client, schema)).Interface().(*resolver.Table), entity.Query{}))
		},
		"bloblog.New": func() error {
			l, err := bloblog.New(nilCtx, box, bloblog.Config{Service: "s"})
			if l != nil {
				_ = l.Close()
			}
			return err
		},
		"eventual.Once": func() error {
			_, err := eventual.Once(nilCtx, people, "p", "step", func(context.Context, *entity.Batch) error { return nil })
			return err
		},
		"eventual.Insert": func() error { return eventual.Insert(nilCtx, people, &Person{}) },
		"eventual.Upsert": func() error { return eventual.Upsert(nilCtx, people, &Person{}) },
		"eventual.Delete": func() error { return eventual.Delete(nilCtx, people, "p", "r") },
		"eventual.Move": func() error {
			return eventual.Move(nilCtx, people, people, "p", "r", nil)
		},
		"eventual.SweepMarkers": func() error {
			_, err := eventual.SweepMarkers(nilCtx, people, time.Now())
			return err
		},
		"eventual.PutBlob": func() error { return eventual.PutBlob(nilCtx, box, "b", nil) },
		"eventual.PutBlobIfAbsent": func() error {
			_, err := eventual.PutBlobIfAbsent(nilCtx, box, "b", nil)
			return err
		},
		"eventual.DeleteBlob": func() error { return eventual.DeleteBlob(nilCtx, box, "b") },
		"eventual.DeliveryFrom": func() error {
			// No error to return: a nil context carries no delivery.
			if _, ok := eventual.DeliveryFrom(nilCtx); ok {
				return errors.New("a delivery from a nil context")
			}
			return &eventual.ConfigError{Field: "ctx", Reason: "nil: no delivery (DeliveryFrom reports false)"}
		},
	}

	// Every entry point that takes a context has a case.
	swept := map[string]bool{}
	for _, c := range types {
		swept[strings.TrimPrefix(genericName(c.typ), "*")] = true
	}
	for _, dir := range ctxDirs {
		for _, name := range ctxEntries(t, filepath.Join("..", "..", dir)) {
			pkgName := filepath.Base(dir)
			full := pkgName + "." + name
			recv, _, isMethod := strings.Cut(name, ".")
			switch {
			case isMethod && swept[pkgName+"."+recv]:
			case !isMethod && funcs[full] != nil:
			case notSwept[dir]:
				t.Logf("not swept: %s", full)
			default:
				t.Errorf("%s takes a context and has no case", full)
			}
		}
	}

	n, nilCtxs := 0, 0
	check := func(name string, fn reflect.Value, args []reflect.Value, nilCtx bool) {
		t.Helper()
		n++
		if nilCtx {
			nilCtxs++
		}
		before := reqs.n.Load()
		errs, hasErr, ok := callRecover(t, name, fn, args)
		if !ok {
			return
		}
		if !hasErr {
			if nilCtx {
				t.Errorf("%s: takes a context and returns no error", name)
			}
			return
		}
		switch {
		case len(errs) == 0:
			t.Errorf("%s: no error", name)
		case !errors.Is(errs[0], entity.ErrInvalid):
			t.Errorf("%s: %v (%T) does not match entity.ErrInvalid", name, errs[0], errs[0])
		case nilCtx && !strings.Contains(errs[0].Error(), "ctx"):
			t.Errorf("%s: %v: does not name ctx", name, errs[0])
		}
		if k := reqs.n.Load() - before; k != 0 {
			t.Errorf("%s: %d requests sent", name, k)
		}
	}
	for _, c := range types {
		ptr := reflect.PointerTo(c.typ)
		for i := 0; i < ptr.NumMethod(); i++ {
			m := ptr.Method(i)
			args := zeroArgs(m.Type, true)
			name := c.typ.String() + "." + m.Name
			_, byValue := c.typ.MethodByName(m.Name)
			if !byValue {
				check("(*"+name+")(nil)", m.Func, append([]reflect.Value{reflect.Zero(ptr)}, args...), false)
			}
			if c.typ.Kind() == reflect.Struct && c.typ.NumField() > 0 && !isValueType(c.typ) {
				check("zero "+name, m.Func, append([]reflect.Value{reflect.New(c.typ)}, args...), false)
			}
			if c.working.IsValid() && takesCtx(m.Type) {
				nilArgs := slices.Clone(args)
				for j := 1; j < m.Type.NumIn(); j++ {
					if m.Type.In(j) == ctxType {
						nilArgs[j-1] = reflect.Zero(ctxType)
					}
				}
				check(name+"(nil ctx)", m.Func, append([]reflect.Value{c.working}, nilArgs...), true)
			}
		}
	}
	for _, name := range slices.Sorted(mapsKeys(funcs)) {
		f := funcs[name]
		check(name+"(nil ctx)", reflect.ValueOf(func() error { return f() }), nil, true)
	}
	t.Logf("%d calls over %d types and %d functions, %d of them with a nil context", n, len(types), len(funcs), nilCtxs)
}

// noToken is a credential that never gets a token: a key of a vault that
// no request may reach.
type noToken struct{}

func (noToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{}, errors.New("no token")
}

// isValueType reports a type whose zero value is ready to use (no New).
func isValueType(typ reflect.Type) bool {
	return typ == reflect.TypeFor[entity.RetryPolicy]() || typ == reflect.TypeFor[large.Stream]()
}

func countedOptions(s *sent) *aztables.ClientOptions {
	return entity.ClientOptions(&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, PerRetryPolicies: []policy.Policy{s},
	}})
}

func takesCtx(fn reflect.Type) bool {
	for i := 0; i < fn.NumIn(); i++ {
		if fn.In(i) == ctxType {
			return true
		}
	}
	return false
}

// genericName is "pkg.Name" of a type, without its type arguments.
func genericName(typ reflect.Type) string {
	s := typ.String()
	if i := strings.IndexByte(s, '['); i >= 0 {
		s = s[:i]
	}
	return s
}

// callRecover calls fn (draining an iterator it returns for its first
// error) and returns the errors it returned, whether it returns any, and
// false after a panic, which fails t.
func callRecover(t *testing.T, name string, fn reflect.Value, args []reflect.Value) (errs []error, hasErr, ok bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			buf := make([]byte, 4096)
			buf = buf[:runtime.Stack(buf, false)]
			t.Errorf("%s panicked: %v\n%s", name, r, buf)
			ok = false
		}
	}()
	var out []reflect.Value
	if fn.Type().IsVariadic() {
		out = fn.CallSlice(args)
	} else {
		out = fn.Call(args)
	}
	for j, o := range out {
		typ := fn.Type().Out(j)
		switch {
		case typ == errorType:
			hasErr = true
			if e, _ := o.Interface().(error); e != nil {
				errs = append(errs, e)
			}
		case typ.Kind() == reflect.Func && typ.NumIn() == 1 && typ.In(0).Kind() == reflect.Func &&
			typ.In(0).NumIn() == 2 && typ.In(0).In(1) == errorType:
			hasErr = true
			if !o.IsNil() {
				if e := firstYielded(o); e != nil {
					errs = append(errs, e)
				}
			}
		}
	}
	return errs, hasErr, true
}

// ctxEntries lists a package's exported functions ("F") and methods of
// exported types ("T.M") that take a context.Context.
func ctxEntries(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() || !hasCtxParam(fd.Type) {
				continue
			}
			if fd.Recv == nil {
				names = append(names, fd.Name.Name)
				continue
			}
			recv := fd.Recv.List[0].Type
			if s, ok := recv.(*ast.StarExpr); ok {
				recv = s.X
			}
			switch x := recv.(type) {
			case *ast.IndexExpr:
				recv = x.X
			case *ast.IndexListExpr:
				recv = x.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.IsExported() {
				names = append(names, id.Name+"."+fd.Name.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

func hasCtxParam(ft *ast.FuncType) bool {
	for _, p := range ft.Params.List {
		if se, ok := p.Type.(*ast.SelectorExpr); ok && se.Sel.Name == "Context" {
			if id, ok := se.X.(*ast.Ident); ok && id.Name == "context" {
				return true
			}
		}
	}
	return false
}
