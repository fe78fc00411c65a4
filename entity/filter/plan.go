package filter

import (
	"strconv"
)

// Kind is one of the four query kinds of design guide §2, from the cheapest
// (Point) to the most expensive (TableScan). The zero Kind is TableScan, the
// pessimistic answer.
type Kind uint8

// The query kinds.
const (
	// TableScan: no PartitionKey equality constrains the whole filter, so the
	// service reads every partition. Avoid.
	TableScan Kind = iota
	// PartitionScan: PartitionKey eq X and no usable RowKey condition; the
	// service reads the whole partition and filters it.
	PartitionScan
	// Range: PartitionKey eq X and a RowKey range; the service reads only
	// the range.
	Range
	// Point: PartitionKey eq X and RowKey eq Y; at most one entity is read.
	Point
)

var kindNames = [...]string{TableScan: "table scan", PartitionScan: "partition scan", Range: "range", Point: "point"}

// String returns "point", "range", "partition scan" or "table scan".
func (k Kind) String() string {
	if int(k) >= len(kindNames) {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// Bound is one end of a RowKey range.
type Bound struct {
	Value     string
	Inclusive bool // ge/le rather than gt/lt
}

// Plan says how the service will run a filter. Compute it with Expr.Plan.
type Plan struct {
	// Kind is the query kind.
	Kind Kind
	// PartitionKey is the one partition read; meaningful when Kind is not
	// TableScan (the empty string is a valid PartitionKey).
	PartitionKey string
	// RowKey is the one row read when Kind is Point.
	RowKey string
	// From and To are the RowKey bounds when Kind is Range; either may be
	// nil (an open end). From.Value <= To.Value in the service's order
	// unless the plan carries WarnUnsatisfiable.
	From, To *Bound
	// Comparisons counts the comparisons in the filter; the service accepts
	// at most MaxComparisons.
	Comparisons int
	// Warnings holds advice about the filter, most important first; empty
	// for a clean point or range query.
	Warnings []Warning
}

// MaxComparisons is the largest number of discrete comparisons the Table
// service permits in one $filter ("Querying tables and entities").
const MaxComparisons = 15

// WarningCode identifies a Warning for programs; Message is for people.
type WarningCode uint8

// The warnings a Plan can carry.
const (
	// WarnInvalid: the expression does not build (Build returns the error).
	WarnInvalid WarningCode = iota + 1
	// WarnTableScan: no PartitionKey equality constrains the whole filter.
	WarnTableScan
	// WarnPartitionKeyRange: the PartitionKey is compared with gt/ge/lt/le
	// rather than eq, so the query reads a range of partitions.
	WarnPartitionKeyRange
	// WarnOrOverPartitions: an or whose branches each fix a different
	// PartitionKey: the service scans the table; one query per partition,
	// run in parallel (point queries when each branch also fixes the RowKey),
	// is cheaper.
	WarnOrOverPartitions
	// WarnOrOverRowKeys: PartitionKey eq X with an or over RowKey
	// conditions: the service reads the whole partition instead of the
	// keys or ranges named; parallel point or range queries are cheaper.
	WarnOrOverRowKeys
	// WarnUnsatisfiable: the key conditions contradict each other
	// (PartitionKey eq 'a' and PartitionKey eq 'b', an empty RowKey range):
	// the query matches nothing.
	WarnUnsatisfiable
	// WarnTooManyComparisons: more than MaxComparisons comparisons; the
	// service refuses the filter, and entity.Table's queries refuse it
	// before any request (Azurite would take it).
	WarnTooManyComparisons
)

var warningNames = [...]string{
	WarnInvalid:            "invalid",
	WarnTableScan:          "table scan",
	WarnPartitionKeyRange:  "partition key range",
	WarnOrOverPartitions:   "or over partitions",
	WarnOrOverRowKeys:      "or over row keys",
	WarnUnsatisfiable:      "unsatisfiable",
	WarnTooManyComparisons: "too many comparisons",
}

// String returns a short name for the code, for example "or over row keys".
func (c WarningCode) String() string {
	if c == 0 || int(c) >= len(warningNames) {
		return "WarningCode(" + strconv.Itoa(int(c)) + ")"
	}
	return warningNames[c]
}

// Warning is one piece of advice about a filter.
type Warning struct {
	Code    WarningCode
	Message string
}

func (w Warning) String() string { return w.Message }

// Has reports whether the plan carries a warning with the given code.
func (p Plan) Has(code WarningCode) bool {
	for _, w := range p.Warnings {
		if w.Code == code {
			return true
		}
	}
	return false
}

func (p *Plan) warn(code WarningCode, msg string) {
	if !p.Has(code) {
		p.Warnings = append(p.Warnings, Warning{Code: code, Message: msg})
	}
}

// Plan classifies the filter into one of the guide's four query kinds by its
// boolean structure, and collects warnings.
//
// Only conditions that constrain the whole filter count: PartitionKey eq 'a'
// or RowKey eq 'b' is a table scan, while PartitionKey eq 'a' and (RowKey eq
// 'x' or RowKey eq 'y') fixes the partition and is a partition scan (with
// WarnOrOverRowKeys). An or whose branches all fix the same PartitionKey
// fixes it too. Negations are pushed down to the comparisons first, so
// not (PartitionKey ne 'a') counts as PartitionKey eq 'a'. Conditions on
// other properties never change the kind: PartitionKey eq 'a' and RowKey eq
// 'x' and Active eq true is still a point query (the service reads one
// entity and tests it).
//
// The empty expression is a table scan. An expression that does not build
// is planned by its structure and carries WarnInvalid.
func (e Expr) Plan() Plan {
	var p Plan
	if e.n != nil {
		p.Comparisons = e.n.countComparisons()
		if err := e.n.firstErr(); err != nil {
			p.warn(WarnInvalid, err.Error())
		}
	}
	var a analysis
	if e.n != nil {
		for _, c := range flattenAnd(normalize(e.n, false), nil) {
			a.conjunct(c)
		}
	}
	a.finish(&p)
	if p.Comparisons > MaxComparisons {
		p.warn(WarnTooManyComparisons, "the filter has "+strconv.Itoa(p.Comparisons)+
			" comparisons; the Table service permits at most "+strconv.Itoa(MaxComparisons))
	}
	return p
}

// Comparisons counts the filter's discrete comparisons, which the
// service allows at most MaxComparisons of (Plan counts them too).
func (e Expr) Comparisons() int {
	if e.n == nil {
		return 0
	}
	return e.n.countComparisons()
}

func (n *node) countComparisons() int {
	if n.kind == nCmp {
		return 1
	}
	c := 0
	for _, k := range n.kids {
		c += k.countComparisons()
	}
	return c
}

// nnf is an expression in negation normal form: comparisons (possibly with
// a negated operator), and, or.
type nnf struct {
	kind nodeKind // nCmp, nAnd, nOr, or nErr for structural errors
	prop string
	op   Op
	val  Value
	kids []*nnf
}

// normalize pushes negations down to the comparisons (De Morgan). Negating a
// comparison flips its operator; that is exact for the keys (always present)
// and the planner looks at nothing else.
func normalize(n *node, neg bool) *nnf {
	switch n.kind {
	case nCmp:
		op := n.op
		if neg {
			op = op.negate()
		}
		return &nnf{kind: nCmp, prop: n.prop, op: op, val: n.val}
	case nNot:
		return normalize(n.kids[0], !neg)
	case nAnd, nOr:
		kind := n.kind
		if neg {
			if kind == nAnd {
				kind = nOr
			} else {
				kind = nAnd
			}
		}
		out := &nnf{kind: kind}
		for _, k := range n.kids {
			c := normalize(k, neg)
			if c.kind == kind {
				out.kids = append(out.kids, c.kids...)
			} else {
				out.kids = append(out.kids, c)
			}
		}
		return out
	}
	return &nnf{kind: nErr}
}

func flattenAnd(n *nnf, out []*nnf) []*nnf {
	if n.kind == nAnd {
		for _, k := range n.kids {
			out = flattenAnd(k, out)
		}
		return out
	}
	return append(out, n)
}

// keyValue returns the string compared with a key property, if n is a valid
// comparison of prop with an Edm.String.
func (n *nnf) keyValue(prop string) (string, bool) {
	if n.kind != nCmp || n.prop != prop || n.val.edm != "Edm.String" || n.val.err != "" {
		return "", false
	}
	return n.val.raw, true
}

// fixedPK returns X when every row matching n has PartitionKey X.
func (n *nnf) fixedPK() (string, bool) {
	switch n.kind {
	case nCmp:
		if n.op == OpEq {
			return n.keyValue(PartitionKeyProperty)
		}
	case nAnd:
		for _, k := range n.kids {
			if v, ok := k.fixedPK(); ok {
				return v, true
			}
		}
	case nOr:
		var first string
		for i, k := range n.kids {
			v, ok := k.fixedPK()
			if !ok || i > 0 && v != first {
				return "", false
			}
			first = v
		}
		return first, true
	}
	return "", false
}

// isPoint reports whether n fixes both keys.
func (n *nnf) isPoint() bool {
	if _, ok := n.fixedPK(); !ok {
		return false
	}
	for _, c := range flattenAnd(n, nil) {
		if c.kind == nCmp && c.op == OpEq {
			if _, ok := c.keyValue(RowKeyProperty); ok {
				return true
			}
		}
	}
	return false
}

func (n *nnf) mentions(prop string) bool {
	if n.kind == nCmp {
		return n.prop == prop
	}
	for _, k := range n.kids {
		if k.mentions(prop) {
			return true
		}
	}
	return false
}

type analysis struct {
	pk           []string // distinct PartitionKey equalities
	pkRange      bool
	rk           []string // distinct RowKey equalities
	from, to     *Bound
	orOverRK     bool
	orOverPK     bool
	orPointCount int // branches of an or over partitions, when all are points
}

func addDistinct(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

func (a *analysis) conjunct(c *nnf) {
	switch c.kind {
	case nCmp:
		if v, ok := c.keyValue(PartitionKeyProperty); ok {
			switch c.op {
			case OpEq:
				a.pk = addDistinct(a.pk, v)
			case OpGt, OpGe, OpLt, OpLe:
				a.pkRange = true
			}
			return
		}
		if v, ok := c.keyValue(RowKeyProperty); ok {
			switch c.op {
			case OpEq:
				a.rk = addDistinct(a.rk, v)
			case OpGt, OpGe:
				b := &Bound{Value: v, Inclusive: c.op == OpGe}
				if a.from == nil || tighterLower(b, a.from) {
					a.from = b
				}
			case OpLt, OpLe:
				b := &Bound{Value: v, Inclusive: c.op == OpLe}
				if a.to == nil || tighterUpper(b, a.to) {
					a.to = b
				}
			}
		}
	case nOr:
		if v, ok := c.fixedPK(); ok {
			a.pk = addDistinct(a.pk, v)
			if c.mentions(RowKeyProperty) {
				a.orOverRK = true
			}
			return
		}
		all, points := true, 0
		for _, k := range c.kids {
			if _, ok := k.fixedPK(); !ok {
				all = false
				break
			}
			if k.isPoint() {
				points++
			}
		}
		if all {
			a.orOverPK = true
			if points == len(c.kids) {
				a.orPointCount = points
			}
			return
		}
		if c.mentions(RowKeyProperty) {
			a.orOverRK = true
		}
	}
}

// tighterLower reports whether lower bound b excludes more than c.
func tighterLower(b, c *Bound) bool {
	switch compareUTF16(b.Value, c.Value) {
	case 1:
		return true
	case 0:
		return !b.Inclusive && c.Inclusive
	}
	return false
}

// tighterUpper reports whether upper bound b excludes more than c.
func tighterUpper(b, c *Bound) bool {
	switch compareUTF16(b.Value, c.Value) {
	case -1:
		return true
	case 0:
		return !b.Inclusive && c.Inclusive
	}
	return false
}

func (a *analysis) finish(p *Plan) {
	if len(a.pk) == 0 {
		p.Kind = TableScan
		p.warn(WarnTableScan, "no PartitionKey equality constrains the whole filter: the query scans the whole table")
		switch {
		case a.orOverPK && a.orPointCount > 0:
			p.warn(WarnOrOverPartitions, "the or names "+strconv.Itoa(a.orPointCount)+
				" entities in different partitions: run them as point queries in parallel")
		case a.orOverPK:
			p.warn(WarnOrOverPartitions, "the or spans several partitions: run one query per partition in parallel")
		case a.pkRange:
			p.warn(WarnPartitionKeyRange, "the PartitionKey is compared as a range: the query reads several partitions")
		}
		return
	}
	p.PartitionKey = a.pk[0]
	if len(a.pk) > 1 {
		p.warn(WarnUnsatisfiable, "the filter requires two different PartitionKeys: it matches nothing")
	}
	switch {
	case len(a.rk) > 0:
		p.Kind = Point
		p.RowKey = a.rk[0]
		if len(a.rk) > 1 || !a.within(a.rk[0]) {
			p.warn(WarnUnsatisfiable, "the RowKey conditions contradict each other: the query matches nothing")
		}
	case a.from != nil && a.from.Inclusive && a.from.Value == "" && a.to == nil:
		// RowKey ge '' holds for every row: nothing narrows the partition.
		p.Kind = PartitionScan
	case a.from != nil || a.to != nil:
		p.Kind = Range
		p.From, p.To = a.from, a.to
		if a.from != nil && a.to != nil {
			c := compareUTF16(a.from.Value, a.to.Value)
			if c > 0 || c == 0 && !(a.from.Inclusive && a.to.Inclusive) {
				p.warn(WarnUnsatisfiable, "the RowKey range is empty: the query matches nothing")
			}
		}
	default:
		p.Kind = PartitionScan
	}
	if p.Kind == PartitionScan && a.orOverRK {
		p.warn(WarnOrOverRowKeys, "an or over RowKey conditions reads the whole partition: "+
			"run the point or range queries in parallel instead")
	}
}

// within reports whether rk lies inside the collected RowKey bounds.
func (a *analysis) within(rk string) bool {
	if a.from != nil {
		c := compareUTF16(rk, a.from.Value)
		if c < 0 || c == 0 && !a.from.Inclusive {
			return false
		}
	}
	if a.to != nil {
		c := compareUTF16(rk, a.to.Value)
		if c > 0 || c == 0 && !a.to.Inclusive {
			return false
		}
	}
	return true
}
