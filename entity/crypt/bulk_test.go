package crypt_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/integration/faults"
)

// TestBulkWriteOneBadEntity: among 30 entities in 3 partitions, one fits
// the service's limits in clear but not once encrypted (a String of 30,000
// three-byte characters is 90 KB of ciphertext, over the 64 KiB of a
// Binary), and the reply of the first transaction is lost. The bad entity
// alone is refused, naming its property, before anything is sent for it;
// the 29 others are stored and authentic, read back raw.
func TestBulkWriteOneBadEntity(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	inj := faults.New(faults.Config{})
	ct, raw := onAzurite[person](t, env.With(inj), crypt.Config{})
	var es []person
	for i := range 30 {
		e := personValue(fmt.Sprintf("%03d", i))
		e.PartitionKey = fmt.Sprintf("bulk%d", i%3)
		es = append(es, e)
	}
	es[17].First = strings.Repeat("€", 30000)
	if _, err := entity.Marshal(&personPlain{PartitionKey: "p", RowKey: "r", First: es[17].First}); err != nil {
		t.Fatalf("the bad entity does not even fit in clear: %v", err)
	}
	inj.LoseNext(1, func(r *http.Request) bool { return strings.Contains(r.URL.Path, "$batch") })
	outcomes, err := ct.BulkWrite(ctx, es, entity.BulkOptions{Mode: entity.OpInsert})
	var be *entity.BulkError
	if !errors.As(err, &be) || be.Total != 30 {
		t.Fatalf("BulkWrite: %v", err)
	}
	var ve *entity.ValidationError
	if o := outcomes[17]; !errors.As(o.Err, &ve) || ve.Property != "First" || ve.Rule != entity.RuleBinaryLength || o.RowKey != "017" {
		t.Fatalf("the bad entity's outcome: %+v", o)
	}
	for i, o := range outcomes {
		if i != 17 && o.Err != nil && !errors.Is(o.Err, entity.ErrOutcomeUnknown) {
			t.Errorf("entity %d: %v", i, o.Err)
		}
	}
	if inj.Stats().LostReplies != 1 {
		t.Fatalf("no transaction reply was lost: %+v", inj.Stats())
	}
	bodies := rawBodies(t, raw)
	if len(bodies) != 29 {
		t.Fatalf("%d entities stored, want 29", len(bodies))
	}
	for _, b := range bodies {
		m := parseBody(t, b)
		pk, rk := m["PartitionKey"].(string), m["RowKey"].(string)
		if rk == "017" {
			t.Fatal("the refused entity was stored")
		}
		if p, err := ct.Get(ctx, pk, rk); err != nil || p.First != "Jonathan" {
			t.Errorf("(%s, %s): %+v %v", pk, rk, p, err)
		}
	}
}
