package connstr

import (
	"strings"
	"testing"
)

// TestErrorsHideThePath: an endpoint or proxy URI refused for its host,
// port, scheme, user or fragment is shown without its path, where a query
// typed without its '?' (https://host/sv=…&sig=…) would repeat a
// signature.
func TestErrorsHideThePath(t *testing.T) {
	const sig = "c2lnbmF0dXJlLW9mLWEtdG9rZW4tMTIzNDU2Nzg5MGFi"
	path := "/sv=2019-02-02&sig=" + sig
	for _, raw := range []string{
		"https://h.example:0" + path,
		"https://h.example:99999" + path,
		"https://-h.example" + path,
		"https://h..example" + path,
		"https://u@h.example" + path,
		"https://h.example" + path + "#f",
		"https://h.example" + path + "?x=1",
		"https://h.example" + path,
		"http://[::1" + path,
		"ftp://h.example" + path,
	} {
		_, err := CheckEndpoint("TableEndpoint", raw)
		if err == nil {
			t.Errorf("%q accepted", raw)
			continue
		}
		if strings.Contains(err.Error(), sig[:12]) || strings.Contains(err.Error(), "sv=") {
			t.Errorf("%q: the error repeats the path: %v", raw, err)
		}
	}
	for _, cs := range []string{
		"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://p.example" + path,
		"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://p.example:8080" + path,
	} {
		_, err := Parse(cs)
		if err == nil || strings.Contains(err.Error(), sig[:12]) || strings.Contains(err.Error(), "sv=") {
			t.Errorf("%q: %v", cs, err)
		}
	}
	for raw, want := range map[string]string{
		"https://h.example:0/":            `"https://h.example:0/"`,
		"https://h.example:0":             `"https://h.example:0"`,
		"https://h.example:0/acct/?sig=1": `"https://h.example:0/…?…"`,
		"https://h.example:0/?sig=1":      `"https://h.example:0/?…"`,
		"https://u:p@h.example:0/a#frag":  `"https://…@h.example:0/…?…"`,
	} {
		if got := quoteURL(raw); got != want {
			t.Errorf("quoteURL(%q) = %s, want %s", raw, got, want)
		}
	}
}
