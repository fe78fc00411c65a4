package filter

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

type celsius float64
type celsius32 float32
type label string
type code struct{ s string }

func (c code) MarshalText() ([]byte, error) { return []byte("C-" + c.s), nil }

type ptrText struct{ s string }

func (p *ptrText) MarshalText() ([]byte, error) { return []byte("P-" + p.s), nil }

type failText struct{}

func (failText) MarshalText() ([]byte, error) { return nil, errors.New("boom") }

func TestBuildTypes(t *testing.T) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC)
	est := time.FixedZone("EST", -5*3600)
	g := uuid.MustParse("6F9619FF-8B86-D011-B42D-00C04FC964FF")
	s, i := "x", int64(7)
	cases := []struct {
		name string
		e    Expr
		want string
	}{
		{"string", Eq("Name", "Bob"), "Name eq 'Bob'"},
		{"string quote", Eq("Name", "O'Brien"), "Name eq 'O''Brien'"},
		{"string only quotes", Eq("Name", "''"), "Name eq ''''''"},
		{"empty string", Eq("Name", ""), "Name eq ''"},
		{"unicode", Eq("Name", "Zoë 日本 🎉"), "Name eq 'Zoë 日本 🎉'"},
		{"control chars kept", Eq("Name", "a\x00b\tc\nd\x7f"), "Name eq 'a\x00b\tc\nd\x7f'"},
		{"int is Int64", Eq("N", 123), "N eq 123L"},
		{"int64", Eq("N", int64(-9223372036854775808)), "N eq -9223372036854775808L"},
		{"int32", Eq("N", int32(-5)), "N eq -5"},
		{"int16", Eq("N", int16(300)), "N eq 300"},
		{"int8", Eq("N", int8(-1)), "N eq -1"},
		{"uint8", Eq("N", uint8(255)), "N eq 255"},
		{"uint16", Eq("N", uint16(65535)), "N eq 65535"},
		{"uint32 is Int64", Eq("N", uint32(4294967295)), "N eq 4294967295L"},
		{"uint", Eq("N", uint(5)), "N eq 5L"},
		{"uint64 max int64", Eq("N", uint64(math.MaxInt64)), "N eq 9223372036854775807L"},
		{"typed Int32", Eq("N", Int32(2147483647)), "N eq 2147483647"},
		{"typed Int64", Eq("N", Int64(2)), "N eq 2L"},
		{"double whole", Eq("D", 2.0), "D eq 2.0"},
		{"double zero", Eq("D", 0.0), "D eq 0.0"},
		{"double negative zero", Eq("D", math.Copysign(0, -1)), "D eq -0.0"},
		{"double fraction", Eq("D", 0.1), "D eq 0.1"},
		{"double negative", Eq("D", -2.5), "D eq -2.5"},
		{"double large whole", Eq("D", 1e21), "D eq 1000000000000000000000.0"},
		{"double small", Eq("D", 1e-7), "D eq 0.0000001"},
		{"double max int53", Eq("D", float64(1<<53)), "D eq 9007199254740992.0"},
		{"float32", Eq("D", float32(0.5)), "D eq 0.5"},
		{"float32 shortest digits, as the codec writes them", Eq("D", float32(0.1)), "D eq 0.1"},
		{"float32 whole", Eq("D", float32(3)), "D eq 3.0"},
		{"float32 max", Eq("D", float32(math.MaxFloat32)), "D eq 340282350000000000000000000000000000000.0"},
		{"named float32", Eq("D", celsius32(-1.25)), "D eq -1.25"},
		{"pointer float32", Eq("D", &[]float32{0.3}[0]), "D eq 0.3"},
		{"named float", Eq("D", celsius(21)), "D eq 21.0"},
		{"typed Double", Eq("D", Double(3)), "D eq 3.0"},
		{"bool true", Eq("B", true), "B eq true"},
		{"bool false", Eq("B", Bool(false)), "B eq false"},
		{"time utc", Eq("T", ts), "T eq datetime'2024-01-02T03:04:05.1234567Z'"},
		{"time zone converted", Eq("T", time.Date(2024, 1, 1, 22, 0, 0, 0, est)), "T eq datetime'2024-01-02T03:00:00.0000000Z'"},
		{"time whole second", Eq("T", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)), "T eq datetime'2024-01-02T03:04:05.0000000Z'"},
		{"time 100ns truncated", Eq("T", time.Date(2024, 1, 2, 3, 4, 5, 99, time.UTC)), "T eq datetime'2024-01-02T03:04:05.0000000Z'"},
		{"time min year", Eq("T", time.Time{}), "T eq datetime'0001-01-01T00:00:00.0000000Z'"},
		{"guid", Eq("G", g), "G eq guid'6f9619ff-8b86-d011-b42d-00c04fc964ff'"},
		{"guid typed", Eq("G", GUID(uuid.Nil)), "G eq guid'00000000-0000-0000-0000-000000000000'"},
		{"binary", Eq("Bin", []byte{0x0a, 0xff}), "Bin eq X'0aff'"},
		{"binary empty", Eq("Bin", []byte{}), "Bin eq X''"},
		{"binary nil slice", Eq("Bin", []byte(nil)), "Bin eq X''"},
		{"named string", Eq("L", label("x'y")), "L eq 'x''y'"},
		{"text marshaler", Eq("C", code{"a'b"}), "C eq 'C-a''b'"},
		{"pointer text marshaler", Eq("C", &ptrText{"z"}), "C eq 'P-z'"},
		{"addressable pointer-receiver marshaler", Eq("C", ptrText{"v"}), "C eq 'P-v'"},
		{"pointer deref", Eq("S", &s), "S eq 'x'"},
		{"pointer int64", Eq("N", &i), "N eq 7L"},
		{"pointer to time", Eq("T", &ts), "T eq datetime'2024-01-02T03:04:05.1234567Z'"},
		{"pointer to value", Eq("N", &[]Value{Int32(1)}[0]), "N eq 1"},
		{"underscore name", Eq("_x1", 1), "_x1 eq 1L"},
		{"unicode name", Eq("Größe", 1), "Größe eq 1L"},
		{"keyword-like name", Eq("andy", 1), "andy eq 1L"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.e.Build()
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if got != c.want {
				t.Fatalf("Build = %q, want %q", got, c.want)
			}
		})
	}
}

func TestBuildOperators(t *testing.T) {
	cases := []struct {
		e    Expr
		want string
	}{
		{Eq("A", 1), "A eq 1L"},
		{Ne("A", 1), "A ne 1L"},
		{Gt("A", 1), "A gt 1L"},
		{Ge("A", 1), "A ge 1L"},
		{Lt("A", 1), "A lt 1L"},
		{Le("A", 1), "A le 1L"},
		{Compare("A", OpGe, "x"), "A ge 'x'"},
		{PK("Sales"), "PartitionKey eq 'Sales'"},
		{RK("2"), "RowKey eq '2'"},
		{PK("Sales").And(RK("2")), "PartitionKey eq 'Sales' and RowKey eq '2'"},
		{RowKeyRange("S", "T"), "RowKey ge 'S' and RowKey lt 'T'"},
		{PK("a").And(RowKeyRange("S", "T")), "PartitionKey eq 'a' and RowKey ge 'S' and RowKey lt 'T'"},
		{RowKeyPrefix("empid_"), "RowKey ge 'empid_' and RowKey lt 'empid`'"},
		{RowKeyPrefix(""), "RowKey ge ''"},
		{RowKeyPrefix("a'"), "RowKey ge 'a''' and RowKey lt 'a('"},
		{RowKeyPrefix("\uffff"), "RowKey ge '\uffff'"},
		{RowKeyPrefix("a\uffff"), "RowKey ge 'a\uffff' and RowKey lt 'b'"},
		{RowKeyPrefix("a\U0010FFFF"), "RowKey ge 'a\U0010FFFF' and RowKey lt 'a\ue000'"},
		{RowKeyPrefix("a\ud7ff"), "RowKey ge 'a\ud7ff' and RowKey lt 'a\U00010000'"},
	}
	for _, c := range cases {
		got, err := c.e.Build()
		if err != nil || got != c.want {
			t.Errorf("Build = %q, %v; want %q", got, err, c.want)
		}
	}
}

func TestBuildBoolean(t *testing.T) {
	a, b, c, d := Eq("A", 1), Eq("B", 2), Eq("C", 3), Eq("D", 4)
	cases := []struct {
		name string
		e    Expr
		want string
	}{
		{"and", And(a, b), "A eq 1L and B eq 2L"},
		{"and flattens", And(And(a, b), c), "A eq 1L and B eq 2L and C eq 3L"},
		{"method and", a.And(b, c), "A eq 1L and B eq 2L and C eq 3L"},
		{"or", Or(a, b), "A eq 1L or B eq 2L"},
		{"or flattens", a.Or(b).Or(c), "A eq 1L or B eq 2L or C eq 3L"},
		{"or inside and", a.And(b.Or(c)), "A eq 1L and (B eq 2L or C eq 3L)"},
		{"and inside or", a.And(b).Or(c.And(d)), "(A eq 1L and B eq 2L) or (C eq 3L and D eq 4L)"},
		{"or of or inside and", And(Or(a, b), Or(c, d)), "(A eq 1L or B eq 2L) and (C eq 3L or D eq 4L)"},
		{"not cmp", Not(a), "not (A eq 1L)"},
		{"not method", a.Not(), "not (A eq 1L)"},
		{"not and", Not(a.And(b)), "not (A eq 1L and B eq 2L)"},
		{"not not", Not(Not(a)), "A eq 1L"},
		{"and not", a.And(Not(b.Or(c))), "A eq 1L and not (B eq 2L or C eq 3L)"},
		{"not inside or", Or(Not(a), b), "not (A eq 1L) or B eq 2L"},
		{"single and", And(a), "A eq 1L"},
		{"empty skipped and", And(Expr{}, a, Expr{}), "A eq 1L"},
		{"empty skipped or", Or(Expr{}, a), "A eq 1L"},
		{"empty method", Expr{}.And(a), "A eq 1L"},
		{"all empty", And(Expr{}, Expr{}), ""},
		{"none", Or(), ""},
		{"zero", Expr{}, ""},
		{"deep", And(a, Or(b, And(c, Not(Or(d, a))))), "A eq 1L and (B eq 2L or (C eq 3L and not (D eq 4L or A eq 1L)))"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.e.Build()
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if got != c.want {
				t.Fatalf("Build = %q, want %q", got, c.want)
			}
		})
	}
}

func TestImmutable(t *testing.T) {
	a := Eq("A", 1).And(Eq("B", 2))
	before, _ := a.Build()
	_ = a.And(Eq("C", 3))
	_ = a.Or(Eq("D", 4))
	_ = a.Not()
	x := And(a, Eq("E", 5))
	_ = And(x, Eq("F", 6))
	_ = And(x, Eq("G", 7))
	if after, _ := a.Build(); after != before {
		t.Fatalf("operand changed: %q -> %q", before, after)
	}
	// Two extensions of one shared prefix must not see each other.
	f, _ := And(x, Eq("F", 6)).Build()
	g, _ := And(x, Eq("G", 7)).Build()
	if f != "A eq 1L and B eq 2L and E eq 5L and F eq 6L" || g != "A eq 1L and B eq 2L and E eq 5L and G eq 7L" {
		t.Fatalf("shared prefix leaked: %q / %q", f, g)
	}
}

// TestInjection renders hostile values and asserts the exact output: the
// payload stays inside one string literal and the filter keeps one comparison.
func TestInjection(t *testing.T) {
	cases := []struct {
		payload string
		want    string
	}{
		{`' or 1 eq 1 or '`, `Name eq ''' or 1 eq 1 or '''`},
		{`') or (RowKey ne '`, `Name eq ''') or (RowKey ne '''`},
		{`x' or PartitionKey ne 'x`, `Name eq 'x'' or PartitionKey ne ''x'`},
		{`'`, `Name eq ''''`},
		{`''`, `Name eq ''''''`},
		{`'''`, `Name eq ''''''''`},
		{`\'`, `Name eq '\'''`},
		{`"`, `Name eq '"'`},
		{`" or "a" eq "a`, `Name eq '" or "a" eq "a'`},
		{"a\x00' or true or '", "Name eq 'a\x00'' or true or '''"},
		{"\u2019 or 1 eq 1", "Name eq '\u2019 or 1 eq 1'"}, // right single quotation mark is not a quote
		{"%27 or 1 eq 1", "Name eq '%27 or 1 eq 1'"},       // URL encoding is the SDK's job
		{"\r\n' or '", "Name eq '\r\n'' or '''"},
	}
	for _, c := range cases {
		got, err := Eq("Name", c.payload).Build()
		if err != nil {
			t.Fatalf("%q: %v", c.payload, err)
		}
		if got != c.want {
			t.Errorf("payload %q:\n got %s\nwant %s", c.payload, got, c.want)
		}
		toks, err := tokenize(got)
		if err != nil {
			t.Fatalf("tokenize %q: %v", got, err)
		}
		if len(toks) != 3 || toks[2].kind != tokString || toks[2].text != c.payload {
			t.Errorf("payload %q: tokens %+v, want Name eq <payload>", c.payload, toks)
		}
	}
	// Injection through the value of a key helper.
	got, _ := PK(`a' or PartitionKey ne '`).And(RK("x")).Build()
	if want := `PartitionKey eq 'a'' or PartitionKey ne ''' and RowKey eq 'x'`; got != want {
		t.Errorf("PK injection: got %s want %s", got, want)
	}
	if p := PK(`a' or PartitionKey ne '`).And(RK("x")).Plan(); p.Kind != Point || p.PartitionKey != `a' or PartitionKey ne '` {
		t.Errorf("PK injection plan: %+v", p)
	}
}

func TestInvalid(t *testing.T) {
	long := strings.Repeat("a", 256)
	cases := []struct {
		name, prop, reason string
		e                  Expr
	}{
		{"empty name", "", "empty property name", Eq("", 1)},
		{"space in name", "a b", "not allowed", Eq("a b", 1)},
		{"injection in name", "x eq 'a' or 1", "not allowed", Eq("x eq 'a' or 1", 1)},
		{"paren in name", "a)", "not allowed", Eq("a)", 1)},
		{"quote in name", "a'", "not allowed", Eq("a'", 1)},
		{"digit first", "1a", "start with a letter", Eq("1a", 1)},
		{"dash", "a-b", "not allowed", Eq("a-b", 1)},
		{"dot", "a.b", "not allowed", Eq("a.b", 1)},
		{"slash", "a/b", "not allowed", Eq("a/b", 1)},
		{"BOM inside", "a\ufeffor", "cannot reference", Eq("a\ufeffor", 1)},
		{"bidi override", "a\u202eb", "not allowed", Eq("a\u202eb", 1)},
		{"nbsp", "a\u00a0b", "not allowed", Eq("a\u00a0b", 1)},
		{"too long", long, "longer than 255", Eq(long, 1)},
		{"invalid utf8 name", "a\xff", "not valid UTF-8", Eq("a\xff", 1)},
		{"keyword true", "true", "OData keyword", Eq("true", true)},
		{"keyword and upper", "AND", "OData keyword", Eq("AND", 1)},
		{"keyword not", "not", "OData keyword", Eq("not", 1)},
		{"keyword inf", "inf", "OData keyword", Eq("inf", 1.0)},
		{"keyword null", "Null", "OData keyword", Eq("Null", 1)},
		{"NaN", "D", "NaN", Eq("D", math.NaN())},
		{"+Inf", "D", "infinite", Eq("D", math.Inf(1))},
		{"-Inf float32", "D", "infinite", Eq("D", float32(math.Inf(-1)))},
		{"uint64 overflow", "N", "does not fit", Eq("N", uint64(math.MaxUint64))},
		{"uint overflow", "N", "does not fit", Eq("N", uint(math.MaxInt64)+1)},
		{"invalid utf8 value", "S", "not valid UTF-8", Eq("S", "a\xffb")},
		{"nil", "S", "no null literal", Eq("S", nil)},
		{"nil pointer", "S", "no null literal", Eq("S", (*string)(nil))},
		{"struct", "S", "no EDM literal", Eq("S", struct{}{})},
		{"map", "S", "no EDM literal", Eq("S", map[string]int{})},
		{"string slice", "S", "no EDM literal", Eq("S", []string{"a"})},
		{"byte array", "S", "no EDM literal", Eq("S", [2]byte{1, 2})},
		{"complex", "S", "no EDM literal", Eq("S", 1i)},
		{"year 0", "T", "outside 0001-9999", Eq("T", time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC))},
		{"year 10000", "T", "outside 0001-9999", Eq("T", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))},
		{"year 9999 in a zone becomes 10000", "T", "outside 0001-9999", Eq("T", time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("W", -3600)))},
		{"zero Value", "V", "zero Value", Eq("V", Value{})},
		{"bad op", "A", "unknown comparison operator", Compare("A", Op(99), 1)},
		{"zero op", "A", "unknown comparison operator", Compare("A", 0, 1)},
		{"marshal text fails", "C", "MarshalText failed", Eq("C", failText{})},
		{"not empty", "", "not of an empty expression", Not(Expr{})},
		{"error deep inside", "D", "NaN", Eq("A", 1).And(Eq("B", 2).Or(Not(Eq("D", math.NaN()))))},
		{"first error wins", "bad name", "not allowed", Eq("bad name", 1).And(Eq("D", math.NaN()))},
		{"prefix invalid utf8", "RowKey", "not valid UTF-8", RowKeyPrefix("\xff")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.e.Build()
			if err == nil {
				t.Fatalf("Build = %q, want error", s)
			}
			if s != "" {
				t.Errorf("Build returned %q with the error", s)
			}
			if !errors.Is(err, ErrInvalidFilter) {
				t.Errorf("errors.Is(%v, ErrInvalidFilter) = false", err)
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("errors.As *Error failed: %T", err)
			}
			if fe.Property != c.prop {
				t.Errorf("Property = %q, want %q", fe.Property, c.prop)
			}
			if !strings.Contains(fe.Reason, c.reason) {
				t.Errorf("Reason = %q, want it to contain %q", fe.Reason, c.reason)
			}
			if !strings.HasPrefix(err.Error(), "filter: invalid filter: ") {
				t.Errorf("message %q", err.Error())
			}
			if p := c.e.Plan(); !p.Has(WarnInvalid) {
				t.Errorf("Plan lacks WarnInvalid: %+v", p)
			}
		})
	}
}

func TestNameLimits(t *testing.T) {
	ok := []string{
		strings.Repeat("a", 255),
		"_",
		"a1_2",
		"x\u0301",                             // combining mark after a letter
		"a\u203fb",                            // connector punctuation (undertie)
		"Ⅻ",                                   // letter number
		strings.Repeat("日", 255),              // 255 BMP characters
		strings.Repeat("𝐀", 127) + "a",        // 254 + 1 UTF-16 units
		"PartitionKey", "RowKey", "Timestamp", // system properties are filterable
		"X", "datetime", "guid", "binary", // type prefixes are harmless: a space always follows the name
	}
	for _, n := range ok {
		if r := checkName(n); r != "" {
			t.Errorf("checkName(%q) = %q, want ok", n, r)
		}
	}
	bad := []string{
		strings.Repeat("𝐀", 128), // 256 UTF-16 units
		"\u0301x",                // combining mark first
		"a b", "a\tb", "a\nb", "(", "'", "a=b", "$filter", "@a",
	}
	for _, n := range bad {
		if r := checkName(n); r == "" {
			t.Errorf("checkName(%q) ok, want refused", n)
		}
	}
}

func TestValueLiteral(t *testing.T) {
	lit, err := String("it's").Literal()
	if err != nil || lit != "'it''s'" {
		t.Fatalf("Literal = %q, %v", lit, err)
	}
	if String("x").EDMType() != "Edm.String" || Int64(1).EDMType() != "Edm.Int64" ||
		Int32(1).EDMType() != "Edm.Int32" || Double(1).EDMType() != "Edm.Double" ||
		Bool(true).EDMType() != "Edm.Boolean" || Time(time.Now()).EDMType() != "Edm.DateTime" ||
		GUID(uuid.Nil).EDMType() != "Edm.Guid" || Binary(nil).EDMType() != "Edm.Binary" ||
		(Value{}).EDMType() != "" {
		t.Fatal("EDMType mismatch")
	}
	if _, err := Double(math.NaN()).Literal(); !errors.Is(err, ErrInvalidFilter) {
		t.Fatalf("NaN literal error = %v", err)
	}
	if _, err := (Value{}).Literal(); !errors.Is(err, ErrInvalidFilter) {
		t.Fatalf("zero Value literal error = %v", err)
	}
	if ValueOf(Int32(5)) != Int32(5) {
		t.Fatal("ValueOf(Value) must return it unchanged")
	}
}

// TestDoubleRoundTrip: every finite double renders in plain decimal with a
// point and parses back to the same bits.
func TestDoubleRoundTrip(t *testing.T) {
	vals := []float64{0, 1, -1, 2, 0.1, 1.5, 1e15, 1e16, 1e17, 1e21, 1e22, 1e-5, 1e-7,
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, math.MaxInt64, math.Pi}
	for _, v := range vals {
		lit, err := Double(v).Literal()
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		if strings.ContainsAny(lit, "eE+") || !strings.Contains(lit, ".") {
			t.Errorf("%v renders as %q: want plain decimal with a point", v, lit)
		}
		back, err := parseDouble(lit)
		if err != nil || back != v {
			t.Errorf("%v -> %q -> %v (%v)", v, lit, back, err)
		}
	}
}
