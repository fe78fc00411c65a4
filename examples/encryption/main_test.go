package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// a table of its own, and checks what it says and what it leaves.
func TestRun(t *testing.T) {
	names := Names{Payroll: env.TableName(t)}
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"   Name         Jonathan Jones\n",
		"   Email        Edm.Binary, 48 bytes\n",
		"   Salary       Edm.Binary, 35 bytes\n",
		"   Grade        7\n",
		"   the e-mail appears in clear: false\n",
		"   Read back through crypt: Jonathan Jones <jonesj@contoso.com>, salary 72500, grade 7\n",
		"copied Ann's salary into Jonathan's entity: ErrTampered=true",
		"raised Ann's signed grade: ErrTampered=true",
		"Email eq 'leea@contoso.com' through its beacon: Ann Lee",
		"Salary ge 80000: refused, ErrEncryptedFilter=true",
		"and a Merge: refused, ErrMerge=true",
		"4. Rotated the key: 2 entities rewrapped, 0 already current, data untouched",
		"   ContentKeyWrites   0: 200 wraps\n",
		"   ContentKeyWrites 100:   2 wraps\n",
		"read with the new key alone: [Ann Lee Jonathan Jones]",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// Every entity as the service stores it, read with aztables: 402, each
	// with its encryption metadata, no e-mail or salary in clear.
	client := env.TableService.NewClient(names.Payroll)
	n := 0
	for p := client.NewListEntitiesPager(nil); p.More(); {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range page.Entities {
			n++
			if !bytes.Contains(body, []byte(crypt.MetadataProperty)) || bytes.Contains(body, []byte("contoso")) || bytes.Contains(body, []byte("72500")) {
				t.Errorf("stored entity %s", body)
			}
		}
	}
	if n != 402 {
		t.Errorf("%d entities stored, want 402", n)
	}
}
