package crypt_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
)

// hookValue is a custom type stored through PropertyMarshaler, as an Int64.
type hookValue struct{ n int64 }

func (h hookValue) MarshalProperty() (any, error) { return h.n, nil }
func (h *hookValue) UnmarshalProperty(v any) error {
	n, ok := v.(int64)
	if !ok {
		return fmt.Errorf("want int64, got %T", v)
	}
	h.n = n
	return nil
}

// allTypes encrypts a field of every EDM type and every way the codec
// writes one (pointer, TextMarshaler, json, PropertyMarshaler), signs two
// and leaves one in clear.
type allTypes struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Str          string     `table:",encrypt"`
	I32          int32      `table:",encrypt"`
	I64          int64      `table:",encrypt"`
	U16          uint16     `table:",encrypt"`
	F64          float64    `table:",encrypt"`
	F32          float32    `table:",encrypt"`
	Whole        float64    `table:",encrypt"`
	Bool         bool       `table:",encrypt"`
	Time         time.Time  `table:",encrypt"`
	GUID         uuid.UUID  `table:",encrypt"`
	Bin          []byte     `table:",encrypt"`
	Ptr          *string    `table:",encrypt"`
	Nil          *int64     `table:",encrypt"`
	Addr         netip.Addr `table:",encrypt"`
	JSON         []string   `table:",encrypt,json"`
	Hook         hookValue  `table:",encrypt"`
	Quoted       string     `table:",encrypt"`
	SignedStr    string     `table:",sign"`
	SignedI64    int64      `table:",sign"`
	SignedTime   time.Time  `table:",sign"`
	Plain        string
}

func allTypesValue() allTypes {
	p := "pointed-to secret"
	return allTypes{
		PartitionKey: "Sales", RowKey: "000123",
		Str: "secret string é 😀", I32: -2147483648, I64: 9007199254740993, U16: 65535,
		F64: 72500.5, F32: 0.1, Whole: 2, Bool: true,
		Time:   time.Date(2012, 3, 4, 5, 6, 7, 123456700, time.UTC),
		GUID:   uuid.MustParse("0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901"),
		Bin:    []byte{0, 1, 2, 0xff, '/', '+'},
		Ptr:    &p,
		Addr:   netip.MustParseAddr("192.0.2.33"),
		JSON:   []string{"json", "secret"},
		Hook:   hookValue{-42},
		Quoted: "quote \" backslash \\ newline \n tab \t control \x01 ",
		// Signed values stay readable.
		SignedStr: "signed in clear", SignedI64: 1 << 60, SignedTime: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		Plain: "plain",
	}
}

// secretsOf lists the plaintexts of allTypesValue that must not appear in
// a body.
var secrets = []string{"secret string", "9007199254740993", "72500.5", "2012-03-04", "0b4a1f0e", "pointed-to", "192.0.2.33", `json`, "-42", "backslash"}

func newLocalKey(t testing.TB, id string, b byte) *crypt.LocalKey {
	t.Helper()
	k, err := crypt.NewLocalKey(id, bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newOffline[T any](t testing.TB, cfg crypt.Config) *crypt.Table[T] {
	t.Helper()
	if cfg.Key == nil {
		cfg.Key = newLocalKey(t, "kek-1", 1)
	}
	if cfg.Table == "" {
		cfg.Table = "employees"
	}
	ct, err := crypt.New(offlineTable[T](t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

func TestRoundTripEveryType(t *testing.T) {
	ctx := t.Context()
	ct := newOffline[allTypes](t, crypt.Config{})
	in := allTypesValue()
	body, err := ct.Marshal(ctx, &in)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(body, []byte(s)) {
			t.Errorf("body holds the plaintext %q:\n%s", s, body)
		}
	}
	for _, s := range []string{"signed in clear", "plain"} {
		if !bytes.Contains(body, []byte(s)) {
			t.Errorf("body lacks the clear value %q", s)
		}
	}
	var props map[string]any
	if err := json.Unmarshal(body, &props); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Str", "I32", "I64", "U16", "F64", "F32", "Whole", "Bool", "Time", "GUID", "Bin", "Ptr", "Addr", "JSON", "Hook", "Quoted"} {
		if props[name+"@odata.type"] != "Edm.Binary" {
			t.Errorf("%s stored as %v, want Edm.Binary", name, props[name+"@odata.type"])
		}
	}
	if _, ok := props["Nil"]; ok {
		t.Error("a nil pointer was stored")
	}
	var out allTypes
	if err := ct.Unmarshal(ctx, body, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

// TestRoundTripDynamic encrypts a property bag chosen by Config.Encrypt:
// each value comes back as the EDM type it was stored as.
func TestRoundTripDynamic(t *testing.T) {
	ctx := t.Context()
	ct := newOffline[entity.DynamicEntity](t, crypt.Config{
		Encrypt: func(pk, rk, name string) bool { return strings.HasPrefix(name, "Enc") },
		Sign:    func(pk, rk, name string) bool { return strings.HasPrefix(name, "Sig") },
	})
	in := entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}
	values := map[string]any{
		"String": "s", "Int32": int32(-5), "Int64": int64(1 << 62), "Double": 2.0,
		"Boolean": false, "DateTime": time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC),
		"Guid": uuid.MustParse("6f9619ff-8b86-d011-b42d-00c04fc964ff"), "Binary": []byte{},
	}
	for name, v := range values {
		in.Set("Enc"+name, v).Set("Sig"+name, v).Set("Plain"+name, v)
	}
	body, err := ct.Marshal(ctx, &in)
	if err != nil {
		t.Fatal(err)
	}
	var out entity.DynamicEntity
	if err := ct.Unmarshal(ctx, body, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Properties, in.Properties) {
		t.Fatalf("got %#v\nwant %#v", out.Properties, in.Properties)
	}
	// A reserved name is refused on write.
	in.Set("_tkEnc", "mine")
	if _, err := ct.Marshal(ctx, &in); !errors.Is(err, entity.ErrInvalid) {
		t.Fatalf("reserved name: %v", err)
	}
}

type person struct {
	PartitionKey string
	RowKey       string
	ETag         string
	First        string `table:",encrypt"`
	Last         string `table:",encrypt"`
	Email        string `table:",encrypt"`
	Level        int32  `table:",sign"`
	Dept         string
}

func personValue(rk string) person {
	return person{PartitionKey: "Sales", RowKey: rk, First: "Jonathan", Last: "Jones", Email: "jonesj@contoso.com", Level: 3, Dept: "Sales"}
}

// body is an entity body as a map, to change as an attacker with write
// access to the table could.
type body map[string]any

func parseBody(t testing.TB, b []byte) body {
	t.Helper()
	var m body
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m body) bytes(t testing.TB) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any(m))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (m body) binary(t testing.TB, name string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(m[name].(string))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (m body) setBinary(name string, b []byte) {
	m[name] = base64.StdEncoding.EncodeToString(b)
	m[name+"@odata.type"] = "Edm.Binary"
}

func (m body) clone() body {
	c := make(body, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// readErr decodes a changed body and returns the error, failing the test
// if the body was accepted.
func readErr[T any](t *testing.T, ct *crypt.Table[T], b []byte) error {
	t.Helper()
	var out T
	err := ct.Unmarshal(t.Context(), b, &out)
	if err == nil {
		t.Fatalf("a changed body was accepted: %+v", out)
	}
	if !errors.Is(err, entity.ErrDecode) {
		t.Fatalf("error %v does not match entity.ErrDecode", err)
	}
	return err
}

func wantKind(t *testing.T, err error, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("got %v, want %v", err, kind)
	}
	var re *crypt.ReadError
	if !errors.As(err, &re) || re.PartitionKey != "Sales" || re.Op != "Unmarshal" || !strings.HasPrefix(err.Error(), `crypt: Unmarshal of PartitionKey "Sales", RowKey `) {
		t.Fatalf("error %v is not a *ReadError naming Unmarshal and the entity", err)
	}
}

// TestTamperEveryByte changes every byte of every encrypted property and
// of the metadata, one at a time: each change is a typed error, by the
// region of the byte.
func TestTamperEveryByte(t *testing.T) {
	ct := newOffline[person](t, crypt.Config{})
	in := personValue("000123")
	raw, err := ct.Marshal(t.Context(), &in)
	if err != nil {
		t.Fatal(err)
	}
	orig := parseBody(t, raw)
	for _, prop := range []string{"First", "Last", "Email"} {
		ctb := orig.binary(t, prop)
		for i := range ctb {
			changed := bytes.Clone(ctb)
			changed[i] ^= 0x01
			m := orig.clone()
			m.setBinary(prop, changed)
			wantKind(t, readErr(t, ct, m.bytes(t)), crypt.ErrTampered)
		}
		// Cut short, and extended.
		for _, changed := range [][]byte{ctb[:len(ctb)-1], ctb[:10], append(bytes.Clone(ctb), 0)} {
			m := orig.clone()
			m.setBinary(prop, changed)
			wantKind(t, readErr(t, ct, m.bytes(t)), crypt.ErrTampered)
		}
	}
	meta := orig.binary(t, crypt.MetadataProperty)
	// Layout: version, algorithm, lp(key id "kek-1"), lp("A256KW"),
	// lp(40-byte wrapped key), the lists, nonce (12), tag (16).
	keyIDAt, wrappedAt := 3, 2+1+5+1+6+1
	listsAt := wrappedAt + 40
	sigAt := len(meta) - 28
	for i := range meta {
		changed := bytes.Clone(meta)
		changed[i] ^= 0x01
		m := orig.clone()
		m.setBinary(crypt.MetadataProperty, changed)
		err := readErr(t, ct, m.bytes(t))
		var want error
		switch {
		case i < 2:
			want = crypt.ErrMetadata // version, algorithm
		case i >= keyIDAt && i < keyIDAt+5:
			want = crypt.ErrUnknownKey
		case i >= wrappedAt && i < listsAt:
			want = crypt.ErrUnwrap
		case i >= sigAt:
			want = crypt.ErrTampered
		}
		if want != nil && !errors.Is(err, want) {
			t.Fatalf("metadata byte %d: got %v, want %v", i, err, want)
		}
		if want == nil && !errors.Is(err, crypt.ErrMetadata) && !errors.Is(err, crypt.ErrTampered) && !errors.Is(err, crypt.ErrUnwrap) {
			t.Fatalf("metadata byte %d: got %v", i, err)
		}
	}
	for n := range len(meta) {
		m := orig.clone()
		m.setBinary(crypt.MetadataProperty, meta[:n])
		err := readErr(t, ct, m.bytes(t))
		wantKind(t, err, crypt.ErrMetadata)
		// The reason names the field that is cut, once.
		if n > 2 && n < listsAt && (!strings.Contains(err.Error(), "truncated ") || strings.Contains(err.Error(), "list:")) {
			t.Errorf("metadata cut at %d: %v", n, err)
		}
	}
}

// TestSwaps moves ciphertexts between entities, properties and tables.
func TestSwaps(t *testing.T) {
	ctx := t.Context()
	ct := newOffline[person](t, crypt.Config{})
	a, b := personValue("000123"), personValue("000124")
	b.First, b.Email = "Ann", "ann@contoso.com"
	rawA, _ := ct.Marshal(ctx, &a)
	rawB, _ := ct.Marshal(ctx, &b)
	ma, mb := parseBody(t, rawA), parseBody(t, rawB)

	t.Run("property from another entity", func(t *testing.T) {
		m := mb.clone()
		m["First"] = ma["First"]
		wantKind(t, readErr(t, ct, m.bytes(t)), crypt.ErrTampered)
	})
	t.Run("two properties swapped", func(t *testing.T) {
		m := ma.clone()
		m["First"], m["Last"] = ma["Last"], ma["First"]
		wantKind(t, readErr(t, ct, m.bytes(t)), crypt.ErrTampered)
	})
	t.Run("whole entity under other keys", func(t *testing.T) {
		m := ma.clone()
		m["RowKey"] = "000124"
		wantKind(t, readErr(t, ct, m.bytes(t)), crypt.ErrTampered)
	})
	t.Run("metadata from another entity", func(t *testing.T) {
		m := mb.clone()
		m[crypt.MetadataProperty] = ma[crypt.MetadataProperty]
		readErr(t, ct, m.bytes(t))
	})
	t.Run("another table", func(t *testing.T) {
		other := newOffline[person](t, crypt.Config{Table: "Archive"})
		readErr(t, other, rawA)
		// Table names are case-insensitive on the service, and here too.
		same := newOffline[person](t, crypt.Config{Table: "EMPLOYEES"})
		var out person
		if err := same.Unmarshal(ctx, rawA, &out); err != nil || out != a {
			t.Fatalf("same table, other case: %v", err)
		}
	})
	t.Run("removed property", func(t *testing.T) {
		m := ma.clone()
		delete(m, "Email")
		delete(m, "Email@odata.type")
		wantKind(t, readErr(t, ct, m.bytes(t)), crypt.ErrTampered)
	})
	t.Run("signed value changed", func(t *testing.T) {
		m := ma.clone()
		m["Level"] = 9
		wantKind(t, readErr(t, ct, m.bytes(t)), crypt.ErrTampered)
	})
	t.Run("signed property removed", func(t *testing.T) {
		m := ma.clone()
		delete(m, "Level")
		wantKind(t, readErr(t, ct, m.bytes(t)), crypt.ErrTampered)
	})
	t.Run("clear property changed is allowed", func(t *testing.T) {
		m := ma.clone()
		m["Dept"] = "Marketing"
		var out person
		if err := ct.Unmarshal(ctx, m.bytes(t), &out); err != nil || out.Dept != "Marketing" || out.First != a.First {
			t.Fatalf("%+v %v", out, err)
		}
	})
	t.Run("stray reserved property is never read", func(t *testing.T) {
		// It matters only to a beacon filter, which refuses it
		// (TestBeaconQueryOnAzurite); a plain read skips it.
		m := ma.clone()
		m.setBinary(crypt.BeaconPrefix+"Email", make([]byte, 16))
		var out entity.DynamicEntity
		dyn := newOffline[entity.DynamicEntity](t, crypt.Config{Encrypt: func(_, _, n string) bool { return n != "Dept" && n != "Level" }, Sign: func(_, _, n string) bool { return n == "Level" }})
		if err := dyn.Unmarshal(ctx, m.bytes(t), &out); err != nil {
			t.Fatal(err)
		}
		if _, ok := out.Properties[crypt.BeaconPrefix+"Email"]; ok || out.Properties["Email"] != a.Email {
			t.Fatalf("%v", out.Properties)
		}
	})
	t.Run("metadata removed", func(t *testing.T) {
		m := ma.clone()
		delete(m, crypt.MetadataProperty)
		wantKind(t, readErr(t, ct, m.bytes(t)), crypt.ErrNotEncrypted)
	})
	t.Run("unknown key", func(t *testing.T) {
		other := newOffline[person](t, crypt.Config{Key: newLocalKey(t, "kek-2", 2)})
		wantKind(t, readErr(t, other, rawA), crypt.ErrUnknownKey)
		// The same id with other key material does not unwrap.
		impostor := newOffline[person](t, crypt.Config{Key: newLocalKey(t, "kek-1", 2)})
		wantKind(t, readErr(t, impostor, rawA), crypt.ErrUnwrap)
	})
}

// twins of person with other protections, for policy checks.
type personPlainFirst struct {
	PartitionKey, RowKey, ETag string
	First                      string
	Last                       string `table:",encrypt"`
	Email                      string `table:",encrypt"`
	Level                      int32  `table:",sign"`
	Dept                       string
}

type personUnsigned struct {
	PartitionKey, RowKey, ETag string
	First                      string `table:",encrypt"`
	Last                       string `table:",encrypt"`
	Email                      string `table:",encrypt"`
	Level                      int32
	Dept                       string
}

type personPlain struct {
	PartitionKey, RowKey, ETag string
	First, Last, Email         string
	Level                      int32
	Dept                       string
}

func TestPolicy(t *testing.T) {
	ctx := t.Context()
	ct := newOffline[person](t, crypt.Config{})
	a := personValue("000123")
	raw, _ := ct.Marshal(ctx, &a)

	// Stored encrypted, read by a type that has it in clear: a
	// read-modify-write would store it in clear.
	wantKind(t, readErr(t, newOffline[personPlainFirst](t, crypt.Config{}), raw), crypt.ErrPolicy)
	wantKind(t, readErr(t, newOffline[personUnsigned](t, crypt.Config{}), raw), crypt.ErrPolicy)
	// Stored in clear, read by a type that asks for encryption.
	pf := personPlainFirst{PartitionKey: "Sales", RowKey: "1", First: "J", Last: "J", Email: "e"}
	raw2, _ := newOffline[personPlainFirst](t, crypt.Config{}).Marshal(ctx, &pf)
	wantKind(t, readErr(t, ct, raw2), crypt.ErrPolicy)
	// Config.Encrypt counts as a tag.
	viaConfig := newOffline[personPlainFirst](t, crypt.Config{Encrypt: func(_, _, name string) bool { return name == "First" }})
	var out personPlainFirst
	if err := viaConfig.Unmarshal(ctx, raw, &out); err != nil || out.First != a.First {
		t.Fatalf("Config.Encrypt: %+v %v", out, err)
	}

	// A plaintext entity is refused, unless ReadPlaintext.
	plain, _ := entity.Marshal(&personPlain{PartitionKey: "Sales", RowKey: "9", First: "J", Last: "K", Email: "e", Level: 1})
	wantKind(t, readErr(t, ct, plain), crypt.ErrNotEncrypted)
	migrating := newOffline[person](t, crypt.Config{ReadPlaintext: true})
	var p person
	if err := migrating.Unmarshal(ctx, plain, &p); err != nil || p.First != "J" || p.Level != 1 {
		t.Fatalf("ReadPlaintext: %+v %v", p, err)
	}
	// The plain codec refuses protected types both ways.
	if _, err := entity.Marshal(&a); !errors.Is(err, entity.ErrInvalidType) {
		t.Fatalf("entity.Marshal of a protected type: %v", err)
	}
	if err := entity.Unmarshal(raw, &p); !errors.Is(err, entity.ErrInvalidType) {
		t.Fatalf("entity.Unmarshal of a protected type: %v", err)
	}
}

type badTags struct {
	PartitionKey string `table:",pk,encrypt"`
	RowKey       string
}

type bothTags struct {
	PartitionKey, RowKey string
	X                    string `table:",encrypt,sign"`
}

type reservedField struct {
	PartitionKey, RowKey string
	X                    string `table:"_tkX"`
}

func TestNewRefuses(t *testing.T) {
	key := newLocalKey(t, "k", 1)
	if _, err := entity.Marshal(&badTags{}); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("encrypt on a key: %v", err)
	}
	if _, err := entity.Marshal(&bothTags{}); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("encrypt and sign: %v", err)
	}
	// A Config that cannot work: TestConfigErrors.
	if _, err := crypt.New(offlineTable[reservedField](t), crypt.Config{Key: key, Table: "t"}); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("a reserved property name: %v", err)
	}
}

// TestMergeRefused: every merge path fails with ErrMerge before a request
// (the offline client would fail with a network error otherwise).
func TestMergeRefused(t *testing.T) {
	ctx := t.Context()
	ct := newOffline[person](t, crypt.Config{})
	e := personValue("1")
	e.ETag = "W/\"x\""
	checks := map[string]error{
		"Update":    ct.Update(ctx, &e, entity.Merge),
		"UpdateAny": ct.UpdateAny(ctx, &e, entity.Merge),
		"Upsert":    ct.Upsert(ctx, &e, entity.Merge),
	}
	_, checks["Modify"] = ct.Modify(ctx, "Sales", "1", func(*person) error { return nil }, entity.ModifyOptions{Mode: entity.Merge})
	_, checks["BulkWrite"] = ct.BulkWrite(ctx, []person{e}, entity.BulkOptions{Mode: entity.OpUpsertMerge})
	_, checks["Batch Merge"] = ct.Submit(ctx, ct.NewBatch().Insert(&e).Update(&e, entity.Merge))
	_, checks["Batch UpsertMerge"] = ct.Submit(ctx, ct.NewBatch().Upsert(&e, entity.Merge))
	for name, err := range checks {
		if !errors.Is(err, crypt.ErrMerge) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: %v, want ErrMerge", name, err)
		}
	}
	var be *entity.BatchError
	if _, err := ct.Submit(ctx, ct.NewBatch().Insert(&e).Update(&e, entity.Merge)); !errors.As(err, &be) || be.Index != 1 {
		t.Errorf("batch error %v does not name operation 1", err)
	}
}

// TestLimitsCountMetadata: the metadata property counts in the property
// count and the entity size, and ciphertext in the Binary limit.
func TestLimitsCountMetadata(t *testing.T) {
	ctx := t.Context()
	ct := newOffline[entity.DynamicEntity](t, crypt.Config{Encrypt: func(_, _, n string) bool { return strings.HasPrefix(n, "E") }})
	full := entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}
	for i := range entity.MaxUserProperties {
		full.Set(fmt.Sprintf("P%03d", i), int32(i))
	}
	if _, err := entity.Marshal(&full); err != nil {
		t.Fatalf("252 properties in clear: %v", err)
	}
	var ve *entity.ValidationError
	if _, err := ct.Marshal(ctx, &full); !errors.As(err, &ve) || ve.Rule != entity.RulePropertyCount {
		t.Fatalf("252 properties and the metadata: %v, want a property-count error", err)
	}
	// 16 binaries that fit 1 MiB in clear, not once encrypted.
	big := entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}
	for i := range 16 {
		big.Set(fmt.Sprintf("E%d", i), make([]byte, entity.MaxBinaryBytes-30))
	}
	if _, err := entity.Marshal(&big); err != nil {
		t.Fatalf("in clear: %v", err)
	}
	if _, err := ct.Marshal(ctx, &big); !errors.As(err, &ve) || ve.Rule != entity.RuleEntitySize {
		t.Fatalf("encrypted: %v, want an entity-size error", err)
	}
	// A string at the service's limit that does not fit a Binary once
	// encrypted (3 bytes of UTF-8 per UTF-16 unit).
	wide := entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}
	wide.Set("E", strings.Repeat("€", entity.MaxStringUnits))
	if _, err := ct.Marshal(ctx, &wide); !errors.As(err, &ve) || ve.Rule != entity.RuleBinaryLength || ve.Property != "E" {
		t.Fatalf("wide string: %v, want a binary-length error on E", err)
	}
}

type beaconed struct {
	PartitionKey, RowKey string
	Email                string `table:",encrypt"`
	Age                  int32  `table:",encrypt"`
	Secret               string `table:",encrypt"`
	Level                int32  `table:",sign"`
}

func TestFilterRewrite(t *testing.T) {
	ctx := t.Context()
	ct := newOffline[beaconed](t, crypt.Config{Beacons: []string{"Email", "Age"}, BeaconKey: bytes.Repeat([]byte{3}, 32)})
	refused := []filter.Expr{
		filter.PK("p").And(filter.Eq("Secret", "x")),
		filter.PK("p").And(filter.Not(filter.Eq("Secret", "x"))),
		filter.PK("p").And(filter.Gt("Email", "a")),
		filter.PK("p").And(filter.Eq("Age", 38)), // an Int64 literal for an Int32 property
		filter.PK("p").And(filter.Eq("_tkEnc", "x")),
	}
	for _, f := range refused {
		_, err := ct.QueryPage(ctx, entity.Query{Filter: f}, "")
		if !errors.Is(err, crypt.ErrEncryptedFilter) || !errors.Is(err, filter.ErrInvalidFilter) || !errors.Is(err, entity.ErrInvalid) {
			s, _ := f.Build()
			t.Errorf("%s: %v, want ErrEncryptedFilter", s, err)
		}
	}
	// The beacon of a value is the same whatever entity holds it, and
	// differs between values and between properties.
	a := beaconed{PartitionKey: "p", RowKey: "1", Email: "jones@contoso.com", Age: 38}
	b := beaconed{PartitionKey: "q", RowKey: "2", Email: "jones@contoso.com", Age: 39}
	ra, _ := ct.Marshal(ctx, &a)
	rb, _ := ct.Marshal(ctx, &b)
	ba, bb := parseBody(t, ra), parseBody(t, rb)
	if ba["_tkEq_Email"] != bb["_tkEq_Email"] || ba["_tkEq_Age"] == bb["_tkEq_Age"] {
		t.Fatal("beacons do not follow equality")
	}
	if _, ok := ba["_tkEq_Secret"]; ok {
		t.Fatal("a beacon for a property not listed in Config.Beacons")
	}
	beacon, _ := base64.StdEncoding.DecodeString(ba["_tkEq_Email"].(string))
	want := fmt.Sprintf("_tkEq_Email eq X'%x'", beacon)
	cases := map[string]filter.Expr{
		want:                                 filter.Eq("Email", "jones@contoso.com"),
		strings.Replace(want, "eq", "ne", 1): filter.Ne("Email", "jones@contoso.com"),
		"Level ge 2":                         filter.Ge("Level", int32(2)), // signed: in clear
	}
	for wantSub, f := range cases {
		// The rewritten filter is what the service is asked: check it
		// through a Table that records nothing but builds the query.
		got, err := crypt.RewriteFilter(ct, f)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := got.Build()
		if !strings.Contains(s, wantSub) {
			t.Errorf("rewritten %q, want it to contain %q", s, wantSub)
		}
	}
}
