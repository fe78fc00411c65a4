package filter_test

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity/filter"
)

func TestRewrite(t *testing.T) {
	e := filter.PK("p").And(filter.Or(filter.Eq("A", "x"), filter.Not(filter.Gt("B", int32(3)))))
	got, err := e.Rewrite(func(c filter.Comparison) (filter.Expr, error) {
		if c.Property == "A" {
			return filter.Compare("A2", c.Op, filter.Binary([]byte{1})), nil
		}
		return filter.Compare(c.Property, c.Op, c.Value), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := got.Build()
	if want := "PartitionKey eq 'p' and (A2 eq X'01' or not (B gt 3))"; s != want {
		t.Fatalf("got %s, want %s", s, want)
	}
	// Unchanged comparisons build as before.
	same, _ := e.Rewrite(func(c filter.Comparison) (filter.Expr, error) { return filter.Compare(c.Property, c.Op, c.Value), nil })
	s1, _ := e.Build()
	s2, _ := same.Build()
	if s1 != s2 {
		t.Fatalf("%s != %s", s1, s2)
	}
	stop := errors.New("stop")
	if _, err := e.Rewrite(func(filter.Comparison) (filter.Expr, error) { return filter.Expr{}, stop }); !errors.Is(err, stop) {
		t.Fatalf("fn's error: %v", err)
	}
	if _, err := filter.Eq("1bad", 1).Rewrite(func(c filter.Comparison) (filter.Expr, error) { return filter.Expr{}, nil }); !errors.Is(err, filter.ErrInvalidFilter) {
		t.Fatalf("an invalid expression: %v", err)
	}
	if _, err := e.Rewrite(nil); !errors.Is(err, filter.ErrInvalidFilter) {
		t.Fatalf("nil function: %v", err)
	}
	if empty, err := (filter.Expr{}).Rewrite(nil); err != nil || !empty.IsEmpty() {
		t.Fatalf("empty: %v", err)
	}
}
