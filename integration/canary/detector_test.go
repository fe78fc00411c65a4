package canary_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/tablekit/tablekit/entity"
)

// TestSecretForms: the needles find the secret in every encoding a leak
// could take, wherever it starts and whatever surrounds it.
func TestSecretForms(t *testing.T) {
	s := newSecret(t)
	encodings := map[string]func([]byte) string{
		"base64":        base64.StdEncoding.EncodeToString,
		"base64 raw":    base64.RawStdEncoding.EncodeToString,
		"base64url":     base64.URLEncoding.EncodeToString,
		"base64url raw": base64.RawURLEncoding.EncodeToString,
		"hex":           hex.EncodeToString,
		"HEX":           func(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) },
		"plain":         func(b []byte) string { return string(b) },
	}
	for name, enc := range encodings {
		for before := range 6 {
			for after := range 4 {
				data := []byte(strings.Repeat("x", before) + s.text + strings.Repeat("y", after))
				if found := s.find(enc(data)); len(found) == 0 {
					t.Errorf("%s with %d bytes before and %d after: not found", name, before, after)
				}
			}
		}
	}
	if found := s.find(newSecret(t).text); len(found) > 0 {
		t.Errorf("another run's secret is found: %v", found)
	}
}

// TestDetectorFindsPlaintext writes the plaintext where the scan of
// TestNoPlaintextLeaves looks — an entity property in clear, as an
// Edm.Binary (base64 in the body) and in hex; a queue message
// (base64-encoded); a gzip blob; an error; a request's path, in azcore's
// log — and checks that the scan
// finds each. A plain table stands for a pattern that would leak.
func TestDetectorFindsPlaintext(t *testing.T) {
	ctx := context.Background()
	s := newSecret(t)
	logged := captureLogs(t)
	tbl, err := entity.NewTable[entity.DynamicEntity](env.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	for rk, v := range map[string]any{"clear": s.value("clear"), "binary": []byte("\x01" + s.value("binary")), "hex": hex.EncodeToString([]byte(s.value("hex")))} {
		if err := tbl.Insert(ctx, (&entity.DynamicEntity{PartitionKey: "p", RowKey: rk}).Set("Value", v)); err != nil {
			t.Fatal(err)
		}
	}
	// A key in clear: in the request's path, which azcore logs (it
	// redacts a query's $filter).
	if _, err := tbl.Get(ctx, "p", s.value("path")); !errors.Is(err, entity.ErrNotFound) {
		t.Fatal(err)
	}
	q := env.Queue(t)
	if _, err := q.EnqueueMessage(ctx, base64.StdEncoding.EncodeToString([]byte(`{"payload":"`+s.value("message")+`"}`)), nil); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("line\n" + s.value("blob") + "\n"))
	_ = zw.Close()
	c := env.Container(t)
	if _, err := c.NewBlockBlobClient("leak.gz").UploadBuffer(ctx, gz.Bytes(), &blockblob.UploadBufferOptions{}); err != nil {
		t.Fatal(err)
	}

	l := &leaks{}
	scanAccount(t, env, s, l)
	l.check(s, "an error", errors.New("failed: "+s.value("error")).Error())
	logLines := 0
	for _, line := range logged.all() {
		before := len(l.where)
		l.check(s, "a log line", line)
		if len(l.where) > before {
			logLines++
		}
	}
	for _, want := range []string{"an entity of table", "a message of queue", "blob ", "an error", "a log line"} {
		n := 0
		for _, w := range l.where {
			if strings.HasPrefix(w, want) {
				n++
			}
		}
		t.Logf("%q: found %d times", want, n)
		min := 1
		if want == "an entity of table" {
			min = 3 // in clear, base64, hex
		}
		if n < min {
			t.Errorf("the scan finds the plaintext %d times in %q, want at least %d: %v", n, want, min, l.where)
		}
	}
}
