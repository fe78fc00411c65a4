package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// a table of its own, and checks what it says and what it leaves.
func TestRun(t *testing.T) {
	if env.ConnectionString == "" {
		t.Skip("the account in the environment is reached with a credential: there is no key to sign with")
	}
	iss, err := sas.NewIssuerFromConnectionString(env.ConnectionString, sas.Config{TTL: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	names := Names{Orders: env.TableName(t)}
	var out strings.Builder
	if err := run(t.Context(), env.Account(), iss, names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := []string{
		`The server grants alice her partition: sp=raud, range [spk="alice" epk="alice"], expires in 15 minutes.`,
		"alice inserted, updated and listed her orders: 000001 book 11.00; 000002 pen 2.00.",
		"an insert is refused: refused, 403 AuthorizationPermissionMismatch.",
		"alice's URL edited to name bob's partition: refused, 403 ",
		"A token that expired an hour ago: refused, 403 ",
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

	// The table: what alice wrote with her token, bob's order, and not the
	// order bob's read-only token tried to insert.
	raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, names.Orders)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for e, err := range raw.Query(t.Context(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		item, _ := entity.Prop[string](&e, "Item")
		total, _ := entity.Prop[float64](&e, "Total")
		rows = append(rows, fmt.Sprintf("%s/%s %s %g", e.PartitionKey, e.RowKey, item, total))
	}
	if got := strings.Join(rows, ", "); got != "alice/000001 book 11, alice/000002 pen 2, bob/000001 lamp 30" {
		t.Errorf("the table holds %s", got)
	}
}
