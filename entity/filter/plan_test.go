package filter

import (
	"reflect"
	"testing"
)

func codes(p Plan) []WarningCode {
	var cs []WarningCode
	for _, w := range p.Warnings {
		cs = append(cs, w.Code)
	}
	return cs
}

func TestPlan(t *testing.T) {
	pk, rk := PK, RK
	active := Eq("Active", true)
	type want struct {
		kind     Kind
		pk, rk   string
		from, to *Bound
		warns    []WarningCode
	}
	incl := func(v string) *Bound { return &Bound{Value: v, Inclusive: true} }
	excl := func(v string) *Bound { return &Bound{Value: v} }
	cases := []struct {
		name string
		e    Expr
		w    want
	}{
		// Point.
		{"point", pk("Sales").And(rk("2")), want{kind: Point, pk: "Sales", rk: "2"}},
		{"point reversed", rk("2").And(pk("Sales")), want{kind: Point, pk: "Sales", rk: "2"}},
		{"point with residual", pk("a").And(rk("x"), active), want{kind: Point, pk: "a", rk: "x"}},
		{"point via not ne", Not(Ne("PartitionKey", "a")).And(Not(Ne("RowKey", "x"))), want{kind: Point, pk: "a", rk: "x"}},
		{"point inside range", pk("a").And(rk("m"), RowKeyRange("a", "z")), want{kind: Point, pk: "a", rk: "m", from: nil}},
		{"empty partition key", pk("").And(rk("")), want{kind: Point, pk: "", rk: ""}},

		// Range.
		{"range", pk("a").And(RowKeyRange("S", "T")), want{kind: Range, pk: "a", from: incl("S"), to: excl("T")}},
		{"prefix", pk("a").And(RowKeyPrefix("emp_")), want{kind: Range, pk: "a", from: incl("emp_"), to: excl("emp`")}},
		{"lower only", pk("a").And(Gt("RowKey", "k")), want{kind: Range, pk: "a", from: excl("k")}},
		{"upper only", pk("a").And(Le("RowKey", "k")), want{kind: Range, pk: "a", to: incl("k")}},
		{"range with residual", pk("a").And(RowKeyRange("S", "T"), active), want{kind: Range, pk: "a", from: incl("S"), to: excl("T")}},
		{"tightest bounds", pk("a").And(Ge("RowKey", "b"), Gt("RowKey", "c"), Gt("RowKey", "b"), Le("RowKey", "y"), Lt("RowKey", "x")),
			want{kind: Range, pk: "a", from: excl("c"), to: excl("x")}},
		{"equal bounds strict wins", pk("a").And(Ge("RowKey", "c"), Gt("RowKey", "c"), Le("RowKey", "x"), Lt("RowKey", "x")),
			want{kind: Range, pk: "a", from: excl("c"), to: excl("x")}},
		{"not of range bound", pk("a").And(Not(Lt("RowKey", "k"))), want{kind: Range, pk: "a", from: incl("k")}},
		{"utf16 order for bounds", pk("a").And(Ge("RowKey", "\U00010000"), Ge("RowKey", "\uE000")),
			want{kind: Range, pk: "a", from: incl("\uE000")}},
		{"range plus or over rowkeys stays range", pk("a").And(RowKeyRange("a", "m"), Or(rk("b"), rk("c"))),
			want{kind: Range, pk: "a", from: incl("a"), to: excl("m")}},

		// Partition scan.
		{"pk only", pk("a"), want{kind: PartitionScan, pk: "a"}},
		{"pk and property", pk("a").And(Gt("Age", 30)), want{kind: PartitionScan, pk: "a"}},
		{"rowkey ne", pk("a").And(Ne("RowKey", "x")), want{kind: PartitionScan, pk: "a"}},
		{"empty prefix", pk("a").And(RowKeyPrefix("")), want{kind: PartitionScan, pk: "a"}},
		{"or over rowkeys", pk("a").And(rk("x").Or(rk("y"))), want{kind: PartitionScan, pk: "a", warns: []WarningCode{WarnOrOverRowKeys}}},
		{"or over ranges", pk("a").And(RowKeyRange("a", "b").Or(RowKeyRange("x", "y"))), want{kind: PartitionScan, pk: "a", warns: []WarningCode{WarnOrOverRowKeys}}},
		{"or of points in one partition", pk("a").And(rk("x")).Or(pk("a").And(rk("y"))),
			want{kind: PartitionScan, pk: "a", warns: []WarningCode{WarnOrOverRowKeys}}},
		{"or over properties", pk("a").And(Eq("C", 1).Or(Eq("C", 2))), want{kind: PartitionScan, pk: "a"}},
		{"rowkey typed non-string", pk("a").And(Eq("RowKey", 5)), want{kind: PartitionScan, pk: "a"}},
		{"not of or over rowkeys", pk("a").And(Not(rk("x").Or(rk("y")))), want{kind: PartitionScan, pk: "a"}},

		// Table scan.
		{"empty", Expr{}, want{kind: TableScan, warns: []WarningCode{WarnTableScan}}},
		{"property only", Eq("Age", 3), want{kind: TableScan, warns: []WarningCode{WarnTableScan}}},
		{"rowkey only", rk("x"), want{kind: TableScan, warns: []WarningCode{WarnTableScan}}},
		{"pk or rowkey", pk("a").Or(rk("b")), want{kind: TableScan, warns: []WarningCode{WarnTableScan}}},
		{"pk or property", pk("a").Or(active), want{kind: TableScan, warns: []WarningCode{WarnTableScan}}},
		{"pk ne", Ne("PartitionKey", "a"), want{kind: TableScan, warns: []WarningCode{WarnTableScan}}},
		{"not pk", Not(pk("a")), want{kind: TableScan, warns: []WarningCode{WarnTableScan}}},
		{"not of pk and rk", Not(pk("a").And(rk("x"))), want{kind: TableScan, warns: []WarningCode{WarnTableScan}}},
		{"pk typed non-string", Eq("PartitionKey", 1), want{kind: TableScan, warns: []WarningCode{WarnTableScan}}},
		{"pk range", Ge("PartitionKey", "a").And(Lt("PartitionKey", "b")),
			want{kind: TableScan, warns: []WarningCode{WarnTableScan, WarnPartitionKeyRange}}},
		{"points in two partitions", pk("a").And(rk("x")).Or(pk("b").And(rk("y"))),
			want{kind: TableScan, warns: []WarningCode{WarnTableScan, WarnOrOverPartitions}}},
		{"partitions", pk("a").Or(pk("b")), want{kind: TableScan, warns: []WarningCode{WarnTableScan, WarnOrOverPartitions}}},
		{"or over partitions with a rowkey in one", pk("a").And(rk("x")).Or(pk("b")),
			want{kind: TableScan, warns: []WarningCode{WarnTableScan, WarnOrOverPartitions}}},

		// Unsatisfiable.
		{"two pks", pk("a").And(pk("b")), want{kind: PartitionScan, pk: "a", warns: []WarningCode{WarnUnsatisfiable}}},
		{"same pk twice", pk("a").And(pk("a")), want{kind: PartitionScan, pk: "a"}},
		{"two rks", pk("a").And(rk("x"), rk("y")), want{kind: Point, pk: "a", rk: "x", warns: []WarningCode{WarnUnsatisfiable}}},
		{"rk outside range", pk("a").And(rk("z"), RowKeyRange("a", "m")), want{kind: Point, pk: "a", rk: "z", warns: []WarningCode{WarnUnsatisfiable}}},
		{"rk at open end", pk("a").And(rk("m"), RowKeyRange("a", "m")), want{kind: Point, pk: "a", rk: "m", warns: []WarningCode{WarnUnsatisfiable}}},
		{"rk at open lower end", pk("a").And(rk("a"), Gt("RowKey", "a")), want{kind: Point, pk: "a", rk: "a", warns: []WarningCode{WarnUnsatisfiable}}},
		{"empty range", pk("a").And(RowKeyRange("m", "a")), want{kind: Range, pk: "a", from: incl("m"), to: excl("a"), warns: []WarningCode{WarnUnsatisfiable}}},
		{"half-open empty", pk("a").And(RowKeyRange("m", "m")), want{kind: Range, pk: "a", from: incl("m"), to: excl("m"), warns: []WarningCode{WarnUnsatisfiable}}},
		{"closed single", pk("a").And(Ge("RowKey", "m"), Le("RowKey", "m")), want{kind: Range, pk: "a", from: incl("m"), to: incl("m")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.e.Plan()
			if p.Kind != c.w.kind {
				t.Errorf("Kind = %v, want %v", p.Kind, c.w.kind)
			}
			if p.Kind != TableScan && p.PartitionKey != c.w.pk {
				t.Errorf("PartitionKey = %q, want %q", p.PartitionKey, c.w.pk)
			}
			if p.Kind == Point && p.RowKey != c.w.rk {
				t.Errorf("RowKey = %q, want %q", p.RowKey, c.w.rk)
			}
			if p.Kind == Range {
				if !reflect.DeepEqual(p.From, c.w.from) || !reflect.DeepEqual(p.To, c.w.to) {
					t.Errorf("bounds = %+v %+v, want %+v %+v", p.From, p.To, c.w.from, c.w.to)
				}
			} else if p.From != nil || p.To != nil {
				t.Errorf("bounds set for %v: %+v %+v", p.Kind, p.From, p.To)
			}
			if got := codes(p); !reflect.DeepEqual(got, c.w.warns) {
				t.Errorf("warnings = %v, want %v (%v)", got, c.w.warns, p.Warnings)
			}
			for _, w := range p.Warnings {
				if w.Message == "" || w.String() != w.Message {
					t.Errorf("warning %v has no message", w.Code)
				}
			}
		})
	}
}

func TestPlanMessages(t *testing.T) {
	p := PK("a").And(RK("x")).Or(PK("b").And(RK("y")), PK("c").And(RK("z"))).Plan()
	if len(p.Warnings) != 2 || p.Warnings[1].Message != "the or names 3 entities in different partitions: run them as point queries in parallel" {
		t.Fatalf("warnings: %v", p.Warnings)
	}
	p = PK("a").Or(PK("b")).Plan()
	if p.Warnings[1].Message != "the or spans several partitions: run one query per partition in parallel" {
		t.Fatalf("warnings: %v", p.Warnings)
	}
}

func TestPlanTooManyComparisons(t *testing.T) {
	e := PK("a")
	for i := 0; i < 14; i++ {
		e = e.And(Ne("RowKey", string(rune('a'+i))))
	}
	if p := e.Plan(); p.Comparisons != 15 || p.Has(WarnTooManyComparisons) {
		t.Fatalf("15 comparisons: %+v", p)
	}
	e = e.And(Eq("X", 1))
	p := e.Plan()
	if p.Comparisons != 16 || !p.Has(WarnTooManyComparisons) || p.Kind != PartitionScan {
		t.Fatalf("16 comparisons: %+v", p)
	}
}

func TestPlanInvalid(t *testing.T) {
	p := PK("a").And(RK("x"), Eq("bad name", 1)).Plan()
	if p.Kind != Point || !p.Has(WarnInvalid) || p.Warnings[0].Code != WarnInvalid {
		t.Fatalf("plan: %+v", p)
	}
	if p := Not(Expr{}).Plan(); p.Kind != TableScan || !p.Has(WarnInvalid) {
		t.Fatalf("not empty plan: %+v", p)
	}
	if p := PK("a").And(Not(Expr{})).Plan(); p.Kind != PartitionScan || !p.Has(WarnInvalid) {
		t.Fatalf("plan with structural error: %+v", p)
	}
}

func TestKindAndCodeStrings(t *testing.T) {
	want := map[Kind]string{Point: "point", Range: "range", PartitionScan: "partition scan", TableScan: "table scan", Kind(9): "Kind(9)"}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("%d.String() = %q, want %q", k, k.String(), s)
		}
	}
	for c := WarnInvalid; c <= WarnTooManyComparisons; c++ {
		if s := c.String(); s == "" || s[0] == 'W' {
			t.Errorf("code %d has no name: %q", c, s)
		}
	}
	if WarningCode(0).String() != "WarningCode(0)" {
		t.Error("zero code name")
	}
	if OpLe.String() != "le" || Op(0).String() != "Op(0)" || Op(42).String() != "Op(42)" {
		t.Error("op names")
	}
}
