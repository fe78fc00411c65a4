package eventual_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestRelayReportsTheIntentItCouldNotDelete: partition "a" holds three
// intents; Relay sends all three, but the transaction deleting them and
// every try of the delete of m2's intent fail before they are sent. Relay
// goes on past m2: m1's and m3's intents are gone (read raw), only m2's is
// left for the next Relay, and the one *RelayError names m2's intent — not
// the first of the partition — and unwraps to the failure. A healthy
// Relay then sends m2 again and deletes its intent.
func TestRelayReportsTheIntentItCouldNotDelete(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	accounts := patterntest.Table[Account](t, env)
	qs := patterntest.Queues(t, env, 1)
	for _, id := range []string{"m1", "m2", "m3"} {
		rawIntent(t, accounts, "a", id, intentProps(noteKind.Name(), id, "", []byte(`{"text":"`+id+`"}`)))
	}
	m2Key := eventual.OutboxPrefix + "m2"
	inj := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/$batch") {
			return true
		}
		return r.Method == http.MethodDelete && strings.Contains(r.URL.String(), m2Key)
	}})
	lossy := env.With(inj)
	p, err := eventual.New(patterntest.SameQueues(t, lossy, qs), nil, patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	o, err := eventual.NewOutbox(p, patterntest.View[Account](t, lossy, accounts), eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	sent, err := o.Relay(ctx, "a")
	var re *eventual.RelayError
	if sent != 3 || !errors.As(err, &re) || len(unjoin(err)) != 1 || !errors.Is(err, faults.ErrInjected) {
		t.Fatalf("Relay = %d, %v; want 3 sent and one error", sent, err)
	}
	if re.Partition != "a" || re.RowKey != m2Key || re.ID != "m2" {
		t.Errorf("the error names %q/%q (id %q), want m2's intent: %v", re.Partition, re.RowKey, re.ID, err)
	}
	if ks := rawKeys(t, accounts); fmt.Sprint(ks) != fmt.Sprint([]string{"a/" + m2Key}) {
		t.Errorf("table holds %v, want m2's intent only", ks)
	}
	if n := count(t, qs[0].Work); n != 3 {
		t.Errorf("%d messages sent, want 3", n)
	}
	healthy, err := eventual.NewOutbox(p, accounts, eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := healthy.Relay(ctx, "a"); n != 1 || err != nil {
		t.Fatalf("the healthy Relay = %d, %v; want 1", n, err)
	}
	if ks := rawKeys(t, accounts); len(ks) != 0 {
		t.Errorf("table holds %v after the healthy relay", ks)
	}
}
