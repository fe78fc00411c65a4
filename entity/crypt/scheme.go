package crypt

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/protect"
)

// core is the part of a Table that does not depend on its entity type.
type core struct {
	table     string // lower case: bound into every ciphertext and signature
	key       KeyWrapper
	encrypt   func(partitionKey, rowKey, property string) bool
	sign      func(partitionKey, rowKey, property string) bool
	beacons   map[string]bool
	beaconKey []byte
	legacy    bool
	plaintext bool
}

// call is the protection scheme of one call: the core and the call's
// context, which reaches the key-encryption key.
type call struct {
	*core
	ctx context.Context
}

func (c *core) bind(ctx context.Context) *call { return &call{core: c, ctx: ctx} }

func (c *call) Reserved(name string) bool {
	return strings.HasPrefix(name, ReservedPrefix)
}

// marked is the protection the entity type and the Config ask for.
func (c *core) marked(pk, rk, name string, tagged protect.Mode) protect.Mode {
	m := tagged
	if c.encrypt != nil && c.encrypt(pk, rk, name) {
		m |= protect.Encrypt
	}
	if c.sign != nil && c.sign(pk, rk, name) {
		m |= protect.Sign
	}
	if m&protect.Encrypt != 0 {
		m &^= protect.Sign // encryption authenticates too
	}
	return m
}

// propertyAAD appends the authenticated data of one property.
func (c *core) entityAAD(b []byte, label, pk, rk string) []byte {
	b = append(b, label...)
	b = appendLP(b, c.table)
	b = appendLP(b, pk)
	return appendLP(b, rk)
}

func newGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// beacon computes the equality beacon of a typed value.
func (c *core) beacon(name string, edm entity.EDMType, v any) ([]byte, error) {
	msg := append(make([]byte, 0, 64+len(name)), beaconLabel...)
	msg = appendLP(msg, c.table)
	msg = appendLP(msg, name)
	msg = append(msg, byte(edm))
	msg, err := appendCanonical(msg, edm, v)
	if err != nil {
		return nil, err
	}
	h := hmac.New(sha256.New, c.beaconKey)
	h.Write(msg)
	return h.Sum(nil)[:beaconSize], nil
}

// --- writing ---

// writer protects one entity write: a fresh content key, a fresh nonce per
// property, and at the end the wrapped key, the protected set and the
// entity's signature.
type writer struct {
	c      *call
	pk, rk string
	cek    [keySize]byte
	gcm    cipher.AEAD
	aad    []byte // the entity's AAD prefix; a property's name is appended
	pt     []byte // plaintext scratch

	encrypted, signed, beacons []string
	cts, beaconVals            [][]byte
	signedVals                 []byte // EDM type | lp(canonical value) per signed property
}

func (c *call) Writer(pk, rk string) (protect.Writer, error) {
	return &writer{c: c, pk: pk, rk: rk}, nil
}

func (w *writer) Mode(name string, tagged protect.Mode) (protect.Mode, error) {
	if strings.HasPrefix(name, ReservedPrefix) {
		return 0, &entity.ValidationError{Property: name, Rule: entity.RuleReservedName, Limit: "names starting with " + ReservedPrefix + " are written by package crypt"}
	}
	m := w.c.marked(w.pk, w.rk, name, tagged)
	if m&protect.Encrypt != 0 && w.c.beacons[name] {
		m |= protect.Beacon
	}
	return m, nil
}

// start makes the entity's content key, once.
func (w *writer) start() error {
	if w.gcm != nil {
		return nil
	}
	if _, err := rand.Read(w.cek[:]); err != nil {
		return err
	}
	g, err := newGCM(w.cek[:])
	if err != nil {
		return err
	}
	w.gcm = g
	w.aad = w.c.entityAAD(make([]byte, 0, 64+len(w.pk)+len(w.rk)), propertyAADLabel, w.pk, w.rk)
	return nil
}

func (w *writer) Property(name string, mode protect.Mode, edm uint8, text []byte, value any) ([]byte, error) {
	if mode&protect.Encrypt == 0 {
		b, err := appendSigned(w.signedVals, entity.EDMType(edm), value)
		if err != nil {
			return nil, &entity.ValidationError{Property: name, Rule: entity.RulePropertyType, Value: err.Error()}
		}
		w.signed = append(w.signed, name)
		w.signedVals = b
		return nil, nil
	}
	if err := w.start(); err != nil {
		return nil, err
	}
	w.pt = append(append(w.pt[:0], edm), text...)
	out := make([]byte, 1+nonceSize, propertyOverhead+len(w.pt))
	out[0] = formatVersion
	if _, err := rand.Read(out[1 : 1+nonceSize]); err != nil {
		return nil, err
	}
	aad := appendLP(w.aad, name)
	out = w.gcm.Seal(out, out[1:1+nonceSize], w.pt, aad)
	w.encrypted = append(w.encrypted, name)
	w.cts = append(w.cts, out)
	if mode&protect.Beacon != 0 {
		bv, err := w.c.beacon(name, entity.EDMType(edm), value)
		if err != nil {
			return nil, &entity.ValidationError{Property: name, Rule: entity.RulePropertyType, Value: err.Error()}
		}
		w.beacons = append(w.beacons, name)
		w.beaconVals = append(w.beaconVals, bv)
	}
	return out, nil
}

func (w *writer) Finish(add func(name string, value []byte) error) error {
	if err := w.start(); err != nil {
		return err
	}
	keyID, alg, wrapped, err := w.c.key.Wrap(w.c.ctx, w.cek[:])
	if err != nil {
		return fmt.Errorf("crypt: wrapping the content key: %w", err)
	}
	meta := appendEnvelope(make([]byte, 0, 128+len(keyID)+len(wrapped)), keyID, alg, wrapped)
	listStart := len(meta)
	meta = appendList(meta, w.encrypted)
	meta = appendList(meta, w.signed)
	meta = appendList(meta, w.beacons)
	mac := w.c.macInput(w.pk, w.rk, meta[listStart:], w.cts, w.signedVals, w.beaconVals)
	nonce := meta[len(meta) : len(meta)+nonceSize]
	meta = meta[:len(meta)+nonceSize]
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	meta = w.gcm.Seal(meta, nonce, nil, mac)
	if err := add(MetadataProperty, meta); err != nil {
		return err
	}
	for i, name := range w.beacons {
		if err := add(BeaconPrefix+name, w.beaconVals[i]); err != nil {
			return err
		}
	}
	return nil
}

// appendSigned appends a signed property's part of the signed data: its
// EDM type and its length-prefixed canonical value.
func appendSigned(b []byte, edm entity.EDMType, v any) ([]byte, error) {
	val, err := appendCanonical(nil, edm, v)
	if err != nil {
		return b, err
	}
	return appendLPBytes(append(b, byte(edm)), val), nil
}

// macInput is what an entity's signature covers (see format.go).
func (c *core) macInput(pk, rk string, lists []byte, cts [][]byte, signedVals []byte, beaconVals [][]byte) []byte {
	n := 64 + len(pk) + len(rk) + len(lists) + len(signedVals)
	for _, ct := range cts {
		n += len(ct) + 4
	}
	n += len(beaconVals) * (beaconSize + 1)
	b := c.entityAAD(make([]byte, 0, n), entityMACLabel, pk, rk)
	b = append(b, formatVersion, algAESGCM)
	b = append(b, lists...)
	for _, ct := range cts {
		b = appendLPBytes(b, ct)
	}
	b = append(b, signedVals...)
	for _, bv := range beaconVals {
		b = appendLPBytes(b, bv)
	}
	return b
}

// --- reading ---

// reader opens one entity read: the content key unwrapped, the signature
// checked over the whole protected set before any property is decoded.
type reader struct {
	c      *call
	pk, rk string
	gcm    cipher.AEAD
	names  []string // the protected set
	modes  []protect.Mode
	cts    [][]byte // ciphertexts, by index in names (nil for signed)
	aad    []byte
	pt     []byte
	plain  bool // no metadata, read as plaintext (Config.ReadPlaintext)
	legacy *legacyReader
}

func (c *call) readErr(pk, rk, prop string, kind error, reason string, err error) error {
	return &ReadError{PartitionKey: pk, RowKey: rk, Property: prop, Kind: kind, Reason: reason, Err: err}
}

func (c *call) Reader(pk, rk string, props protect.Props) (protect.Reader, error) {
	meta, ok, err := props.Binary(MetadataProperty)
	if err != nil {
		return nil, c.readErr(pk, rk, MetadataProperty, ErrMetadata, "", err)
	}
	if !ok {
		if props.Has(legacyKeyProperty) {
			if !c.legacy {
				return nil, c.readErr(pk, rk, "", ErrNotEncrypted, "written by the .NET client's TableEncryptionPolicy: set Config.Legacy to read it", nil)
			}
			lr, err := c.openLegacy(pk, rk, props)
			if err != nil {
				return nil, err
			}
			return &reader{c: c, pk: pk, rk: rk, legacy: lr}, nil
		}
		if c.plaintext {
			return &reader{c: c, pk: pk, rk: rk, plain: true}, nil
		}
		return nil, c.readErr(pk, rk, "", ErrNotEncrypted, "no "+MetadataProperty+" property", nil)
	}
	m, err := parseMetadata(meta)
	if err != nil {
		return nil, c.readErr(pk, rk, MetadataProperty, ErrMetadata, err.Error(), nil)
	}
	cek, err := c.key.Unwrap(c.ctx, m.keyID, m.wrapAlg, m.wrapped)
	switch {
	case errors.Is(err, ErrUnknownKey):
		return nil, c.readErr(pk, rk, "", ErrUnknownKey, "key id "+quote(m.keyID), nil)
	case errors.Is(err, ErrUnwrap):
		return nil, c.readErr(pk, rk, "", ErrUnwrap, "key id "+quote(m.keyID), err)
	case err != nil:
		return nil, fmt.Errorf("crypt: unwrapping the content key of entity (%s, %s): %w", quote(pk), quote(rk), err)
	case len(cek) != keySize:
		return nil, c.readErr(pk, rk, "", ErrUnwrap, "content key of "+itoa(len(cek))+" bytes", nil)
	}
	g, err := newGCM(cek)
	if err != nil {
		return nil, err
	}
	r := &reader{c: c, pk: pk, rk: rk, gcm: g}
	n := len(m.encrypted) + len(m.signed)
	r.names = make([]string, 0, n)
	r.modes = make([]protect.Mode, 0, n)
	r.cts = make([][]byte, 0, n)
	for _, name := range m.encrypted {
		ct, ok, err := props.Binary(name)
		if err != nil || !ok {
			return nil, c.readErr(pk, rk, name, ErrTampered, "listed as encrypted, missing or not Edm.Binary", err)
		}
		r.names = append(r.names, name)
		r.modes = append(r.modes, protect.Encrypt)
		r.cts = append(r.cts, ct)
	}
	var signedVals []byte
	for _, name := range m.signed {
		edm, v, ok, err := props.Value(name)
		if err != nil || !ok {
			return nil, c.readErr(pk, rk, name, ErrTampered, "listed as signed, missing or malformed", err)
		}
		if signedVals, err = appendSigned(signedVals, entity.EDMType(edm), v); err != nil {
			return nil, c.readErr(pk, rk, name, ErrTampered, err.Error(), nil)
		}
		r.names = append(r.names, name)
		r.modes = append(r.modes, protect.Sign)
		r.cts = append(r.cts, nil)
	}
	beaconVals := make([][]byte, len(m.beacons))
	for i, name := range m.beacons {
		bv, ok, err := props.Binary(BeaconPrefix + name)
		if err != nil || !ok {
			return nil, c.readErr(pk, rk, BeaconPrefix+name, ErrTampered, "listed beacon missing or not Edm.Binary", err)
		}
		beaconVals[i] = bv
	}
	// Every reserved property present must be one this entity lists: a
	// beacon added by someone else would make filters match wrongly.
	var stray string
	props.Each(func(name []byte) bool {
		if !strings.HasPrefix(string(name), ReservedPrefix) || string(name) == MetadataProperty {
			return true
		}
		if strings.HasPrefix(string(name), BeaconPrefix) {
			for _, b := range m.beacons {
				if string(name[len(BeaconPrefix):]) == b {
					return true
				}
			}
		}
		stray = string(name)
		return false
	})
	if stray != "" {
		return nil, c.readErr(pk, rk, stray, ErrTampered, "reserved property not listed in the metadata", nil)
	}
	mac := c.macInput(pk, rk, m.lists, r.cts[:len(m.encrypted)], signedVals, beaconVals)
	if _, err := g.Open(nil, m.nonce[:], m.tag[:], mac); err != nil {
		return nil, c.readErr(pk, rk, "", ErrTampered, "the entity's signature does not match its protected properties", nil)
	}
	r.aad = c.entityAAD(make([]byte, 0, 64+len(pk)+len(rk)), propertyAADLabel, pk, rk)
	return r, nil
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func (r *reader) Mode(name []byte, tagged protect.Mode) (protect.Mode, error) {
	if strings.HasPrefix(string(name), ReservedPrefix) {
		return protect.Reserved, nil
	}
	if r.legacy != nil {
		return r.legacy.mode(name, tagged)
	}
	var marked protect.Mode
	if tagged != 0 || r.c.encrypt != nil || r.c.sign != nil {
		marked = r.c.marked(r.pk, r.rk, string(name), tagged) & (protect.Encrypt | protect.Sign)
	}
	if r.plain {
		return 0, nil
	}
	var stored protect.Mode
	for i, n := range r.names {
		if n == string(name) {
			stored = r.modes[i]
			break
		}
	}
	if stored != marked {
		return 0, r.c.readErr(r.pk, r.rk, string(name), ErrPolicy, "stored "+modeName(stored)+", the type and Config ask for "+modeName(marked), nil)
	}
	return stored, nil
}

func modeName(m protect.Mode) string {
	switch {
	case m&protect.Encrypt != 0:
		return "encrypted"
	case m&protect.Sign != 0:
		return "signed"
	}
	return "in clear"
}

func (r *reader) Open(name string) (uint8, []byte, error) {
	if r.legacy != nil {
		return r.legacy.open(name)
	}
	var ct []byte
	for i, n := range r.names {
		if n == name {
			ct = r.cts[i]
			break
		}
	}
	if len(ct) < propertyOverhead+1 || ct[0] != formatVersion {
		return 0, nil, r.c.readErr(r.pk, r.rk, name, ErrTampered, "ciphertext too short or of an unknown version", nil)
	}
	pt, err := r.gcm.Open(r.pt[:0], ct[1:1+nonceSize], ct[1+nonceSize:], appendLP(r.aad, name))
	if err != nil {
		return 0, nil, r.c.readErr(r.pk, r.rk, name, ErrTampered, "ciphertext does not authenticate for this table, entity and property", nil)
	}
	r.pt = pt
	if pt[0] < uint8(entity.EDMString) || pt[0] > uint8(entity.EDMBinary) {
		return 0, nil, r.c.readErr(r.pk, r.rk, name, ErrTampered, "unknown EDM type in the plaintext", nil)
	}
	return pt[0], pt[1:], nil
}
