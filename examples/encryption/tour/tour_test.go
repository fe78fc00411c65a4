package tour_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/encryption/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestTour(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	if err := tour.Tour(ctx, demo.New(env.Account(), env.ConnectionString), &out); err != nil {
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
		"Deleted the table.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}
}
