package crypt_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity/crypt"
)

// wireEmployee is the entity of the package doc's wire-format example.
type wireEmployee struct {
	PartitionKey string
	RowKey       string
	Email        string `table:",encrypt"`
	Level        int32  `table:",sign"`
	Dept         string
}

// lp is the doc's lp(x): x's length as a uvarint, then x.
func lp(b []byte, x string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(x))), x...)
}

// TestWireFormat writes the package doc's example entity with the
// example's content key and nonce, checks that the doc shows exactly the
// body and the bytes the code writes, and then reads it back following the
// doc alone, with nothing of this package but LocalKey's RFC 3394 unwrap:
// decrypting Email, checking the signature over the protected set and
// recomputing the beacon.
func TestWireFormat(t *testing.T) {
	kek, err := crypt.NewLocalKey("kek-1", bytes.Repeat([]byte{0x42}, 32))
	if err != nil {
		t.Fatal(err)
	}
	beaconKey := bytes.Repeat([]byte{0x07}, 32)
	ct := newOffline[wireEmployee](t, crypt.Config{Key: kek, Table: "employees", Beacons: []string{"Email"}, BeaconKey: beaconKey})
	var seed []byte
	for i := range 32 {
		seed = append(seed, byte(i)) // the content key 00 01 … 1f
	}
	nonce := []byte{0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab}
	crypt.SetRandom(ct, bytes.NewReader(append(bytes.Clone(seed), nonce...)))
	e := wireEmployee{PartitionKey: "Sales", RowKey: "000123", Email: "jonesj@contoso.com", Level: 3, Dept: "Sales"}
	body, err := ct.Marshal(t.Context(), &e)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	// The body, one member per line, as the doc shows it.
	var indented bytes.Buffer
	if err := json.Indent(&indented, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(indented.String(), "\n") {
		want = append(want, "//\t"+l)
	}
	m := parseBody(t, body)
	email, meta, beacon := m.binary(t, "Email"), m.binary(t, crypt.MetadataProperty), m.binary(t, crypt.BeaconPrefix+"Email")
	field := func(b []byte, what string) string { return fmt.Sprintf("//\t  %-10s %s", what, hex.EncodeToString(b)) }
	want = append(want, "//\tEmail, "+fmt.Sprint(len(email))+" bytes:",
		field(email[:1], "version"),
		field(email[1:13], "nonce"),
		field(email[13:len(email)-16], "ciphertext"),
		field(email[len(email)-16:], "tag"))
	// _tkEnc, field by field.
	r := meta
	take := func(n int) []byte { out := r[:n]; r = r[n:]; return out }
	want = append(want, "//\t"+crypt.MetadataProperty+", "+fmt.Sprint(len(meta))+" bytes:",
		field(take(1), "version"),
		field(take(1), "algorithm"))
	for _, what := range []string{"key id", "wrap alg"} {
		n := int(r[0])
		want = append(want, field(take(1+n), what))
	}
	n := int(r[0])
	want = append(want, field(take(1+n), "wrapped"))
	for _, what := range []string{"encrypted", "signed", "beacons"} {
		want = append(want, field(take(7), what))
	}
	sigNonce, sigTag := take(12), take(16)
	want = append(want, field(sigNonce, "nonce"), field(sigTag, "tag"))
	if len(r) != 0 {
		t.Fatalf("%d bytes of metadata left", len(r))
	}
	want = append(want, "//\t"+crypt.BeaconPrefix+"Email, 16 bytes:", field(beacon, "beacon"))
	var missing []string
	for _, l := range want {
		if !bytes.Contains(doc, []byte(l+"\n")) {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		t.Errorf("doc.go does not show what the code writes; missing lines:\n%s\nthe whole example:\n%s", strings.Join(missing, "\n"), strings.Join(want, "\n"))
	}

	// Read it back by the doc alone.
	cek, err := kek.Unwrap(t.Context(), "kek-1", "A256KW", meta[2+6+7+1:2+6+7+1+40])
	if err != nil || !bytes.Equal(cek, seed) {
		t.Fatalf("unwrapped %x %v, want the content key", cek, err)
	}
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	aad := lp(lp(lp(lp([]byte("tablekit/v1/property\x00"), "employees"), "Sales"), "000123"), "Email")
	pt, err := gcm.Open(nil, email[1:13], email[13:], aad)
	if err != nil || string(pt) != "\x01jonesj@contoso.com" {
		t.Fatalf("Email decrypts to %q %v", pt, err)
	}
	lists := meta[2+6+7+41 : len(meta)-28]
	mac := lp(lp(lp([]byte("tablekit/v1/entity\x00"), "employees"), "Sales"), "000123")
	mac = append(mac, 1, 1)
	mac = append(mac, lists...)
	mac = lp(mac, string(email))                 // lp(ciphertext): Email's whole stored value
	mac = lp(append(mac, 2), "\x00\x00\x00\x03") // Level: Int32 (2), 3 big-endian
	mac = lp(mac, string(beacon))
	if _, err := gcm.Open(nil, sigNonce, sigTag, mac); err != nil {
		t.Fatalf("the signature does not verify as documented: %v", err)
	}
	h := hmac.New(sha256.New, beaconKey)
	h.Write(append(lp(lp([]byte("tablekit/v1/beacon\x00"), "employees"), "Email"), append([]byte{1}, "jonesj@contoso.com"...)...))
	if sum := h.Sum(nil); !bytes.Equal(sum[:16], beacon) {
		t.Fatalf("beacon %x, want %x", beacon, sum[:16])
	}
	// And the package reads what it wrote.
	var out wireEmployee
	if err := ct.Unmarshal(t.Context(), body, &out); err != nil || out != e {
		t.Fatalf("read back %+v %v", out, err)
	}
}

// TestPlaintextOfEveryType decrypts, by the Wire format section alone, each
// encrypted property of allTypesValue and checks the sealed plaintext: the
// EDM type and the value's text as the service's JSON carries it,
// unescaped, and a Binary's bytes — whichever way the codec takes the text
// (read from the bytes it wrote for a struct field, or parsed back from the
// member for a PropertyMarshaler).
func TestPlaintextOfEveryType(t *testing.T) {
	ct := newOffline[allTypes](t, crypt.Config{})
	key := bytes.Repeat([]byte{0x5a}, 32)
	crypt.SetRandom(ct, bytes.NewReader(append(bytes.Clone(key), make([]byte, 12)...)))
	in := allTypesValue()
	body, err := ct.Marshal(t.Context(), &in)
	if err != nil {
		t.Fatal(err)
	}
	var props map[string]any
	if err := json.Unmarshal(body, &props); err != nil {
		t.Fatal(err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Str": "\x01secret string é 😀", "I32": "\x02-2147483648", "I64": "\x039007199254740993",
		"U16": "\x0265535", "F64": "\x0472500.5", "F32": "\x040.1", "Whole": "\x042.0", "Bool": "\x05true",
		"Time": "\x062012-03-04T05:06:07.1234567Z", "GUID": "\x070b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901",
		"Bin": "\x08\x00\x01\x02\xff/+", "Ptr": "\x01pointed-to secret", "Addr": "\x01192.0.2.33",
		"JSON": "\x01[\"json\",\"secret\"]", "Hook": "\x03-42", "Quoted": "\x01" + in.Quoted,
	}
	for name, w := range want {
		s, _ := props[name].(string)
		stored, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(stored) < 1+12+16 || stored[0] != 1 {
			t.Errorf("%s: stored %q", name, s)
			continue
		}
		aad := lp(lp(lp(lp([]byte("tablekit/v1/property\x00"), "employees"), "Sales"), "000123"), name)
		pt, err := gcm.Open(nil, stored[1:13], stored[13:], aad)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if string(pt) != w {
			t.Errorf("%s sealed %q, want %q", name, pt, w)
		}
	}
}
