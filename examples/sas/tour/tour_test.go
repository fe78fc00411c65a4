package tour_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/sas/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestTour(t *testing.T) {
	var out strings.Builder
	if err := tour.Tour(context.Background(), demo.New(env.Account(), env.ConnectionString), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := []string{
		`The server grants alice her partition: sp=raud, range [spk="alice" epk="alice"], expires in 15 minutes.`,
		"alice inserted, updated and listed her orders: 000001 book 11.00; 000002 pen 2.00.",
		"an insert is refused: refused, 403 AuthorizationPermissionMismatch.",
		"alice's URL edited to name bob's partition: refused, 403 ",
		"A token that expired an hour ago: refused, 403 ",
		"Deleted the table.",
	}
	if env.Live {
		want = append(want, "alice's token reading bob's order: refused, 403")
	} else {
		want = append(want,
			"aztables' own token for alice's range: refused, 403 AuthorizationFailure.",
			"The same token with spk and epk added: works.",
			"allowed by Azurite, which does not enforce key ranges; a real account answers 403.")
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q", w)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}
}
