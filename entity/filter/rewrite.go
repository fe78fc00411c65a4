package filter

// Comparison is one comparison of an expression: Property Op Value.
type Comparison struct {
	Property string
	Op       Op
	Value    Value
}

// Rewrite returns e with every comparison replaced by what fn returns for
// it, and the and/or/not structure kept: the way a layer over the filter
// builder checks or translates the properties a filter names (package
// entity/crypt refuses comparisons on encrypted properties and turns
// equality on a beaconed one into a match on its beacon). The first error in
// e, or the first error fn returns, is returned instead.
func (e Expr) Rewrite(fn func(Comparison) (Expr, error)) (Expr, error) {
	if e.n == nil {
		return e, nil
	}
	if fn == nil {
		return Expr{}, invalid("", "nil rewrite function")
	}
	if err := e.n.firstErr(); err != nil {
		return Expr{}, err
	}
	return e.n.rewrite(fn)
}

func (n *node) rewrite(fn func(Comparison) (Expr, error)) (Expr, error) {
	switch n.kind {
	case nCmp:
		return fn(Comparison{Property: n.prop, Op: n.op, Value: n.val})
	case nNot:
		k, err := n.kids[0].rewrite(fn)
		if err != nil {
			return Expr{}, err
		}
		return Not(k), nil
	}
	kids := make([]Expr, len(n.kids))
	for i, k := range n.kids {
		r, err := k.rewrite(fn)
		if err != nil {
			return Expr{}, err
		}
		kids[i] = r
	}
	return combine(n.kind, kids), nil
}
