package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// TestLegacyIV checks the IV derivation against values computed with
// sha256sum (see testdata/legacy/gen.sh): the .NET order is RowKey,
// PartitionKey, name; the Java v1 order PartitionKey, RowKey, name.
func TestLegacyIV(t *testing.T) {
	civ := unhex(t, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf")
	if got := hex.EncodeToString(legacyIV(civ, "Sales", "000123", "Email", false)); got != "5053859227a689ed71f8907eaf90bcfc" {
		t.Errorf(".NET IV %s", got)
	}
	if got := hex.EncodeToString(legacyIV(civ, "Sales", "000123", "Email", true)); got != "f6015b2e24e5fba86a56da09f029d7b7" {
		t.Errorf("Java IV %s", got)
	}
	// The package doc's legacy wire format shows the same two vectors.
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"//\t.NET IV  " + hex.EncodeToString(legacyIV(civ, "Sales", "000123", "Email", false)) + "\n",
		"//\tJava IV  " + hex.EncodeToString(legacyIV(civ, "Sales", "000123", "Email", true)) + "\n",
		"//\tSHA-256(ContentEncryptionIV | UTF-8(RowKey + PartitionKey + name))[:16]\n",
	} {
		if !strings.Contains(string(doc), line) {
			t.Errorf("doc.go lacks %q", line)
		}
	}
}

func TestLegacyMetadata(t *testing.T) {
	good := `{"WrappedContentKey":{"KeyId":"k","EncryptedKey":"AAAA","Algorithm":"A256KW"},"EncryptionAgent":{"Protocol":"1.0","EncryptionAlgorithm":"AES_CBC_256"},"ContentEncryptionIV":"oKGio6SlpqeoqaqrrK2urw==","KeyWrappingMetadata":{"EncryptionLibrary":".NET 8.1"}}`
	if _, java, err := parseLegacyMetadata([]byte(good)); err != nil || java {
		t.Fatalf(".NET metadata: java=%v %v", java, err)
	}
	for name, doc := range map[string]string{
		"numeric algorithm, no library (Java v1)": `{"WrappedContentKey":{"KeyId":"k","EncryptedKey":"AAAA","Algorithm":"A256KW"},"EncryptionAgent":{"Protocol":"1.0","EncryptionAlgorithm":0},"ContentEncryptionIV":"oKGio6SlpqeoqaqrrK2urw=="}`,
		"library naming Java":                     `{"WrappedContentKey":{"KeyId":"k","EncryptedKey":"AAAA","Algorithm":"A256KW"},"EncryptionAgent":{"Protocol":"1.0","EncryptionAlgorithm":"AES_CBC_256"},"ContentEncryptionIV":"oKGio6SlpqeoqaqrrK2urw==","KeyWrappingMetadata":{"EncryptionLibrary":"Java 4.0.0"}}`,
	} {
		if _, java, err := parseLegacyMetadata([]byte(doc)); err != nil || !java {
			t.Errorf("%s: java=%v %v", name, java, err)
		}
	}
	for name, doc := range map[string]string{
		"not JSON":        `{`,
		"protocol 2.0":    `{"WrappedContentKey":{"KeyId":"k","EncryptedKey":"AAAA","Algorithm":"A256KW"},"EncryptionAgent":{"Protocol":"2.0","EncryptionAlgorithm":"AES_CBC_256"},"ContentEncryptionIV":"oKGio6SlpqeoqaqrrK2urw=="}`,
		"other algorithm": `{"WrappedContentKey":{"KeyId":"k","EncryptedKey":"AAAA","Algorithm":"A256KW"},"EncryptionAgent":{"Protocol":"1.0","EncryptionAlgorithm":"AES_GCM_256"},"ContentEncryptionIV":"oKGio6SlpqeoqaqrrK2urw=="}`,
		"short IV":        `{"WrappedContentKey":{"KeyId":"k","EncryptedKey":"AAAA","Algorithm":"A256KW"},"EncryptionAgent":{"Protocol":"1.0","EncryptionAlgorithm":"AES_CBC_256"},"ContentEncryptionIV":"AAAA"}`,
		"no key":          `{"WrappedContentKey":{"KeyId":"","EncryptedKey":"AAAA","Algorithm":"A256KW"},"EncryptionAgent":{"Protocol":"1.0","EncryptionAlgorithm":"AES_CBC_256"},"ContentEncryptionIV":"oKGio6SlpqeoqaqrrK2urw=="}`,
	} {
		if _, _, err := parseLegacyMetadata([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if names, err := parseLegacyNames([]byte("[Email, Name]"), true); err != nil || len(names) != 2 || names[1] != "Name" {
		t.Errorf("Java names: %q %v", names, err)
	}
	if names, err := parseLegacyNames([]byte(`["Email","Name"]`), false); err != nil || len(names) != 2 || names[0] != "Email" {
		t.Errorf(".NET names: %q %v", names, err)
	}
}

func newGCMBlock() (cipher.Block, error) { return aes.NewCipher(make([]byte, 32)) }
