package crypt_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
)

// TestRotatePastBadEntities: a rotation meets entities it cannot move —
// metadata truncated, or stored as a String, a key nobody holds, a content
// key that does not unwrap — among 20 good ones, over several pages. It
// rewraps every good entity, lists each bad one with its keys and kind,
// and returns a *RotateError once the scan is complete; run again, it
// rewraps nothing and lists the same entities. With Reencrypt, an entity
// that fails authentication or holds a plain value of the wrong type is
// listed the same way. The end state is read back raw.
func TestRotatePastBadEntities(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	oldKey, newKey := newLocalKey(t, "kek-old", 1), newLocalKey(t, "kek-new", 2)
	ct, raw := onAzurite[person](t, env, crypt.Config{Key: oldKey})
	for i := range 20 {
		e := personValue(fmt.Sprintf("%03d", i*10))
		if err := ct.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	bad := map[string]error{"045meta": crypt.ErrMetadata, "055string": crypt.ErrTampered, "065unknown": crypt.ErrUnknownKey, "075unwrap": crypt.ErrUnwrap}
	for rk := range bad {
		e := personValue(rk)
		w := ct
		switch rk {
		case "065unknown":
			w = cryptOver[person](t, raw, ct.Name(), crypt.Config{Key: newLocalKey(t, "kek-gone", 3)})
		case "075unwrap":
			w = cryptOver[person](t, raw, ct.Name(), crypt.Config{Key: newLocalKey(t, "kek-old", 4)})
		}
		if err := w.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
		m := rawEntity(t, raw, "Sales", rk)
		switch rk {
		case "045meta":
			m.setBinary(crypt.MetadataProperty, m.binary(t, crypt.MetadataProperty)[:9])
		case "055string":
			delete(m, crypt.MetadataProperty+"@odata.type")
		}
		putRaw(t, raw, m)
	}
	rotating := cryptOver[person](t, raw, ct.Name(), crypt.Config{Key: crypt.Keyring(newKey, oldKey)})
	check := func(run string, res crypt.RotateResult, err error, rewrapped, current int) {
		t.Helper()
		var re *crypt.RotateError
		if !errors.As(err, &re) || !errors.Is(err, entity.ErrDecode) {
			t.Fatalf("%s: %v, want a *RotateError", run, err)
		}
		if res.Rewrapped != rewrapped || res.Current != current || res.Scanned != 24 || res.Next != "" || len(res.Failed) != len(bad) {
			t.Fatalf("%s: %+v", run, res)
		}
		for _, f := range res.Failed {
			if f.PartitionKey != "Sales" || !errors.Is(f.Err, bad[f.RowKey]) || !errors.Is(err, bad[f.RowKey]) {
				t.Errorf("%s: failure %+v, want %v", run, f, bad[f.RowKey])
			}
		}
	}
	res, err := rotating.Rotate(ctx, crypt.RotateOptions{PageSize: 5})
	check("first run", res, err, 20, 0)
	if msg := err.Error(); !strings.HasPrefix(msg, "crypt: Rotate: 4 entities not rotated: ") || strings.Count(msg, "crypt:") != 1 || !strings.Contains(msg, `PartitionKey "Sales", RowKey "045meta"`) {
		t.Errorf("the error reads %q", msg)
	}
	res, err = rotating.Rotate(ctx, crypt.RotateOptions{PageSize: 5})
	check("second run", res, err, 0, 20)
	// Raw: every good entity under the new key, the bad ones as they were.
	onlyNew := cryptOver[person](t, raw, ct.Name(), crypt.Config{Key: newKey})
	var good []string
	for _, b := range rawBodies(t, raw) {
		m := parseBody(t, b)
		rk := m["RowKey"].(string)
		if _, isBad := bad[rk]; isBad {
			continue
		}
		if p, err := onlyNew.Get(ctx, "Sales", rk); err != nil || p.Email != "jonesj@contoso.com" {
			t.Errorf("%s under the new key alone: %+v %v", rk, p, err)
		}
		good = append(good, rk)
	}
	if len(good) != 20 {
		t.Fatalf("%d good entities stored", len(good))
	}

	// Reencrypt: two more that do not read, among the good ones.
	for rk, change := range map[string]func(body){
		"015tampered": func(m body) { c := m.binary(t, "First"); c[20] ^= 1; m.setBinary("First", c) },
		"025plain":    func(m body) { m["Dept"] = 7 },
	} {
		e := personValue(rk)
		if err := rotating.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
		m := rawEntity(t, raw, "Sales", rk)
		change(m)
		putRaw(t, raw, m)
	}
	res, err = rotating.Rotate(ctx, crypt.RotateOptions{PageSize: 7, Reencrypt: true})
	var failed []string
	for _, f := range res.Failed {
		failed = append(failed, f.RowKey)
	}
	slices.Sort(failed)
	if want := []string{"015tampered", "025plain", "045meta", "055string", "065unknown", "075unwrap"}; !slices.Equal(failed, want) || res.Reencrypted != 20 || !errors.Is(err, crypt.ErrTampered) {
		t.Fatalf("reencrypting: failed %v, %+v, %v", failed, res, err)
	}
}
