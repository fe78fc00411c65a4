package crypt_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration/faults"
)

// The seams of crypt's writes: each write's reply is lost, and another
// writer inserts, replaces, merges or deletes the same entity inside
// azcore's retry window (faults.Injector.LoseNextThen runs it after the
// lost request was executed and before the resend). Whatever the
// interleaving, what is stored afterwards is absent or reads as authentic
// (never a mix of two writes), a rotation ends with the entity under the
// new key, and a write that was applied is never reported refused.

func isMethod(methods ...string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		m := r.Method
		if x := r.Header.Get("X-HTTP-Method"); x != "" {
			m = x
		}
		return slices.Contains(methods, m) && !strings.Contains(r.URL.Path, "$batch")
	}
}

func isBatchRequest(r *http.Request) bool { return strings.Contains(r.URL.Path, "$batch") }

// cryptSeam is one crypt write, applied by its first (lost) try.
type cryptSeam struct {
	name   string
	stored bool // the entity exists before the write
	match  func(*http.Request) bool
	write  func(ctx context.Context, tbl *crypt.Table[person], p person) error
}

func cryptSeams() []cryptSeam {
	mine := func(p person) person { p.First, p.Level = "Mine", 7; return p }
	put, patch, post := isMethod(http.MethodPut), isMethod("MERGE", http.MethodPatch), isMethod(http.MethodPost)
	return []cryptSeam{
		{"Insert", false, post, func(ctx context.Context, tbl *crypt.Table[person], p person) error {
			p = mine(p)
			return tbl.Insert(ctx, &p)
		}},
		{"Upsert", false, put, func(ctx context.Context, tbl *crypt.Table[person], p person) error {
			p = mine(p)
			return tbl.Upsert(ctx, &p, entity.Replace)
		}},
		{"Update", true, put, func(ctx context.Context, tbl *crypt.Table[person], p person) error {
			p = mine(p)
			return tbl.Update(ctx, &p, entity.Replace)
		}},
		{"UpdateAny", true, put, func(ctx context.Context, tbl *crypt.Table[person], p person) error {
			p = mine(p)
			return tbl.UpdateAny(ctx, &p, entity.Replace)
		}},
		{"Modify", true, put, func(ctx context.Context, tbl *crypt.Table[person], p person) error {
			_, err := tbl.Modify(ctx, p.PartitionKey, p.RowKey, func(p *person) error { *p = mine(*p); return nil }, entity.ModifyOptions{Retry: entity.RetryPolicy{Attempts: 3}})
			return err
		}},
		{"Submit", false, isBatchRequest, func(ctx context.Context, tbl *crypt.Table[person], p person) error {
			p = mine(p)
			other := mine(personValue(p.RowKey + "-other"))
			other.PartitionKey = p.PartitionKey
			_, err := tbl.Submit(ctx, tbl.NewBatch().Insert(&p).Insert(&other))
			return err
		}},
		{"BulkWrite", false, isBatchRequest, func(ctx context.Context, tbl *crypt.Table[person], p person) error {
			outcomes, _ := tbl.BulkWrite(ctx, []person{mine(p)}, entity.BulkOptions{Mode: entity.OpInsert})
			return outcomes[0].Err
		}},
		{"Rotate", true, patch, nil}, // run by the test: it needs the rotating table
	}
}

// TestSeamsLostReplyWithAnotherWriter runs each crypt write against each
// competing write in the retry window and reads the end state back raw,
// with a content key per write and with content keys shared by 8 writes
// (Config.ContentKeyWrites) on both sides.
func TestSeamsLostReplyWithAnotherWriter(t *testing.T) {
	t.Parallel()
	for _, shared := range []int{0, 8} {
		t.Run(fmt.Sprintf("ContentKeyWrites=%d", shared), func(t *testing.T) { seamsLostReplyWithAnotherWriter(t, shared) })
	}
}

func seamsLostReplyWithAnotherWriter(t *testing.T, shared int) {
	ctx := context.Background()
	oldKey, newKey := newLocalKey(t, "kek-old", 1), newLocalKey(t, "kek-new", 2)
	inj := faults.New(faults.Config{})
	ct, raw := onAzurite[person](t, env.With(inj), crypt.Config{Key: oldKey, ContentKeyWrites: shared})
	// The other writer: another process, without the injector, writing
	// authentic entities with the old key, or raw merges and deletes of
	// what the service stores.
	theirs := cryptOver[person](t, raw, ct.Name(), crypt.Config{Key: oldKey, ContentKeyWrites: shared})
	rotating := cryptOver[person](t, env.With(inj).TableService.NewClient(ct.Name()), ct.Name(), crypt.Config{Key: crypt.Keyring(newKey, oldKey), ContentKeyWrites: shared})
	readers := cryptOver[person](t, raw, ct.Name(), crypt.Config{Key: crypt.Keyring(newKey, oldKey)})
	competitors := map[string]func(pk, rk string) error{
		"insert": func(pk, rk string) error {
			p := personValue(rk)
			p.PartitionKey, p.First = pk, "Theirs"
			return theirs.Insert(ctx, &p)
		},
		"replace": func(pk, rk string) error {
			p := personValue(rk)
			p.PartitionKey, p.First = pk, "Theirs"
			return theirs.UpdateAny(ctx, &p, entity.Replace)
		},
		"merge": func(pk, rk string) error { // a clear property: allowed
			b := fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"Dept":"Theirs"}`, pk, rk)
			any := azcore.ETagAny
			_, err := raw.UpdateEntity(ctx, []byte(b), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &any})
			return err
		},
		"delete": func(pk, rk string) error {
			_, err := raw.DeleteEntity(ctx, pk, rk, nil)
			return err
		},
	}
	names := []string{"delete", "insert", "merge", "replace"}
	for ci, c := range cryptSeams() {
		for _, comp := range names {
			pk, rk := fmt.Sprintf("c%02d", ci), "e-"+comp
			p := personValue(rk)
			p.PartitionKey = pk
			if c.stored {
				if err := theirs.Insert(ctx, &p); err != nil {
					t.Fatal(err)
				}
			}
			var compErr error
			lost := inj.Stats().LostReplies
			inj.LoseNextThen(1, c.match, func(*http.Request) { compErr = competitors[comp](pk, rk) })
			var err error
			if c.write != nil {
				err = c.write(ctx, ct, p)
			} else {
				_, err = rotating.Rotate(ctx, crypt.RotateOptions{Filter: filter.PK(pk).And(filter.RK(rk))})
			}
			if inj.Stats().LostReplies == lost {
				t.Fatalf("%s / their %s: no reply was lost", c.name, comp)
			}
			where := fmt.Sprintf("%s / their %s (theirs: %v)", c.name, comp, compErr)
			// Applied by its first try: never reported refused.
			if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) {
				t.Errorf("%s: an applied write reported %v", where, err)
			}
			// What is stored is absent or authentic.
			got, gerr := readers.Get(ctx, pk, rk)
			switch {
			case errors.Is(gerr, entity.ErrNotFound):
			case gerr != nil:
				t.Errorf("%s: the stored entity does not read: %v", where, gerr)
			case got.First != "Mine" && got.First != "Theirs" && got.First != "Jonathan":
				t.Errorf("%s: stored %+v", where, got)
			}
			if c.write == nil && gerr == nil {
				m := rawEntity(t, raw, pk, rk)
				if meta := m.binary(t, crypt.MetadataProperty); !strings.Contains(string(meta), "kek-new") {
					t.Errorf("%s: the entity is not under the new key after the rotation", where)
				}
			}
		}
	}
}
