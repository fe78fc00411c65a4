package crypt

import (
	"context"
	"reflect"
	"testing"

	"github.com/tablekit/tablekit/entity/internal/protect"
)

// resetExceptBuffers reports the fields of a pooled writer or reader that
// Close left set: every field must be zero, except slices, which may keep
// their arrays but must be empty. A field added to either type and not
// reset by Close fails this test, so that no entity's state (a content
// key, a plaintext flag) reaches the next entity read or written.
func resetExceptBuffers(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		f := rv.Field(i)
		name := rv.Type().Field(i).Name
		if f.Kind() == reflect.Slice {
			if f.Len() != 0 {
				t.Errorf("%T.%s holds %d elements after Close", v, name, f.Len())
			}
			continue
		}
		if !f.IsZero() {
			t.Errorf("%T.%s is not reset by Close", v, name)
		}
	}
}

func TestCloseForgetsTheEntity(t *testing.T) {
	key, err := NewLocalKey("k", make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	c := (&core{table: "t", key: key, cache: newKeyCache(4)}).bind(context.Background())
	pw, err := c.Writer("pk", "rk")
	if err != nil {
		t.Fatal(err)
	}
	w := pw.(*writer)
	if _, err := w.Property("Name", protect.Encrypt, 1, []byte("secret"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Property("Level", protect.Sign, 2, []byte("7"), int32(7)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if w.seed == ([keySize + nonceSize]byte{}) || w.gcm == nil {
		t.Fatal("the write made no content key")
	}
	pt := w.pt[:cap(w.pt)]
	w.Close()
	resetExceptBuffers(t, w)
	for _, b := range pt[:len("secret")+1] {
		if b != 0 {
			t.Fatalf("the writer's plaintext buffer keeps %q after Close", pt)
		}
	}

	r := &reader{c: c, pk: []byte("pk"), rk: []byte("rk"), keys: &[2]string{"pk", "rk"}, gcm: w.gcm,
		meta: []byte{1}, names: [][]byte{[]byte("Name")}, nEnc: 1, cts: []byte{1}, ctEnd: []int{1},
		aad: []byte{1}, pt: []byte("secret"), mac: []byte{1}, vals: []byte{1},
		plain: true, legacy: &legacyReader{}}
	rpt := r.pt
	r.Close()
	resetExceptBuffers(t, r)
	if string(rpt) == "secret" {
		t.Error("the reader's plaintext buffer keeps the last value after Close")
	}
}
