// Package apisweep_test calls every exported function and method of
// tablekit's packages (entity, entity/filter, keys, resolver; account, backup,
// throttle and integration/cosmos in ops_test.go) with nil
// receivers and nil or zero arguments, and fails on any panic: bad input
// gets an error (or a harmless zero result), never a crash.
//
// Methods are found by reflection over each exported type; functions,
// which reflection cannot list, are in a table that a parse of each
// package's source checks for completeness, so a new exported function
// or type without a case here fails the test.
//
// Here every ctx argument gets context.Background(); a nil
// context.Context, which the context package says never to pass, is
// TestNilAndZeroRefused's (nilctx_test.go): refused, typed, never a panic.
package apisweep_test

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"iter"
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
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/resolver"
)

// Person is a valid entity type for the generic APIs.
type Person struct {
	PartitionKey, RowKey string
	ETag                 string
	Name                 string
}

var ctxType = reflect.TypeFor[context.Context]()

// zeroArgs returns the zero value of each parameter of fn (nil for
// pointers, interfaces, slices, maps, funcs), with context.Background()
// for a context.
func zeroArgs(fn reflect.Type, skipFirst bool) []reflect.Value {
	var args []reflect.Value
	for i := 0; i < fn.NumIn(); i++ {
		if skipFirst && i == 0 {
			continue
		}
		in := fn.In(i)
		if in == ctxType {
			args = append(args, reflect.ValueOf(context.Background()))
			continue
		}
		args = append(args, reflect.Zero(in))
	}
	return args
}

// pendingGuards are the methods known to panic on a nil or zero receiver
// whose guard belongs to code outside this sweep's changes (entity's query
// methods: a "if err := t.ok(); err != nil" at their top, as table.go's
// methods have). A listed method that stops panicking fails the test, so
// the list only shrinks.
var pendingGuards = map[string]bool{}

var errorType = reflect.TypeFor[error]()

// swept counts the methods called, for the log.
var swept int

// call calls fn with args, and any iterator it returns; a panic fails t.
// With mustFail, an error result must be non-nil: a nil or zero receiver
// cannot have done what was asked.
func call(t *testing.T, name string, fn reflect.Value, args []reflect.Value, mustFail bool, pending bool) {
	t.Helper()
	panicked := false
	defer func() {
		r := recover()
		switch {
		case r != nil && pending:
			t.Logf("%s panics (guard pending): %v", name, r)
		case r != nil:
			buf := make([]byte, 4096)
			buf = buf[:runtime.Stack(buf, false)]
			t.Errorf("%s panicked: %v\n%s", name, r, buf)
		case pending && !panicked:
			t.Errorf("%s no longer panics: remove it from pendingGuards", name)
		}
	}()
	panicked = true
	var out []reflect.Value
	if fn.Type().IsVariadic() {
		out = fn.CallSlice(args)
	} else {
		out = fn.Call(args)
	}
	for _, o := range out {
		drain(o)
	}
	panicked = false
	if mustFail {
		for i, o := range out {
			if fn.Type().Out(i) == errorType && o.IsNil() {
				t.Errorf("%s returned a nil error", name)
			}
		}
	}
}

// drain runs a returned iterator (iter.Seq or iter.Seq2) for one value.
func drain(v reflect.Value) {
	if v.Kind() != reflect.Func || v.IsNil() || v.Type().NumIn() != 1 || v.Type().NumOut() != 0 {
		return
	}
	yield := v.Type().In(0)
	if yield.Kind() != reflect.Func || yield.NumOut() != 1 || yield.Out(0).Kind() != reflect.Bool {
		return
	}
	n := 0
	v.Call([]reflect.Value{reflect.MakeFunc(yield, func([]reflect.Value) []reflect.Value {
		n++
		return []reflect.Value{reflect.ValueOf(n < 3)}
	})})
}

// sweepMethods calls every method of typ's pointer type on a nil pointer
// and on a pointer to the zero value, with zero arguments, and on recv
// (a working value, when given) with zero arguments.
func sweepMethods(t *testing.T, typ reflect.Type, recv reflect.Value) []string {
	t.Helper()
	ptr := reflect.PointerTo(typ)
	var names []string
	for i := 0; i < ptr.NumMethod(); i++ {
		m := ptr.Method(i)
		swept++
		names = append(names, m.Name)
		args := zeroArgs(m.Type, true)
		name := typ.String() + "." + m.Name
		pending := pendingGuards[m.Name] && strings.HasPrefix(typ.String(), "entity.Table[")
		// A nil receiver: only pointer-receiver methods can take one. It
		// must fail every call that returns an error (Unwrap aside).
		if _, byValue := typ.MethodByName(m.Name); !byValue || typ.Kind() == reflect.Interface {
			call(t, "(*"+name+")(nil)", m.Func, append([]reflect.Value{reflect.Zero(ptr)}, args...), m.Name != "Unwrap", pending)
		}
		call(t, "zero "+name, m.Func, append([]reflect.Value{reflect.New(typ)}, args...), false, pending)
		if recv.IsValid() {
			call(t, "working "+name, m.Func, append([]reflect.Value{recv}, args...), false, false)
		}
	}
	return names
}

// offline is a client pointed at a closed loopback port, without retries:
// any request fails at once, with an error.
func offline(t *testing.T, kit bool) *aztables.Client {
	t.Helper()
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}
	if kit {
		opts = entity.ClientOptions(opts)
	}
	c, err := aztables.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/nowhere", opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// exported lists the exported functions ("F") and methods ("T.M") and
// types declared in a package's non-test source.
func exported(t *testing.T, dir string) (funcs, types []string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					funcs = append(funcs, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.IsExported() {
						types = append(types, ts.Name.Name)
					}
				}
			}
		}
	}
	sort.Strings(funcs)
	sort.Strings(types)
	return funcs, types
}

// pkg is one package's sweep: its functions called with nil or zero
// arguments, its types, and working receivers where a zero one would not
// reach the code behind.
type pkg struct {
	dir   string
	funcs map[string]func()
	types map[string]reflect.Type
	// working receivers, by type name
	working map[string]reflect.Value
}

func TestNoPanicOnNil(t *testing.T) {
	ctx := context.Background()
	schema, err := resolver.NewSchema(resolver.Config{}, resolver.Register[Person]("Person"))
	if err != nil {
		t.Fatal(err)
	}
	kitClient, plain := offline(t, true), offline(t, false)
	people, err := entity.NewTable[Person](kitClient)
	if err != nil {
		t.Fatal(err)
	}
	bags, err := entity.NewTable[entity.DynamicEntity](plain)
	if err != nil {
		t.Fatal(err)
	}
	rtable, err := resolver.NewTable(plain, schema)
	if err != nil {
		t.Fatal(err)
	}
	var nilTable *entity.Table[Person]
	var nilSchema *resolver.Schema
	var nilRTable *resolver.Table

	pkgs := []pkg{
		{
			dir: "entity",
			funcs: map[string]func(){
				"ClientOptions": func() { entity.ClientOptions(nil) },
				"ToDynamic":     func() { _, _ = entity.ToDynamic(nil); _, _ = entity.ToDynamic((*Person)(nil)) },
				"FromDynamic": func() {
					_ = entity.FromDynamic(nil, nil)
					_ = entity.FromDynamic(&entity.DynamicEntity{}, nil)
					_ = entity.FromDynamic(&entity.DynamicEntity{}, (*Person)(nil))
				},
				"Marshal":           func() { _, _ = entity.Marshal(nil); _, _ = entity.Marshal((*Person)(nil)) },
				"MarshalStored":     func() { _, _ = entity.MarshalStored(nil) },
				"Prop":              func() { _, _ = entity.Prop[string](nil, "x") },
				"TimestampFromETag": func() { entity.TimestampFromETag("") },
				"Unmarshal": func() {
					_ = entity.Unmarshal(nil, nil)
					_ = entity.Unmarshal([]byte(`{}`), nil)
					_ = entity.Unmarshal([]byte(`{}`), (*Person)(nil))
					_ = entity.Unmarshal(nil, &Person{})
				},
				"Validate": func() { _ = entity.Validate(nil); _ = entity.Validate((*Person)(nil)) },
				"SystemOf": func() { _, _ = entity.SystemOf(nil); _, _ = entity.SystemOf((*entity.DynamicEntity)(nil)) },
				"NewTable": func() {
					_, _ = entity.NewTable[Person](nil)
					_, _ = entity.NewTable[entity.DynamicEntity](nil)
					_, _ = entity.NewTable[json.RawMessage](nil)
				},
				"NewTableFromConnectionString": func() { _, _ = entity.NewTableFromConnectionString[Person]("", "", nil) },
				"NewTableFromService":          func() { _, _ = entity.NewTableFromService[Person](nil, "") },
				"ViewAs": func() {
					_, _ = entity.ViewAs[entity.DynamicEntity, Person](nil)
					_, _ = entity.ViewAs[Person](&entity.Table[Person]{})
				},
				"NewTableWithCredential": func() {
					_, _ = entity.NewTableWithCredential[Person]("", "", nil, nil)
					_, _ = entity.NewTableWithCredential[Person]("http://127.0.0.1:1/", "t", nil, nil)
				},
			},
			types: map[string]reflect.Type{
				"Batch": reflect.TypeFor[entity.Batch](), "BatchError": reflect.TypeFor[entity.BatchError](),
				"BulkError": reflect.TypeFor[entity.BulkError](), "BulkOptions": reflect.TypeFor[entity.BulkOptions](),
				"DecodeError": reflect.TypeFor[entity.DecodeError](), "DynamicEntity": reflect.TypeFor[entity.DynamicEntity](),
				"View":    reflect.TypeFor[entity.View](),
				"EDMType": reflect.TypeFor[entity.EDMType](), "FanOutOptions": reflect.TypeFor[entity.FanOutOptions](),
				"ModifyOptions": reflect.TypeFor[entity.ModifyOptions](),
				"OpKind":        reflect.TypeFor[entity.OpKind](), "Outcome": reflect.TypeFor[entity.Outcome](),
				"OutcomeError": reflect.TypeFor[entity.OutcomeError](), "Page": reflect.TypeFor[entity.Page[Person]](),
				"ClientOptionsError": reflect.TypeFor[entity.ClientOptionsError](), "ETagError": reflect.TypeFor[entity.ETagError](),
				"ConfigError":       reflect.TypeFor[entity.ConfigError](),
				"RowError":          reflect.TypeFor[entity.RowError](),
				"PropertyMarshaler": reflect.TypeFor[entity.PropertyMarshaler](), "PropertyUnmarshaler": reflect.TypeFor[entity.PropertyUnmarshaler](),
				"Query": reflect.TypeFor[entity.Query](), "RetryPolicy": reflect.TypeFor[entity.RetryPolicy](),
				"Rule":         reflect.TypeFor[entity.Rule](),
				"ServiceError": reflect.TypeFor[entity.ServiceError](), "System": reflect.TypeFor[entity.System](),
				"Table": reflect.TypeFor[entity.Table[Person]](), "TransactionError": reflect.TypeFor[entity.TransactionError](),
				"TypeError": reflect.TypeFor[entity.TypeError](), "UpdateMode": reflect.TypeFor[entity.UpdateMode](),
				"ValidationError": reflect.TypeFor[entity.ValidationError](),
			},
			working: map[string]reflect.Value{
				"Table": reflect.ValueOf(people),
			},
		},
		{
			dir: "entity/filter",
			funcs: map[string]func(){
				"And":          func() { filter.And(); filter.And(filter.Expr{}) },
				"Compare":      func() { filter.Compare("", 0, nil) },
				"Eq":           func() { filter.Eq("", nil) },
				"Ge":           func() { filter.Ge("", nil) },
				"Gt":           func() { filter.Gt("", nil) },
				"Le":           func() { filter.Le("", nil) },
				"Lt":           func() { filter.Lt("", nil) },
				"Ne":           func() { filter.Ne("", nil) },
				"Not":          func() { filter.Not(filter.Expr{}) },
				"Or":           func() { filter.Or(); filter.Or(filter.Expr{}) },
				"PK":           func() { filter.PK("") },
				"RK":           func() { filter.RK("") },
				"RowKeyPrefix": func() { filter.RowKeyPrefix("") },
				"Parse":        func() { _, _ = filter.Parse(""); _, _ = filter.Parse("\xff") },
				"RowKeyRange":  func() { filter.RowKeyRange("", "") },
				"Binary":       func() { filter.Binary(nil) },
				"Bool":         func() { _ = filter.Bool(false) },
				"Double":       func() { filter.Double(0) },
				"GUID":         func() { filter.GUID(uuid.Nil) },
				"Int32":        func() { filter.Int32(0) },
				"Int64":        func() { filter.Int64(0) },
				"String":       func() { filter.String("") },
				"Time":         func() { filter.Time(time.Time{}) },
				"ValueOf": func() {
					filter.ValueOf(nil)
					filter.ValueOf((*int)(nil))
					filter.ValueOf((*time.Time)(nil))
					filter.ValueOf([]byte(nil))
					filter.ValueOf((*uuid.UUID)(nil))
				},
			},
			types: map[string]reflect.Type{
				"Bound": reflect.TypeFor[filter.Bound](), "Comparison": reflect.TypeFor[filter.Comparison](), "Error": reflect.TypeFor[filter.Error](), "ParseError": reflect.TypeFor[filter.ParseError](),
				"Expr": reflect.TypeFor[filter.Expr](), "Kind": reflect.TypeFor[filter.Kind](),
				"Op": reflect.TypeFor[filter.Op](), "Plan": reflect.TypeFor[filter.Plan](),
				"Value": reflect.TypeFor[filter.Value](), "Warning": reflect.TypeFor[filter.Warning](),
				"WarningCode": reflect.TypeFor[filter.WarningCode](),
			},
		},
		{
			dir: "keys",
			funcs: map[string]func(){
				"AppendCompound":        func() { keys.AppendCompound(nil); keys.AppendCompound(nil, "") },
				"AppendInvertedTicks":   func() { keys.AppendInvertedTicks(nil, time.Time{}) },
				"AppendOrderedInt":      func() { keys.AppendOrderedInt(nil, 0) },
				"AppendPad":             func() { keys.AppendPad(nil, 0, 0); keys.AppendPad(nil, -1, -1) },
				"Bucket":                func() { keys.Bucket("", 0); keys.Bucket("", -1) },
				"BucketChecked":         func() { _, _ = keys.BucketChecked("", 0) },
				"Buckets":               func() { drainSeq(keys.Buckets(0)); drainSeq(keys.Buckets(-1)) },
				"Compare":               func() { keys.Compare("", "") },
				"Compound":              func() { keys.Compound(); keys.Compound("") },
				"CompoundChecked":       func() { _, _ = keys.CompoundChecked() },
				"CompoundPrefix":        func() { keys.CompoundPrefix() },
				"Escape":                func() { keys.Escape("") },
				"FromTicks":             func() { keys.FromTicks(0); keys.FromTicks(-1) },
				"InvertedTicks":         func() { keys.InvertedTicks(time.Time{}) },
				"InvertedTicksChecked":  func() { _, _ = keys.InvertedTicksChecked(time.Time{}) },
				"InvertedTicksSeq":      func() { keys.InvertedTicksSeq(time.Time{}, 0) },
				"Join":                  func() { _, _ = keys.Join(""); _, _ = keys.Join("", "") },
				"OrderedInt":            func() { keys.OrderedInt(0) },
				"Pad":                   func() { keys.Pad(0, 0); keys.Pad(-1, -1) },
				"PadChecked":            func() { _, _ = keys.PadChecked(0, 0) },
				"ParseInvertedTicks":    func() { _, _ = keys.ParseInvertedTicks("") },
				"ParseInvertedTicksSeq": func() { _, _, _ = keys.ParseInvertedTicksSeq("") },
				"ParseOrderedInt":       func() { _, _ = keys.ParseOrderedInt("") },
				"ParseTicksKey":         func() { _, _ = keys.ParseTicksKey("") },
				"ParseTicksKeySeq":      func() { _, _, _ = keys.ParseTicksKeySeq("") },
				"PrefixRange":           func() { keys.PrefixRange("") },
				"SplitCompound":         func() { _, _ = keys.SplitCompound("") },
				"Ticks":                 func() { keys.Ticks(time.Time{}) },
				"TicksKey":              func() { keys.TicksKey(time.Time{}) },
				"TicksKeyChecked":       func() { _, _ = keys.TicksKeyChecked(time.Time{}) },
				"TicksKeySeq":           func() { keys.TicksKeySeq(time.Time{}, 0) },
				"UTF16Len":              func() { keys.UTF16Len("") },
				"Unescape":              func() { _, _ = keys.Unescape("") },
				"Validate":              func() { _ = keys.Validate("") },
				"ValidateLimit":         func() { _ = keys.ValidateLimit("", 0); _ = keys.ValidateLimit("x", -1) },
			},
			types: map[string]reflect.Type{
				"KeyError": reflect.TypeFor[keys.KeyError](), "Rule": reflect.TypeFor[keys.Rule](),
				"Sequencer": reflect.TypeFor[keys.Sequencer](),
			},
		},
		{
			dir: "resolver",
			funcs: map[string]func(){
				"Get": func() {
					_, _ = resolver.Get[Person](ctx, nil, "", "")
					_, _ = resolver.Get[Person](ctx, nilRTable, "p", "r")
					_, _ = resolver.Get[Person](ctx, rtable, "p", "r")
				},
				"OfType": func() { _, _ = resolver.OfType[Person](nil); _, _ = resolver.OfType[Person](nilSchema) },
				"Query": func() {
					drainSeq2(resolver.Query[Person](ctx, nil, entity.Query{}))
					drainSeq2(resolver.Query[Person](ctx, rtable, entity.Query{}))
				},
				"RowKeyOf":       func() { _, _ = resolver.RowKeyOf[Person](nil, "") },
				"ByFunc":         func() { resolver.ByFunc(nil, nil) },
				"ByProperty":     func() { _ = resolver.ByProperty("") },
				"ByRowKeyPrefix": func() { _ = resolver.ByRowKeyPrefix("") },
				"Register":       func() { resolver.Register[Person]("") },
				"Upgrade":        func() { resolver.Upgrade[Person, Person]("", nil) },
				"NewSchema": func() {
					_, _ = resolver.NewSchema(resolver.Config{}, resolver.Registration{})
					_, _ = resolver.NewSchema(resolver.Config{}, resolver.Upgrade[Person, Person]("Old", nil))
					_, _ = resolver.NewSchema(resolver.Config{Discriminator: resolver.ByFunc(nil, nil)})
				},
				"NewTableOf": func() {
					_, _ = resolver.NewTableOf(nil, nil)
					_, _ = resolver.NewTableOf(nil, schema)
				},
				"NewTable": func() {
					_, _ = resolver.NewTable(nil, nil)
					_, _ = resolver.NewTable(plain, nil)
					_, _ = resolver.NewTable(nil, schema)
				},
			},
			types: map[string]reflect.Type{
				"Batch": reflect.TypeFor[resolver.Batch](), "Discriminator": reflect.TypeFor[resolver.Discriminator](),
				"Config": reflect.TypeFor[resolver.Config](), "Registration": reflect.TypeFor[resolver.Registration](), "Props": reflect.TypeFor[resolver.Props](),
				"ResolveFunc": reflect.TypeFor[resolver.ResolveFunc](), "RowError": reflect.TypeFor[resolver.RowError](),
				"Schema": reflect.TypeFor[resolver.Schema](), "StampFunc": reflect.TypeFor[resolver.StampFunc](),
				"Table":             reflect.TypeFor[resolver.Table](),
				"MigrateCheckpoint": reflect.TypeFor[resolver.MigrateCheckpoint](), "MigrateError": reflect.TypeFor[resolver.MigrateError](),
				"MigrateFailure": reflect.TypeFor[resolver.MigrateFailure](), "MigrateOptions": reflect.TypeFor[resolver.MigrateOptions](),
				"MigrateReport": reflect.TypeFor[resolver.MigrateReport](),
			},
			working: map[string]reflect.Value{
				"Schema": reflect.ValueOf(schema),
				"Table":  reflect.ValueOf(rtable),
			},
		},
	}
	defer func() { t.Logf("%d methods swept", swept) }()
	// A Table[DynamicEntity] and a Table[json.RawMessage] too, and the nil
	// *entity.Table through a variable of its own type.
	sweepMethods(t, reflect.TypeFor[entity.Table[entity.DynamicEntity]](), reflect.ValueOf(bags))
	rows, err := entity.NewTable[json.RawMessage](kitClient)
	if err != nil {
		t.Fatal(err)
	}
	sweepMethods(t, reflect.TypeFor[entity.Table[json.RawMessage]](), reflect.ValueOf(rows))
	_ = nilTable

	sweepPackages(t, pkgs)
}

// sweepPackages checks that each package's exported functions and types
// all have a case, then calls every function and every method.
func sweepPackages(t *testing.T, pkgs []pkg) {
	t.Helper()
	for _, p := range pkgs {
		t.Run(p.dir, func(t *testing.T) {
			funcs, types := exported(t, filepath.Join("..", "..", p.dir))
			for _, f := range funcs {
				if _, ok := p.funcs[f]; !ok {
					// Constructors of a type are listed beside it by go doc,
					// but they are functions: look them up here too.
					t.Errorf("exported function %s.%s has no nil case", p.dir, f)
				}
			}
			for _, ty := range types {
				if _, ok := p.types[ty]; !ok {
					t.Errorf("exported type %s.%s is not swept", p.dir, ty)
				}
			}
			for _, name := range slices.Sorted(mapsKeys(p.funcs)) {
				call(t, p.dir+"."+name, reflect.ValueOf(p.funcs[name]), nil, false, false)
			}
			for _, name := range slices.Sorted(mapsKeys(p.types)) {
				typ := p.types[name]
				if typ.Kind() == reflect.Interface || typ.Kind() == reflect.Func {
					continue // no methods of their own to call on nil
				}
				sweepMethods(t, typ, p.working[name])
			}
		})
	}
}

func mapsKeys[V any](m map[string]V) iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func drainSeq[V any](s iter.Seq[V]) {
	if s == nil {
		return
	}
	for range s {
	}
}

func drainSeq2[K, V any](s iter.Seq2[K, V]) {
	if s == nil {
		return
	}
	for range s {
	}
}
