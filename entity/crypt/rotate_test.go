package crypt_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
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

// badge is another type kept in the people's table.
type badge struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Code         string `table:",encrypt"`
	Floor        int32
}

// withExtra is person with an extra field, which keeps any property.
type withExtra struct {
	PartitionKey string
	RowKey       string
	ETag         string
	First        string `table:",encrypt"`
	Last         string `table:",encrypt"`
	Email        string `table:",encrypt"`
	Level        int32  `table:",sign"`
	Dept         string
	Rest         map[string]any `table:",extra"`
}

// TestReencryptKeepsOtherShapes: Rotate with Reencrypt, by a table of
// person that reads plaintext, over a table that also holds an encrypted
// badge (another type) and a plain row of another shape, rewrites only
// the people: the badge is rewrapped and reads, under the new key alone,
// as it was written; the plain row is left byte for byte. Read as person
// and rewritten, both would have lost their properties. A type with an
// extra field keeps every property, so over it Reencrypt rewrites all.
func TestReencryptKeepsOtherShapes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	oldKey, newKey := newLocalKey(t, "kek-old", 1), newLocalKey(t, "kek-new", 2)
	people, raw := onAzurite[person](t, env, crypt.Config{Key: oldKey, Types: []any{badge{}}})
	for _, rk := range []string{"p1", "p2"} {
		p := personValue(rk)
		if err := people.Insert(ctx, &p); err != nil {
			t.Fatal(err)
		}
	}
	badges := cryptOver[badge](t, raw, people.Name(), crypt.Config{Key: oldKey, Types: []any{person{}}})
	if err := badges.Insert(ctx, &badge{PartitionKey: "Sales", RowKey: "b1", Code: "door-4711", Floor: 3}); err != nil {
		t.Fatal(err)
	}
	plain := body{"PartitionKey": "Sales", "RowKey": "x1", "Pointer": "elsewhere", "Dept": "Sales"}
	putRaw(t, raw, plain)
	plainBefore := rawEntity(t, raw, "Sales", "x1")

	rotating := cryptOver[person](t, raw, people.Name(), crypt.Config{Key: crypt.Keyring(newKey, oldKey), Types: []any{badge{}}, ReadPlaintext: true})
	res, err := rotating.Rotate(ctx, crypt.RotateOptions{Reencrypt: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scanned != 4 || res.Reencrypted != 2 || res.Rewrapped != 1 || res.Skipped != 1 || res.Kept != 2 {
		t.Errorf("Reencrypt: %+v, want 2 people reencrypted, the badge rewrapped and the plain row skipped, both kept", res)
	}
	b, err := cryptOver[badge](t, raw, people.Name(), crypt.Config{Key: newKey, Types: []any{person{}}}).Get(ctx, "Sales", "b1")
	if err != nil || b.Code != "door-4711" || b.Floor != 3 {
		t.Errorf("the badge under the new key alone: %+v, %v", b, err)
	}
	if got := rawEntity(t, raw, "Sales", "x1"); fmt.Sprint(got) != fmt.Sprint(plainBefore) {
		t.Errorf("the plain row: %v, was %v", got, plainBefore)
	}
	for _, rk := range []string{"p1", "p2"} {
		if p, err := cryptOver[person](t, raw, people.Name(), crypt.Config{Key: newKey, Types: []any{badge{}}}).Get(ctx, "Sales", rk); err != nil || p.Email != "jonesj@contoso.com" {
			t.Errorf("%s under the new key alone: %+v, %v", rk, p, err)
		}
	}

	// Over a type that keeps every property, the plain row is rewritten,
	// its properties kept.
	res, err = cryptOver[withExtra](t, raw, people.Name(), crypt.Config{Key: newKey, ReadPlaintext: true}).Rotate(ctx, crypt.RotateOptions{Reencrypt: true, Filter: filter.Eq("RowKey", "x1")})
	if err != nil || res.Reencrypted != 1 || res.Kept != 0 {
		t.Fatalf("Reencrypt as a type with an extra field: %+v, %v", res, err)
	}
	if got := rawEntity(t, raw, "Sales", "x1"); got["Pointer"] != "elsewhere" || got[crypt.MetadataProperty] == nil {
		t.Errorf("the plain row, reencrypted as a type with an extra field: %v", got)
	}
}
