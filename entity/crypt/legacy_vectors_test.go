package crypt_test

import (
	"encoding/hex"
	"errors"
	"os"
	"testing"

	"github.com/tablekit/tablekit/entity/crypt"
)

type legacyPerson struct {
	PartitionKey, RowKey, ETag string
	Email                      string `table:",encrypt"`
	Name                       string `table:",encrypt"`
	Dept                       string
}

type legacyPersonNameInClear struct {
	PartitionKey, RowKey, ETag string
	Email                      string `table:",encrypt"`
	Name                       string
	Dept                       string
}

func legacyKey(t testing.TB) *crypt.LocalKey {
	kek, _ := hex.DecodeString("606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f")
	k, err := crypt.NewLocalKey("legacy-kek", kek)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestLegacyVectors reads entities as the .NET and Java v1 clients wrote
// them, built by testdata/legacy/gen.sh with openssl from the published
// algorithm.
func TestLegacyVectors(t *testing.T) {
	ctx := t.Context()
	ct := newOffline[legacyPerson](t, crypt.Config{Key: legacyKey(t), Legacy: true})
	for _, file := range []string{"dotnet.json", "java.json"} {
		t.Run(file, func(t *testing.T) {
			body, err := os.ReadFile("testdata/legacy/" + file)
			if err != nil {
				t.Fatal(err)
			}
			var p legacyPerson
			if err := ct.Unmarshal(ctx, body, &p); err != nil {
				t.Fatal(err)
			}
			if p.Email != "jonesj@contoso.com" || p.Name != "Jonathan Jones" || p.Dept != "Sales" || p.RowKey != "000123" {
				t.Fatalf("%+v", p)
			}
			// Fail closed: not without Config.Legacy, not into a type that
			// would write a decrypted property back in clear, not under
			// other keys, not with a changed ciphertext padding.
			strict := newOffline[legacyPerson](t, crypt.Config{Key: legacyKey(t)})
			wantKind(t, readErr(t, strict, body), crypt.ErrNotEncrypted)
			clear := newOffline[legacyPersonNameInClear](t, crypt.Config{Key: legacyKey(t), Legacy: true})
			wantKind(t, readErr(t, clear, body), crypt.ErrPolicy)
			other := newOffline[legacyPerson](t, crypt.Config{Key: newLocalKey(t, "legacy-kek", 9), Legacy: true})
			wantKind(t, readErr(t, other, body), crypt.ErrUnwrap)
			m := parseBody(t, body)
			ctb := m.binary(t, "Name")
			ctb[len(ctb)-1] ^= 0xff // the last byte is padding
			m.setBinary("Name", ctb)
			if err := readErr(t, ct, m.bytes(t)); !errors.Is(err, crypt.ErrTampered) {
				t.Fatalf("changed padding: %v", err)
			}
			m = parseBody(t, body)
			m["RowKey"] = "000124" // another entity's IVs: the name list garbles
			readErr(t, ct, m.bytes(t))
		})
	}
}
