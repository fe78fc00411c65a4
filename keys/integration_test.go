package keys_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/keys"
)

// env is the storage account of the integration tests.
var env *integration.Env

// TestMain starts the integration environment (Azurite, or the account
// named by the environment) for the tests of this package; a fuzzing run
// starts none, and the integration tests then fail rather than skip.
func TestMain(m *testing.M) { integration.Main(m, &env) }

// awkwardParts are compound-key parts with every character class the key
// builders must get right on the service: quotes (doubled in filters), the
// guide's '_', the compound separator and escape, spaces, multibyte and
// supplementary characters, and the characters around the places where
// UTF-16 and code point order differ.
var awkwardParts = []string{
	"", "a", "ab", "O'Brien", "O''Brien", "'", "emp_id", "_", " ", "  ", "New York", "a b",
	"!", "!!", "a!b", "! !", "~", "a~", "é", "中文", "\U0001F600", "x\U0001F600",
	"\uD7FF", "\uE000", "\uFFFD", "\uFFFF", "a\uFFFF", "\U00010000", "\U0010FFFF", "\"", ".", "-",
}

type row struct{ pk, rk string }

// insertRows writes an entity per row with a hand-built JSON body: the SDK's
// EDMEntity doubles the ' in keys.
func insertRows(t *testing.T, client *aztables.Client, rows []row) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for _, r := range rows {
		body, err := json.Marshal(map[string]any{"PartitionKey": r.pk, "RowKey": r.rk, "Value": 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.AddEntity(ctx, body, nil); err != nil {
			t.Fatalf("inserting (%q, %q): %v", r.pk, r.rk, err)
		}
	}
}

// query returns the keys of the entities matching filter, in the order the
// service returned them, following continuation tokens.
func query(t *testing.T, client *aztables.Client, filter string) []row {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sel := "PartitionKey,RowKey"
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Select: &sel})
	var out []row
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("query %q: %v", filter, err)
		}
		for _, e := range page.Entities {
			var m struct{ PartitionKey, RowKey string }
			if err := json.Unmarshal(e, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, row{m.PartitionKey, m.RowKey})
		}
	}
	return out
}

func requireEnv(t *testing.T) {
	t.Helper()
	if env == nil {
		t.Fatal("no integration environment: this test needs TestMain to start one (it is not started while fuzzing)")
	}
}

// TestIntegrationRanges stores compound and plain keys with awkward
// characters and checks that the service returns exactly the expected rows,
// in the expected order, for prefix ranges and compound-prefix ranges.
func TestIntegrationRanges(t *testing.T) {
	requireEnv(t)
	t.Parallel()
	client := env.Table(t)

	const pk = "ranges"
	var tuples [][]string
	var rows []row
	seen := map[string]bool{}
	add := func(parts ...string) {
		k := keys.Compound(parts...)
		if seen[k] {
			return
		}
		if err := keys.Validate(k); err != nil {
			t.Fatalf("Compound(%q): %v", parts, err)
		}
		seen[k] = true
		tuples = append(tuples, slices.Clone(parts))
		rows = append(rows, row{pk, k})
	}
	r := newRand(60)
	for _, p := range awkwardParts {
		add(p)
		add("emp", p)
		add(p, "2012")
		add("emp", p, awkwardParts[r.IntN(len(awkwardParts))])
	}
	for range 60 {
		n := 1 + r.IntN(3)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = awkwardParts[r.IntN(len(awkwardParts))]
		}
		add(parts...)
	}
	insertRows(t, client, rows)

	// The whole partition comes back in the order of keys.Compare.
	all := query(t, client, "PartitionKey eq 'ranges'")
	want := slices.Clone(rows)
	slices.SortFunc(want, func(a, b row) int { return keys.Compare(a.rk, b.rk) })
	if !slices.Equal(all, want) {
		t.Fatalf("partition order differs from keys.Compare:\n got %q\nwant %q", rks(all), rks(want))
	}

	// Compound-prefix ranges: exactly the tuples that start with the parts.
	prefixes := [][]string{{"emp"}, {"O'Brien"}, {"emp", "O'Brien"}, {" "}, {"!"}, {"emp", "a!b"}, {"emp", " "},
		{"emp", "\uFFFF"}, {"emp", "\U0010FFFF"}, {"\U0001F600"}, {"emp", ""}, {""}, {"a b"}, {"emp", "中文"}}
	for _, p := range awkwardParts {
		prefixes = append(prefixes, []string{p}, []string{"emp", p})
	}
	nonEmpty := 0
	for _, prefix := range prefixes {
		from, to := keys.CompoundPrefix(prefix...)
		got := query(t, client, build(filter.PK("ranges").And(filter.RowKeyRange(from, to))))
		var exp []row
		for i, tu := range tuples {
			if len(tu) >= len(prefix) && slices.Equal(tu[:len(prefix)], prefix) {
				exp = append(exp, rows[i])
			}
		}
		slices.SortFunc(exp, func(a, b row) int { return keys.Compare(a.rk, b.rk) })
		if !slices.Equal(got, exp) {
			t.Errorf("CompoundPrefix(%q) = [%q, %q):\n got %q\nwant %q", prefix, from, to, rks(got), rks(exp))
		}
		if len(exp) > 1 {
			nonEmpty++
		}
	}
	if nonEmpty < len(prefixes)/2 {
		t.Errorf("only %d of %d compound prefixes select several rows: the test data is too thin", nonEmpty, len(prefixes))
	}

	// Prefix ranges over the same keys, including prefixes that end inside
	// a part, on an escape, and on the edge characters.
	var plain []string
	for _, rw := range rows {
		plain = append(plain, rw.rk)
	}
	stringPrefixes := []string{"", "e", "emp", "emp ", "emp O'", "O'", "'", "!", "! ", "!!", "a!", " ", "~",
		"\uFFFF", "emp \uFFFF", "emp \U0010FFFF", "\U0001F600", "\uD7FF", "emp \uD7FF", "\U0010FFFF", "中", "é", "a",
		".", "emp .", "\"", "emp \"", "-", "emp '"} // their upper bounds hold '/', '#', '(': fine in a filter
	for _, prefix := range stringPrefixes {
		from, to := keys.PrefixRange(prefix)
		got := query(t, client, build(filter.PK("ranges").And(filter.RowKeyRange(from, to))))
		var exp []row
		for _, k := range plain {
			if strings.HasPrefix(k, prefix) {
				exp = append(exp, row{pk, k})
			}
		}
		slices.SortFunc(exp, func(a, b row) int { return keys.Compare(a.rk, b.rk) })
		if !slices.Equal(got, exp) {
			t.Errorf("PrefixRange(%q) = [%q, %q):\n got %q\nwant %q", prefix, from, to, rks(got), rks(exp))
		}
	}
}

// TestIntegrationEdgePrefixes checks PrefixRange where UTF-16 order and
// code point order disagree: the service must return exactly the keys with
// the prefix.
func TestIntegrationEdgePrefixes(t *testing.T) {
	requireEnv(t)
	t.Parallel()
	client := env.Table(t)

	const pk = "edges"
	chars := []string{"", "a", "~", "\x7e!", "\u00A0", "\uD7FF", "\uE000", "\uFFFD", "\uFFFF", "\U00010000", "\U0001F600", "\U0010FFFF", "b", "'"}
	var rows []row
	seen := map[string]bool{}
	for _, x := range chars {
		for _, y := range chars {
			for _, z := range []string{"", "a", "\uFFFF", "\U00010000"} {
				k := "k" + x + y + z
				if !seen[k] {
					seen[k] = true
					rows = append(rows, row{pk, k})
				}
			}
		}
	}
	insertRows(t, client, rows)

	// The service orders by UTF-16 code units: a range computed in code
	// point order (U+FFFF followed by U+10000) selects nothing here, while
	// PrefixRange selects the keys.
	naive := query(t, client, build(filter.PK("edges").And(filter.RowKeyRange("k\uFFFF", "k\U00010000"))))
	if len(naive) != 0 {
		t.Errorf("the code point range [k\\uFFFF, k\\U00010000) returned %+q: the service does not order by UTF-16", rks(naive))
	}
	for _, x := range chars {
		for _, y := range []string{"", "\uFFFF", "\U0010FFFF", "\uD7FF"} {
			prefix := "k" + x + y
			from, to := keys.PrefixRange(prefix)
			got := query(t, client, build(filter.PK("edges").And(filter.RowKeyRange(from, to))))
			var exp []row
			for _, rw := range rows {
				if strings.HasPrefix(rw.rk, prefix) {
					exp = append(exp, rw)
				}
			}
			slices.SortFunc(exp, func(a, b row) int { return keys.Compare(a.rk, b.rk) })
			if !slices.Equal(got, exp) {
				t.Errorf("PrefixRange(%+q) = [%+q, %+q):\n got %+q\nwant %+q", prefix, from, to, rks(got), rks(exp))
			}
			if y == "" && len(exp) < 2 {
				t.Errorf("PrefixRange(%+q) selects %d rows: the test data is too thin", prefix, len(exp))
			}
		}
	}
}

// TestIntegrationKeyRules checks Validate against the service: the length
// limit in UTF-16 code units and the forbidden characters, and that escaped
// keys are stored and read back unchanged, in order.
func TestIntegrationKeyRules(t *testing.T) {
	requireEnv(t)
	t.Parallel()
	client := env.TableWith(t, env.NoRetryClientOptions())
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	insert := func(pk, rk string) error {
		body, err := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": rk})
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.AddEntity(ctx, body, nil)
		return err
	}
	// Keys that Validate accepts are stored; keys it rejects are refused.
	cases := []string{
		strings.Repeat("a", keys.MaxKeyLength),
		strings.Repeat("a", keys.MaxKeyLength+1),
		strings.Repeat("中", keys.MaxKeyLength),
		strings.Repeat("中", keys.MaxKeyLength+1),
		strings.Repeat("\U0001F600", keys.MaxKeyLength/2),
		strings.Repeat("\U0001F600", keys.MaxKeyLength/2) + "a",
		"a/b", `a\b`, "a#b", "a?b", "a\x01b", "a\tb", "a\x7fb", "a\u0085b", "a\u009fb",
		"a\u00a0b", "a'b", "a b", "a!b", "\uFFFF", "\U0010FFFF",
	}
	if env.Live {
		// The live service's length limit is documented inconsistently
		// (1 KiB vs 1024 characters); only check the characters there.
		cases = cases[6:]
	}
	for i, k := range cases {
		valid := keys.Validate(k) == nil
		for _, asPK := range []bool{false, true} {
			var err error
			if asPK {
				err = insert(k, "r")
			} else {
				err = insert("rules", k+strings.Repeat("", i))
			}
			var re *azcore.ResponseError
			switch {
			case valid && err != nil:
				t.Errorf("key %+.40q (%d code units) passes Validate but the service refused it (as PartitionKey %v): %v", k, keys.UTF16Len(k), asPK, err)
			case !valid && err == nil:
				t.Errorf("key %+.40q (%d code units) fails Validate but the service stored it (as PartitionKey %v)", k, keys.UTF16Len(k), asPK)
			case !valid && !errors.As(err, &re):
				t.Errorf("key %+.40q: unexpected error %v", k, err)
			}
		}
	}

	// Escaped keys round-trip through the service and keep the order of the
	// original strings.
	originals := []string{"a/b", "a b", "a.b", "a#1", "a?", `a\`, "a\tb", "a\x7f", "a\u0085", "a~", "a\"", "a[", "a>", "a",
		"O'Brien/2012", "\U0001F600/x", "\uFFFF#", "", " ", "\x00"}
	var rows []row
	for _, o := range originals {
		rows = append(rows, row{"escaped", keys.Escape(o)})
	}
	insertRows(t, client, rows)
	got := query(t, client, "PartitionKey eq 'escaped'")
	var back []string
	for _, rw := range got {
		u, err := keys.Unescape(rw.rk)
		if err != nil {
			t.Fatalf("Unescape(%q) of a stored key: %v", rw.rk, err)
		}
		back = append(back, u)
	}
	want := slices.Clone(originals)
	slices.SortFunc(want, compare16)
	if !slices.Equal(back, want) {
		t.Errorf("escaped keys came back as %+q, want %+q", back, want)
	}
}

func rks(rows []row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.rk
	}
	return out
}
