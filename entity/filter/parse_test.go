package filter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

func TestParseBuildsWhatFilterBuilds(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"PartitionKey eq 'Sales'", "PartitionKey eq 'Sales'"},
		{"PartitionKey eq 'O''Brien'", "PartitionKey eq 'O''Brien'"},
		{"Age ge 30", "Age ge 30"},
		{"Age ge 30L", "Age ge 30L"},
		{"Age ge 3000000000", "Age ge 3000000000L"},
		{"Score lt 2.5", "Score lt 2.5"},
		{"Score lt 2d", "Score lt 2.0"},
		{"Score lt 1e3", "Score lt 1000.0"},
		{"Active eq TRUE", "Active eq true"},
		{"30 lt Age", "Age gt 30"},
		{"'x' eq Name", "Name eq 'x'"},
		{"Born gt datetime'2024-01-02T03:04:05.1234567Z'", "Born gt datetime'2024-01-02T03:04:05.1234567Z'"},
		{"Id eq guid'6F9619FF-8B86-D011-B42D-00C04FC964FF'", "Id eq guid'6f9619ff-8b86-d011-b42d-00c04fc964ff'"},
		{"Data eq X'0AFF'", "Data eq X'0aff'"},
		{"Data eq binary'00'", "Data eq X'00'"},
		{"a eq 1 and b eq 2 or c eq 3", "(a eq 1 and b eq 2) or c eq 3"},
		{"a eq 1 and (b eq 2 or c eq 3)", "a eq 1 and (b eq 2 or c eq 3)"},
		{"not (a eq 1)", "not (a eq 1)"},
		{"NOT a eq 1 AND b Ne 'x'", "not (a eq 1) and b ne 'x'"},
		{"((PartitionKey eq 'p'))", "PartitionKey eq 'p'"},
		{"Name eq ''", "Name eq ''"},
		{"Name eq 'a)b(c'' or x eq 1'", "Name eq 'a)b(c'' or x eq 1'"},
		{"Name eq 'üñí 🎉 #'", "Name eq 'üñí 🎉 #'"},
		{"Neg eq -5", "Neg eq -5"},
	} {
		e, err := filter.Parse(c.in)
		if err != nil {
			t.Errorf("filter.Parse(%q): %v", c.in, err)
			continue
		}
		got, err := e.Build()
		if err != nil || got != c.want {
			t.Errorf("filter.Parse(%q).Build() = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// Bad text is an *filter.ParseError (matching filter.ErrInvalidFilter and
// entity.ErrInvalid) naming where, or package filter's refusal; never a panic
// and never an expression.
func TestParseRefusesBadText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Name eq 'open", "unterminated"},
		{"Name equals 'x'", "not an operator"},
		{"Name eq", "expected a value"},
		{"Name eq x", "both names"},
		{"1 eq 2", "property name"},
		{"Name eq Infinity", "both names"},
		{"Name eq 1.5x", "not a value"},
		{"(Name eq 'x'", "without its ')'"},
		{"Name eq 'x')", "unexpected ')'"},
		{"Name eq 'x' and", "found the end"},
		{"Name eq null", "null"},
		{"Name eq date'2024'", "not a literal prefix"},
		{"Born eq datetime'yesterday'", "RFC 3339"},
		{"Id eq guid'zz'", "GUID"},
		{"Data eq X'abc'", "hex"},
		{"Big eq 99999999999999999999", "Int64"},
		{"Big eq 1e400", "finite"},
		{"and eq 1", "property name"},
		{"Bad-Name eq 1", "filter:"}, // package filter refuses the name
		{"Name eq 'x' Other eq 'y'", "after a complete expression"},
		{"\xff", "UTF-8"},
	} {
		e, err := filter.Parse(c.in)
		if err == nil {
			s, _ := e.Build()
			t.Errorf("filter.Parse(%q) = %q, want an error", c.in, s)
			continue
		}
		if !errors.Is(err, filter.ErrInvalidFilter) {
			t.Errorf("filter.Parse(%q): %v does not match ErrInvalidFilter", c.in, err)
		}
		var pe *filter.ParseError
		if errors.As(err, &pe) && !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("filter.Parse(%q): %v does not match entity.ErrInvalid", c.in, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("filter.Parse(%q): %q does not say %q", c.in, err, c.want)
		}
	}
}

// What Parse reads back from what package filter built is the same
// expression: the round trip is a fixed point.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"PartitionKey eq 'a''b' and (RowKey ge 'x' or not (N lt 5L))",
		"Born gt datetime'2024-01-02T03:04:05Z' and D eq X'00ff'",
		"Score le -1.5e10 or Id ne guid'6f9619ff-8b86-d011-b42d-00c04fc964ff'",
		"((a eq true))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		e, err := filter.Parse(in)
		if err != nil {
			if !errors.Is(err, filter.ErrInvalidFilter) {
				t.Fatalf("filter.Parse(%q): %v is not an ErrInvalidFilter", in, err)
			}
			return
		}
		s, err := e.Build()
		if err != nil {
			t.Fatalf("filter.Parse(%q) returned an expression that does not build: %v", in, err)
		}
		e2, err := filter.Parse(s)
		if err != nil {
			t.Fatalf("filter.Parse(%q) of the built %q: %v", in, s, err)
		}
		s2, _ := e2.Build()
		if s2 != s {
			t.Fatalf("round trip of %q: %q then %q", in, s, s2)
		}
	})
}
