package faults

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// ShortPages is a per-retry pipeline policy that makes the table service
// end every page of a query after at most N entities, as Table storage may
// end a page early (at a partition server's boundary, or after five
// seconds), not only at its 1,000: each query request ($top absent or
// larger) is sent with $top=N, and the service answers with a continuation
// after N entities. A test of code that pages through a table meets a page
// boundary every N entities instead of every 1,000: the same boundaries
// with a tenth of the data. Point reads and other requests pass unchanged.
type ShortPages struct {
	N int // entities per page, 1 to 1,000
}

// Do implements policy.Policy.
func (s ShortPages) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	// A query of a table's entities is a GET of "/<table>()"; a point
	// read names its keys inside the parentheses.
	if s.N > 0 && raw.Method == http.MethodGet && strings.HasSuffix(raw.URL.Path, "()") {
		raw.URL.RawQuery = capTop(raw.URL.RawQuery, s.N)
	}
	return req.Next()
}

// capTop returns query with its $top at most n, every other parameter
// left as it was encoded.
func capTop(query string, n int) string {
	parts := strings.Split(query, "&")
	found := false
	for i, p := range parts {
		k, v, _ := strings.Cut(p, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != "$top" {
			continue
		}
		found = true
		if top, err := strconv.Atoi(v); err != nil || top > n {
			parts[i] = "%24top=" + strconv.Itoa(n)
		}
	}
	if !found {
		parts = append(parts, "%24top="+strconv.Itoa(n))
	}
	if parts[0] == "" {
		parts = parts[1:]
	}
	return strings.Join(parts, "&")
}
