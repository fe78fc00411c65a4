package secondaryindex_test

import (
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/patterns/drift"
)

// inOrder reports whether got lists what want does, in want's order
// where the service returns query results in key order (Table storage,
// Azurite), which the lookups and Check keep; under the Cosmos DB
// profile (TABLEKIT_PROFILE=cosmos), whose queries return results in no
// key order, lookups and Check yield in the service's order (the package
// doc's "Azurite and Cosmos DB"), so only the lists' contents are
// compared there.
func inOrder(got, want []string) bool {
	if env.Cosmos() {
		got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	}
	return slices.Equal(got, want)
}

// findingLines are findings as comparable lines: what they say, without
// detail or token.
func findingLines(fs []drift.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%v %s %v %v", f.Kind, f.Index, f.Primary, f.Entry))
	}
	return out
}

// isSubset reports whether every line of sub is in set.
func isSubset(sub, set []string) bool {
	for _, l := range sub {
		if !slices.Contains(set, l) {
			return false
		}
	}
	return true
}
