package redact

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	key := "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	cs := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key + ";TableEndpoint=http://127.0.0.1:1/devstoreaccount1/"
	sas := "https://acct.table.core.windows.net/T?sv=2019-02-02&tn=T&sp=r&se=2030-01-01&sig=abc%2Bdef%2Fghi%3D"
	r := New(Secrets(cs)...)
	r.Add(Secrets(sas)...)
	for _, in := range []string{
		cs,
		"the key " + key + " leaked",
		"escaped " + strings.ReplaceAll(key, "/", "%2F"),
		sas,
		"unescaped sig=abc+def/ghi= here",
		"Authorization: SharedKey devstoreaccount1:zzzz",
		"SharedAccessSignature=sv=1&sig=qqqqqq;TableEndpoint=x",
		`{"sig":"wwwwww"}`,
	} {
		out := r.String(in)
		for _, bad := range []string{key, "abc%2Bdef%2Fghi%3D", "abc+def/ghi=", "zzzz", "qqqqqq", "wwwwww", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq%2FK1SZFPTOtr%2FKBHBeksoGMGw=="} {
			if strings.Contains(out, bad) {
				t.Errorf("%q -> %q still holds %q", in, out, bad)
			}
		}
		if !strings.Contains(out, Mask) {
			t.Errorf("%q -> %q masks nothing", in, out)
		}
	}
	if got := New().String("AccountName=devstoreaccount1;TableEndpoint=http://x/"); got != "AccountName=devstoreaccount1;TableEndpoint=http://x/" {
		t.Errorf("changed a string without secrets: %q", got)
	}
}
