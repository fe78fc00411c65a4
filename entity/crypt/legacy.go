package crypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/internal/protect"
)

// The legacy format, read only: entities encrypted by the .NET storage
// client's TableEncryptionPolicy (WindowsAzure.Storage 4.x to 9.x and
// Microsoft.Azure.Cosmos.Table), so that they can be read and written back
// in the authenticated format. It is never written.
//
// The .NET client encrypted chosen String properties with AES-256-CBC
// (PKCS#7 padding), each under one random content key per entity write and
// an IV of its own, stored each as an Edm.Binary, and added two properties:
//
//	_ClientEncryptionMetadata1  Edm.String, a JSON document:
//	  {"WrappedContentKey":{"KeyId":…,"EncryptedKey":base64,"Algorithm":…},
//	   "EncryptionAgent":{"Protocol":"1.0","EncryptionAlgorithm":"AES_CBC_256"},
//	   "ContentEncryptionIV":base64 (16 bytes),
//	   "KeyWrappingMetadata":{"EncryptionLibrary":".NET 8.x"}}
//	_ClientEncryptionMetadata2  Edm.Binary, the JSON array of the encrypted
//	  property names, itself encrypted like a property named
//	  _ClientEncryptionMetadata2
//
// The IV of a property is the first 16 bytes of
//
//	SHA-256(ContentEncryptionIV | UTF-8(RowKey + PartitionKey + name))
//
// — RowKey first: the .NET writer built the string with
// string.Join(partitionKey, rowKey, name), which joins RowKey and the name
// with the PartitionKey as separator, and its reader follows. The Java v1
// client concatenated PartitionKey + RowKey + name instead, and wrote the
// name list as "[a, b]"; the .NET reader recognised it by a missing
// KeyWrappingMetadata or an EncryptionLibrary naming Java, and so does this
// one.
//
// Nothing in the format authenticates: a changed ciphertext decrypts to
// garbage or fails its padding, an attacker who can wrap keys can forge an
// entity. Read it only to migrate (Config.Legacy), then turn it off.

const (
	legacyKeyProperty = "_ClientEncryptionMetadata1"
	legacySetProperty = "_ClientEncryptionMetadata2"
)

type legacyMetadata struct {
	WrappedContentKey struct {
		KeyId        string //lint:ignore ST1003 the .NET client's JSON name
		EncryptedKey []byte
		Algorithm    string
	}
	EncryptionAgent struct {
		Protocol            string
		EncryptionAlgorithm json.RawMessage // "AES_CBC_256", or 0 from builds without the enum-name converter
	}
	ContentEncryptionIV []byte
	KeyWrappingMetadata map[string]string
}

// parseLegacyMetadata decodes _ClientEncryptionMetadata1 and says whether
// a Java v1 client wrote it.
func parseLegacyMetadata(doc []byte) (legacyMetadata, bool, error) {
	var m legacyMetadata
	if err := json.Unmarshal(doc, &m); err != nil {
		return m, false, errMeta("legacy metadata is not the expected JSON: " + err.Error())
	}
	if m.EncryptionAgent.Protocol != "1.0" {
		return m, false, errMeta("legacy encryption protocol " + quote(m.EncryptionAgent.Protocol) + ", not 1.0")
	}
	switch alg := strings.TrimSpace(string(m.EncryptionAgent.EncryptionAlgorithm)); alg {
	case `"AES_CBC_256"`, "0":
	default:
		return m, false, errMeta("legacy encryption algorithm " + alg + ", not AES_CBC_256")
	}
	if len(m.ContentEncryptionIV) != aes.BlockSize {
		return m, false, errMeta("legacy content IV is not 16 bytes")
	}
	if m.WrappedContentKey.KeyId == "" || len(m.WrappedContentKey.EncryptedKey) == 0 {
		return m, false, errMeta("legacy metadata has no key id or wrapped key")
	}
	lib, hasLib := m.KeyWrappingMetadata["EncryptionLibrary"]
	java := m.KeyWrappingMetadata == nil || (hasLib && strings.Contains(lib, "Java"))
	return m, java, nil
}

// legacyIV derives the IV of one property (or of the name list).
func legacyIV(contentIV []byte, pk, rk, name string, java bool) []byte {
	h := sha256.New()
	h.Write(contentIV)
	if java {
		h.Write([]byte(pk + rk + name))
	} else {
		h.Write([]byte(rk + pk + name))
	}
	return h.Sum(nil)[:aes.BlockSize]
}

// cbcDecrypt decrypts AES-CBC with PKCS#7 padding.
func cbcDecrypt(b cipher.Block, iv, ct []byte) ([]byte, bool) {
	if len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
		return nil, false
	}
	pt := make([]byte, len(ct))
	cipher.NewCBCDecrypter(b, iv).CryptBlocks(pt, ct)
	pad := int(pt[len(pt)-1])
	if pad == 0 || pad > aes.BlockSize {
		return nil, false
	}
	want := bytes.Repeat([]byte{byte(pad)}, pad)
	if subtle.ConstantTimeCompare(pt[len(pt)-pad:], want) != 1 {
		return nil, false
	}
	return pt[:len(pt)-pad], true
}

// parseLegacyNames reads the decrypted name list.
func parseLegacyNames(b []byte, java bool) ([]string, error) {
	if java {
		if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
			return nil, errMeta("legacy Java name list is not [a, b]")
		}
		return strings.FieldsFunc(string(b[1:len(b)-1]), func(r rune) bool { return r == ',' || r == ' ' }), nil
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, errMeta("legacy name list is not a JSON array of strings")
	}
	return names, nil
}

// legacyReader opens the properties of one legacy entity.
type legacyReader struct {
	c      *call
	pk, rk string
	block  cipher.Block
	iv     []byte
	java   bool
	names  map[string]bool
	props  protect.Props
}

func (c *call) openLegacy(pk, rk string, props protect.Props) (*legacyReader, error) {
	edm, doc, _, err := props.Value(legacyKeyName)
	s, isString := doc.(string)
	if err != nil || edm != uint8(entity.EDMString) || !isString {
		return nil, c.readErr(pk, rk, legacyKeyProperty, ErrMetadata, "not an Edm.String", err)
	}
	m, java, err := parseLegacyMetadata([]byte(s))
	if err != nil {
		return nil, c.readErr(pk, rk, legacyKeyProperty, ErrMetadata, err.Error(), nil)
	}
	w := m.WrappedContentKey
	cek, err := c.key.Unwrap(c.ctx, w.KeyId, w.Algorithm, w.EncryptedKey)
	switch {
	case errors.Is(err, ErrUnknownKey):
		return nil, c.readErr(pk, rk, "", ErrUnknownKey, "key id "+quote(w.KeyId), nil)
	case errors.Is(err, ErrUnwrap):
		return nil, c.readErr(pk, rk, "", ErrUnwrap, "key id "+quote(w.KeyId), err)
	case err != nil:
		return nil, err
	case len(cek) != 32:
		return nil, c.readErr(pk, rk, "", ErrUnwrap, "legacy content key is not 32 bytes", nil)
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	set, ok, err := binaryProp(props, legacySetName, nil)
	if err != nil || !ok {
		return nil, c.readErr(pk, rk, legacySetProperty, readKind(err, ErrMetadata), "missing or not an Edm.Binary", err)
	}
	plain, ok := cbcDecrypt(block, legacyIV(m.ContentEncryptionIV, pk, rk, legacySetProperty, java), set)
	if !ok {
		return nil, c.readErr(pk, rk, legacySetProperty, ErrTampered, "the encrypted name list does not decrypt", nil)
	}
	list, err := parseLegacyNames(plain, java)
	if err != nil {
		return nil, c.readErr(pk, rk, legacySetProperty, ErrMetadata, err.Error(), nil)
	}
	lr := &legacyReader{c: c, pk: pk, rk: rk, block: block, iv: m.ContentEncryptionIV, java: java, names: make(map[string]bool, len(list)), props: props}
	for _, n := range list {
		lr.names[n] = true
	}
	return lr, nil
}

func (lr *legacyReader) mode(name []byte, tagged protect.Mode) (protect.Mode, error) {
	switch string(name) {
	case legacyKeyProperty, legacySetProperty:
		return protect.Reserved, nil
	}
	if !lr.names[string(name)] {
		// Stored in clear: the next write protects it as the type asks.
		return 0, nil
	}
	if lr.c.marked(lr.pk, lr.rk, string(name), tagged)&protect.Encrypt == 0 {
		return 0, lr.c.readErr(lr.pk, lr.rk, string(name), ErrPolicy, "stored encrypted by the .NET client, the type and Config do not mark it encrypt", nil)
	}
	return protect.Encrypt, nil
}

func (lr *legacyReader) open(name string) (uint8, []byte, error) {
	ct, ok, err := binaryProp(lr.props, []byte(name), nil)
	if err != nil || !ok {
		return 0, nil, lr.c.readErr(lr.pk, lr.rk, name, ErrTampered, "listed as encrypted, missing or not an Edm.Binary", err)
	}
	pt, ok := cbcDecrypt(lr.block, legacyIV(lr.iv, lr.pk, lr.rk, name, lr.java), ct)
	if !ok || !utf8.Valid(pt) {
		return 0, nil, lr.c.readErr(lr.pk, lr.rk, name, ErrTampered, "does not decrypt to a string", nil)
	}
	return uint8(entity.EDMString), pt, nil
}
