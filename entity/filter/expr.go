package filter

import (
	"strconv"
	"strings"
)

// Op is a comparison operator of the OData filter grammar.
type Op uint8

// The six comparison operators the Table service supports.
const (
	OpEq Op = iota + 1 // eq: equal
	OpNe               // ne: not equal
	OpGt               // gt: greater than
	OpGe               // ge: greater than or equal
	OpLt               // lt: less than
	OpLe               // le: less than or equal
)

var opNames = [...]string{OpEq: "eq", OpNe: "ne", OpGt: "gt", OpGe: "ge", OpLt: "lt", OpLe: "le"}

// String returns the operator as written in a filter, for example "ge".
func (o Op) String() string {
	if o == 0 || int(o) >= len(opNames) {
		return "Op(" + strconv.Itoa(int(o)) + ")"
	}
	return opNames[o]
}

func (o Op) valid() bool { return o >= OpEq && o <= OpLe }

// negate returns the operator of the negated comparison (for keys, which are
// always present, not (a op b) equals a negate(op) b).
func (o Op) negate() Op {
	switch o {
	case OpEq:
		return OpNe
	case OpNe:
		return OpEq
	case OpGt:
		return OpLe
	case OpLe:
		return OpGt
	case OpGe:
		return OpLt
	case OpLt:
		return OpGe
	}
	return o
}

// Expr is an immutable filter expression. Build it from comparisons (Eq, Ge,
// PK, RowKeyRange, ...) combined with And, Or and Not, then call Build for the
// $filter string or Plan for the kind of query it makes.
//
// The zero Expr is empty: it filters nothing (Build returns ""), And and Or
// skip it, and Not of it is an error. Exprs are values and safe to share
// between goroutines; combining never modifies an operand.
//
// Errors (an invalid property name, a value with no literal) are kept inside
// the Expr and returned by Build, so expressions compose without error checks
// at every step.
type Expr struct {
	n *node
}

type nodeKind uint8

const (
	nCmp nodeKind = iota + 1
	nAnd
	nOr
	nNot
	nErr // a structural error with no comparison to hang it on
)

type node struct {
	kind nodeKind
	prop string  // nCmp
	op   Op      // nCmp
	val  Value   // nCmp
	err  *Error  // nCmp (invalid name, operator or value) and nErr
	kids []*node // nAnd, nOr: two or more; nNot: one
}

// IsEmpty reports whether e is the empty expression.
func (e Expr) IsEmpty() bool { return e.n == nil }

// Compare returns the comparison prop op v. v is mapped to a literal by
// ValueOf (pass a Value to choose the EDM type explicitly, for example
// Compare("Count", OpGe, filter.Int32(3))).
func Compare(prop string, op Op, v any) Expr {
	n := &node{kind: nCmp, prop: prop, op: op, val: ValueOf(v)}
	switch {
	case !op.valid():
		n.err = invalid(prop, "unknown comparison operator")
	default:
		if r := checkName(prop); r != "" {
			n.err = invalid(prop, r)
		} else if err := n.val.check(prop); err != nil {
			n.err = err
		}
	}
	return Expr{n}
}

// Eq returns prop eq v. See ValueOf for how v is typed.
func Eq(prop string, v any) Expr { return Compare(prop, OpEq, v) }

// Ne returns prop ne v.
func Ne(prop string, v any) Expr { return Compare(prop, OpNe, v) }

// Gt returns prop gt v.
func Gt(prop string, v any) Expr { return Compare(prop, OpGt, v) }

// Ge returns prop ge v.
func Ge(prop string, v any) Expr { return Compare(prop, OpGe, v) }

// Lt returns prop lt v.
func Lt(prop string, v any) Expr { return Compare(prop, OpLt, v) }

// Le returns prop le v.
func Le(prop string, v any) Expr { return Compare(prop, OpLe, v) }

// Names of the key properties.
const (
	PartitionKeyProperty = "PartitionKey"
	RowKeyProperty       = "RowKey"
)

// PK returns PartitionKey eq pk, the condition every efficient query has
// (design guide §2).
func PK(pk string) Expr { return Eq(PartitionKeyProperty, String(pk)) }

// RK returns RowKey eq rk. PK(pk).And(RK(rk)) is a point query.
func RK(rk string) Expr { return Eq(RowKeyProperty, String(rk)) }

// RowKeyRange returns the half-open range RowKey ge from and RowKey lt to.
// An empty to means no upper bound, as keys.PrefixRange and
// keys.CompoundPrefix return it: the range is then RowKey ge from alone.
//
//	from, to := keys.CompoundPrefix("empid", keys.Pad(123, 6))
//	f := filter.PK("Sales").And(filter.RowKeyRange(from, to))
func RowKeyRange(from, to string) Expr {
	if to == "" {
		return Ge(RowKeyProperty, String(from))
	}
	return And(Ge(RowKeyProperty, String(from)), Lt(RowKeyProperty, String(to)))
}

// RowKeyPrefix returns the range of RowKeys that start with prefix:
// RowKey ge 'prefix' and RowKey lt 'next', where next is the smallest string
// greater than every string starting with prefix in the service's order
// (ordinal, by UTF-16 code unit). For example "emp_" gives
//
//	RowKey ge 'emp_' and RowKey lt 'emp`'
//
// When no such string exists (the empty prefix, or a prefix made only of
// U+FFFF) only the lower bound is written, so RowKeyPrefix("") matches every
// row:
//
//	RowKey ge ''
//
// A prefix ending in U+10FFFF has the successor U+E000 at that position:
// in UTF-16 order every surrogate pair sorts below U+E000.
func RowKeyPrefix(prefix string) Expr {
	lower := Ge(RowKeyProperty, String(prefix))
	next, ok := prefixSuccessor(prefix)
	if !ok {
		return lower
	}
	return And(lower, Lt(RowKeyProperty, String(next)))
}

// And returns the conjunction of es. Empty operands are skipped; with none
// left the result is empty, with one it is that operand.
func And(es ...Expr) Expr { return combine(nAnd, es) }

// Or returns the disjunction of es. Empty operands are skipped; with none
// left the result is empty, with one it is that operand.
func Or(es ...Expr) Expr { return combine(nOr, es) }

// Not returns the negation of e. Not of the empty expression is an error
// (the empty expression filters nothing, and a filter that matches nothing
// is almost always a mistake).
//
// Not(Eq(p, v)) and Ne(p, v) differ on entities that lack p (tables are
// schemaless): a comparison with an absent property is false, so the first
// matches such entities and the second does not (verified on Azurite). For
// PartitionKey and RowKey, always present, they are the same.
func Not(e Expr) Expr {
	switch {
	case e.n == nil:
		return Expr{&node{kind: nErr, err: invalid("", "not of an empty expression")}}
	case e.n.kind == nNot:
		return Expr{e.n.kids[0]}
	}
	return Expr{&node{kind: nNot, kids: []*node{e.n}}}
}

// And returns e and os, as the function And(e, os...).
func (e Expr) And(os ...Expr) Expr { return combine(nAnd, append([]Expr{e}, os...)) }

// Or returns e or os, as the function Or(e, os...).
func (e Expr) Or(os ...Expr) Expr { return combine(nOr, append([]Expr{e}, os...)) }

// Not returns not e, as the function Not(e).
func (e Expr) Not() Expr { return Not(e) }

func combine(kind nodeKind, es []Expr) Expr {
	var kids []*node
	for _, e := range es {
		switch {
		case e.n == nil:
		case e.n.kind == kind: // (a and b) and c is a and b and c
			kids = append(kids, e.n.kids...)
		default:
			kids = append(kids, e.n)
		}
	}
	switch len(kids) {
	case 0:
		return Expr{}
	case 1:
		return Expr{kids[0]}
	}
	return Expr{&node{kind: kind, kids: kids}}
}

// Build returns the $filter string, or the first error in the expression
// (an *Error matching ErrInvalidFilter). The empty expression builds to "".
//
// Every value is a typed literal and every string is quoted with its quotes
// doubled, so no value can end its literal early or add an operator: the
// structure of the filter is exactly the structure of the Expr. Comparisons
// are written bare, a disjunction inside a conjunction (and a conjunction
// inside a disjunction) is put in parentheses, and not always takes a
// parenthesised operand:
//
//	PartitionKey eq 'a' and (RowKey eq 'x' or RowKey eq 'y')
//	(PartitionKey eq 'a' and RowKey eq 'x') or (PartitionKey eq 'b' and RowKey eq 'y')
//	not (Deleted eq true)
func (e Expr) Build() (string, error) {
	if e.n == nil {
		return "", nil
	}
	if err := e.n.firstErr(); err != nil {
		return "", err
	}
	var b strings.Builder
	e.n.render(&b)
	return b.String(), nil
}

func (n *node) firstErr() *Error {
	if n.err != nil {
		return n.err
	}
	for _, k := range n.kids {
		if err := k.firstErr(); err != nil {
			return err
		}
	}
	return nil
}

func (n *node) render(b *strings.Builder) {
	switch n.kind {
	case nCmp:
		b.WriteString(n.prop)
		b.WriteByte(' ')
		b.WriteString(n.op.String())
		b.WriteByte(' ')
		b.WriteString(n.val.lit)
	case nNot:
		b.WriteString("not (")
		n.kids[0].render(b)
		b.WriteByte(')')
	case nAnd, nOr:
		sep := " and "
		if n.kind == nOr {
			sep = " or "
		}
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(sep)
			}
			if k.kind == nAnd || k.kind == nOr {
				b.WriteByte('(')
				k.render(b)
				b.WriteByte(')')
			} else {
				k.render(b)
			}
		}
	}
}
