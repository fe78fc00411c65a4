package crypt_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
)

// TestTamperBetweenRowsOnAzurite changes stored rows with a raw aztables
// client, as someone with write access to the table but not to the keys
// could: values moved between rows and between properties, beacons swapped
// or removed, one property rolled back to an older version. Each changed
// row fails closed with ErrTampered, through Get and through a beacon
// query; the untouched row reads. A whole row rolled back to an older
// version of itself reads, as the package doc says (not detected).
func TestTamperBetweenRowsOnAzurite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ct, raw := onAzurite[person](t, env, crypt.Config{Beacons: []string{"Email"}, BeaconKey: bytes.Repeat([]byte{9}, 32)})
	write := func(rk, email string) body {
		e := personValue(rk)
		e.Email = email
		if err := ct.Upsert(ctx, &e, entity.Replace); err != nil {
			t.Fatal(err)
		}
		return rawEntity(t, raw, "Sales", rk)
	}
	a := write("a", "a@contoso.com")
	cases := map[string]func(m body){
		"a ciphertext from another row": func(m body) { m["Email"] = a["Email"] },
		"every protected value from another row": func(m body) {
			for _, p := range []string{"First", "Last", "Email", "Level", crypt.MetadataProperty, crypt.BeaconPrefix + "Email"} {
				m[p] = a[p]
			}
		},
		"two ciphertexts swapped":          func(m body) { m["First"], m["Last"] = m["Last"], m["First"] },
		"a ciphertext moved to a property": func(m body) { m["First"] = m["Email"] },
		"the beacon of another value":      func(m body) { m[crypt.BeaconPrefix+"Email"] = a[crypt.BeaconPrefix+"Email"] },
		"the beacon removed": func(m body) {
			delete(m, crypt.BeaconPrefix+"Email")
			delete(m, crypt.BeaconPrefix+"Email@odata.type")
		},
		"a signed value changed": func(m body) { m["Level"] = 4 },
	}
	for name, change := range cases {
		rk := "b-" + name
		m := write(rk, "b@contoso.com")
		change(m)
		putRaw(t, raw, m)
		if _, err := ct.Get(ctx, "Sales", rk); !errors.Is(err, crypt.ErrTampered) {
			t.Errorf("%s: Get %v, want ErrTampered", name, err)
		}
		for _, email := range []string{"a@contoso.com", "b@contoso.com"} {
			for e, err := range ct.Query(ctx, entity.Query{Filter: filter.PK("Sales").And(filter.RK(rk), filter.Eq("Email", email))}) {
				if !errors.Is(err, crypt.ErrTampered) {
					t.Errorf("%s: the beacon query for %s read %+v %v", name, email, e, err)
				}
			}
		}
	}
	// One property rolled back: its older ciphertext is under the older
	// content key.
	old := write("c", "old@contoso.com")
	m := write("c", "new@contoso.com")
	m["Email"] = old["Email"]
	putRaw(t, raw, m)
	if _, err := ct.Get(ctx, "Sales", "c"); !errors.Is(err, crypt.ErrTampered) {
		t.Errorf("one property rolled back: %v", err)
	}
	// The whole row rolled back: authentic, and read as such.
	putRaw(t, raw, old) // c's older version, whole, in place
	if got, err := ct.Get(ctx, "Sales", "c"); err != nil || got.Email != "old@contoso.com" {
		t.Errorf("a whole row rolled back: %+v %v", got, err)
	}
	if got, err := ct.Get(ctx, "Sales", "a"); err != nil || got.Email != "a@contoso.com" {
		t.Errorf("the untouched row: %+v %v", got, err)
	}
}
