package crypt

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/internal/protect"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// core is the part of a Table that does not depend on its entity type.
type core struct {
	table   string // lower case: bound into every ciphertext and signature
	key     KeyWrapper
	encrypt func(partitionKey, rowKey, property string) bool
	sign    func(partitionKey, rowKey, property string) bool
	// encryptable: the only properties encrypt may mark (Config.Encryptable);
	// nil means any.
	encryptable map[string]bool
	beacons     map[string]bool
	beaconKey   []byte
	beaconMAC   sync.Pool // of hash.Hash: HMAC-SHA256 under beaconKey
	// tags: the modes the entity type's tags give its properties, by name,
	// so that a view of another type (entity.ViewAs: a pattern's property
	// bags) protects them as the entity type does.
	tags      map[string]protect.Mode
	legacy    bool
	plaintext bool
	cache     *keyCache // nil when Config.KeyCache is negative
	sharing   *sharing  // nil unless Config.ContentKeyWrites > 1
	// random, when set (by tests, for the documented example of the wire
	// format), replaces crypto/rand as the source of content keys and
	// nonces.
	random io.Reader
	// lastKey keeps the strings of the key id and algorithm last read, so
	// that reading entities under one key allocates them once.
	lastKey atomic.Pointer[[2]string]
	// lastLists keeps the protected set last read and found valid, so that
	// reading entities of one shape parses and checks it once.
	lastLists atomic.Pointer[parsedLists]
}

// call is the protection scheme of one call: the core and the call's
// context, which reaches the key-encryption key.
type call struct {
	*core
	ctx context.Context
	// beaconed: the call's filter matches beacons, so every entity read
	// must hold only the reserved properties its metadata lists.
	beaconed bool
	// op names the operation in a *ReadError's text: "Get", "Query", …;
	// "" for one that does not say (a *ReadError then says "read").
	op string
}

func (c *core) bind(ctx context.Context) *call { return &call{core: c, ctx: ctx} }

var callPool = sync.Pool{New: func() any { return new(call) }}

// borrow is bind for one Marshal or Unmarshal, whose scheme nothing keeps
// once it returns (its Writer or Reader is closed, errors copy op): give
// it back with release.
func (c *core) borrow(ctx context.Context, op string) *call {
	k := callPool.Get().(*call)
	k.core, k.ctx, k.op = c, ctx, op
	return k
}

func (k *call) release() {
	*k = call{}
	callPool.Put(k)
}

func (c *call) Reserved(name string) bool {
	return strings.HasPrefix(name, ReservedPrefix)
}

// marked is the protection the entity type and the Config ask for.
func (c *core) marked(pk, rk, name string, tagged protect.Mode) protect.Mode {
	m := tagged | c.tags[name]
	if name == wtoken.Property {
		// The write token is added to the body after it is encoded, in
		// clear, whatever Config says.
		return m
	}
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

// mayEncrypt reports whether Config.Encrypt may mark the property for
// some keys.
func (c *core) mayEncrypt(name string) bool {
	return c.encrypt != nil && !systemProperty(name) && name != wtoken.Property && (c.encryptable == nil || c.encryptable[name])
}

// entityAAD appends the label and the entity's identity: the start of a
// property's authenticated data and of the signed data.
func entityAAD[S string | []byte](c *core, b []byte, label string, pk, rk S) []byte {
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

// keyStrings returns the key id and algorithm as strings, reusing the last
// ones when they are the same.
func (c *core) keyStrings(id, alg []byte) (string, string) {
	if last := c.lastKey.Load(); last != nil && last[0] == string(id) && last[1] == string(alg) {
		return last[0], last[1]
	}
	k := [2]string{string(id), string(alg)}
	c.lastKey.Store(&k)
	return k[0], k[1]
}

// beaconState is an HMAC under the beacon key and a buffer for its
// message and sum, pooled.
type beaconState struct {
	h   hash.Hash
	buf []byte
}

// beacon appends the equality beacon of a typed value to dst.
func (c *core) beacon(dst []byte, name string, edm entity.EDMType, v any) ([]byte, error) {
	st, _ := c.beaconMAC.Get().(*beaconState)
	if st == nil {
		st = &beaconState{h: hmac.New(sha256.New, c.beaconKey)}
	}
	defer c.beaconMAC.Put(st)
	msg := append(st.buf[:0], beaconLabel...)
	msg = appendLP(msg, c.table)
	msg = appendLP(msg, name)
	msg = append(msg, byte(edm))
	msg, err := appendCanonical(msg, edm, v)
	st.buf = msg
	if err != nil {
		return dst, err
	}
	st.h.Reset()
	st.h.Write(msg)
	msg = slices.Grow(msg, sha256.Size)
	sum := st.h.Sum(msg[len(msg):]) // after the message, in the same buffer
	st.buf = msg[:0]
	clear(msg) // a canonical value is plaintext
	return append(dst, sum[:beaconSize]...), nil
}

// --- writing ---

// writer protects one entity write: a fresh content key, a fresh nonce per
// property, and at the end the wrapped key, the protected set and the
// entity's signature. Writers are pooled; Finish returns one.
type writer struct {
	c      *call
	pk, rk string
	// seed is the content key, then the first nonce: one random read per
	// entity. Each next nonce adds one to the last 8 bytes, so the nonces
	// of one content key never repeat (a key seals at most 256 values).
	seed [keySize + nonceSize]byte
	gcm  cipher.AEAD
	// shared is the content key when it serves several writes
	// (Config.ContentKeyWrites); seed then holds only the first nonce.
	shared *sharedKey

	aad, pt, meta, mac []byte
	out                []protect.Property

	encrypted, signed, beacons []string
	cts                        []byte // ciphertexts, one after another
	ctEnd                      []int  // where each ends in cts
	signedVals                 []byte // EDM type | lp(canonical value) per signed property
	beaconVals                 []byte // beaconSize bytes per beacon
}

var writerPool = sync.Pool{New: func() any { return new(writer) }}

func (c *call) Writer(pk, rk string) (protect.Writer, error) {
	w := writerPool.Get().(*writer)
	w.c, w.pk, w.rk = c, pk, rk
	return w, nil
}

// Close forgets the entity (its content key first) and keeps the
// buffers for the next write. Fields are reset one by one: assigning a
// whole new writer would copy it through the garbage collector's bulk
// write barrier, a tenth of a write's cost in crypt.
func (w *writer) Close() {
	clear(w.seed[:])
	w.c, w.pk, w.rk, w.gcm, w.shared = nil, "", "", nil, nil
	clear(w.pt) // the last plaintext
	w.aad, w.pt, w.meta, w.mac = w.aad[:0], w.pt[:0], w.meta[:0], w.mac[:0]
	w.out = w.out[:0]
	w.encrypted, w.signed, w.beacons = w.encrypted[:0], w.signed[:0], w.beacons[:0]
	w.cts, w.ctEnd, w.signedVals, w.beaconVals = w.cts[:0], w.ctEnd[:0], w.signedVals[:0], w.beaconVals[:0]
	writerPool.Put(w)
}

func (w *writer) Mode(name string, tagged protect.Mode) (protect.Mode, error) {
	if strings.HasPrefix(name, ReservedPrefix) {
		return 0, &entity.ValidationError{Property: name, Rule: entity.RuleReservedName, Limit: "names starting with " + ReservedPrefix + " are written by package crypt"}
	}
	m := w.c.marked(w.pk, w.rk, name, tagged)
	if m&protect.Encrypt != 0 && (tagged|w.c.tags[name])&protect.Encrypt == 0 && !w.c.mayEncrypt(name) {
		// Config.Encrypt marked a property Config.Encryptable leaves out:
		// stored encrypted, it would be filtered in clear.
		return 0, &WriteError{Property: name, Kind: ErrInvalidConfig, Reason: "Config.Encrypt marks it for entity (" + quote(w.pk) + ", " + quote(w.rk) + ") and Config.Encryptable does not list it"}
	}
	if m&protect.Encrypt != 0 && w.c.beacons[name] {
		m |= protect.Beacon
	}
	return m, nil
}

// start makes the entity's content key, once: a fresh one, or a use of
// the shared one and a fresh first nonce.
func (w *writer) start() error {
	if w.gcm != nil {
		return nil
	}
	seed := w.seed[:]
	if w.c.sharing != nil {
		k, err := w.c.take(w.c.ctx)
		if err != nil {
			return err
		}
		w.shared = k
		seed = w.seed[keySize:]
	}
	if r := w.c.random; r != nil {
		if _, err := io.ReadFull(r, seed); err != nil {
			return err
		}
	} else if _, err := rand.Read(seed); err != nil {
		return err
	}
	if w.shared != nil {
		w.gcm = w.shared.gcm
	} else {
		g, err := newGCM(w.seed[:keySize])
		if err != nil {
			return err
		}
		w.gcm = g
	}
	w.aad = entityAAD(w.c.core, w.aad[:0], propertyAADLabel, w.pk, w.rk)
	return nil
}

// nonce appends the next nonce of the entity's content key to b.
func (w *writer) nonce(b []byte) []byte {
	n := w.seed[keySize:]
	b = append(b, n...)
	binary.BigEndian.PutUint64(n[4:], binary.BigEndian.Uint64(n[4:])+1)
	return b
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
	start := len(w.cts)
	out := w.nonce(append(w.cts, formatVersion))
	aad := appendLP(w.aad, name)
	out = w.gcm.Seal(out, out[start+1:start+1+nonceSize], w.pt, aad)
	w.aad = aad[:len(w.aad)]
	w.cts = out
	w.ctEnd = append(w.ctEnd, len(out))
	w.encrypted = append(w.encrypted, name)
	if mode&protect.Beacon != 0 {
		bv, err := w.c.beacon(w.beaconVals, name, entity.EDMType(edm), value)
		if err != nil {
			return nil, &entity.ValidationError{Property: name, Rule: entity.RulePropertyType, Value: err.Error()}
		}
		w.beacons = append(w.beacons, name)
		w.beaconVals = bv
	}
	return out[start:], nil
}

func (w *writer) Finish() ([]protect.Property, error) {
	if err := w.start(); err != nil {
		return nil, err
	}
	var meta []byte
	if k := w.shared; k != nil {
		meta = append(w.meta[:0], k.envelope...)
	} else {
		keyID, alg, wrapped, err := w.c.key.Wrap(w.c.ctx, w.seed[:keySize])
		if err != nil {
			return nil, fmt.Errorf("crypt: wrapping the content key: %w", err)
		}
		w.mac = cacheKey(w.mac[:0], keyID, alg, wrapped)
		w.c.cache.put(w.mac, w.gcm) // read-your-writes skip the unwrap
		meta = appendEnvelope(w.meta[:0], keyID, alg, wrapped)
	}
	listStart := len(meta)
	meta = appendList(meta, w.encrypted)
	meta = appendList(meta, w.signed)
	meta = appendList(meta, w.beacons)
	w.mac = macInput(w.c.core, w.mac[:0], w.pk, w.rk, meta[listStart:], w.cts, w.ctEnd, w.signedVals, w.beaconVals)
	nonceAt := len(meta)
	meta = w.nonce(meta)
	meta = w.gcm.Seal(meta, meta[nonceAt:], nil, w.mac)
	w.meta = meta
	w.out = append(w.out[:0], protect.Property{Name: MetadataProperty, Value: meta})
	for i, name := range w.beacons {
		w.out = append(w.out, protect.Property{Name: BeaconPrefix + name, Value: w.beaconVals[i*beaconSize : (i+1)*beaconSize]})
	}
	return w.out, nil
}

// appendSigned appends a signed property's part of the signed data: its
// EDM type and its length-prefixed canonical value.
func appendSigned(b []byte, edm entity.EDMType, v any) ([]byte, error) {
	var tmp [16]byte
	val, err := appendCanonical(tmp[:0], edm, v)
	if err != nil {
		return b, err
	}
	return appendLP(append(b, byte(edm)), val), nil
}

// macInput appends what an entity's signature covers (see format.go):
// cts holds the ciphertexts one after another, ending at ctEnd.
func macInput[S string | []byte](c *core, b []byte, pk, rk S, lists, cts []byte, ctEnd []int, signedVals, beaconVals []byte) []byte {
	b = entityAAD(c, b, entityMACLabel, pk, rk)
	b = append(b, formatVersion, algAESGCM)
	b = append(b, lists...)
	start := 0
	for _, end := range ctEnd {
		b = appendLP(b, cts[start:end])
		start = end
	}
	b = append(b, signedVals...)
	for i := 0; i+beaconSize <= len(beaconVals); i += beaconSize {
		b = appendLP(b, beaconVals[i:i+beaconSize])
	}
	return b
}

// --- reading ---

// reader opens one entity read: the content key unwrapped, the signature
// checked over the whole protected set before any property is decoded.
// Readers are pooled; Close returns one.
type reader struct {
	c      *call
	pk, rk []byte // borrowed from the body for the read
	keys   *[2]string
	gcm    cipher.AEAD
	meta   []byte   // the metadata value; names alias it
	names  [][]byte // the protected set: encrypted, then signed
	nEnc   int
	cts    []byte // the ciphertexts, one after another
	ctEnd  []int
	aad    []byte
	pt     []byte
	mac    []byte
	vals   []byte // signed values, then beacons
	plain  bool   // no metadata, read as plaintext (Config.ReadPlaintext)
	legacy *legacyReader
}

var readerPool = sync.Pool{New: func() any { return new(reader) }}

// Close forgets the entity and keeps the buffers for the next read,
// field by field, as writer.Close does.
func (r *reader) Close() {
	clear(r.pt) // the last plaintext
	r.c, r.pk, r.rk, r.keys, r.gcm, r.legacy = nil, nil, nil, nil, nil, nil
	r.nEnc, r.plain = 0, false
	r.meta, r.names, r.cts, r.ctEnd = r.meta[:0], r.names[:0], r.cts[:0], r.ctEnd[:0]
	r.aad, r.pt, r.mac, r.vals = r.aad[:0], r.pt[:0], r.mac[:0], r.vals[:0]
	readerPool.Put(r)
}

func (c *call) readErr(pk, rk, prop string, kind error, reason string, err error) error {
	return &ReadError{Op: c.op, PartitionKey: pk, RowKey: rk, Property: prop, Kind: kind, Reason: reason, Err: err}
}

// strings returns the entity's keys as strings, made once, for errors and
// Config's functions.
func (r *reader) strings() (string, string) {
	if r.keys == nil {
		r.keys = &[2]string{string(r.pk), string(r.rk)}
	}
	return r.keys[0], r.keys[1]
}

// fail is readErr about this entity.
func (r *reader) fail(prop string, kind error, reason string, err error) error {
	pk, rk := r.strings()
	return r.c.readErr(pk, rk, prop, kind, reason, err)
}

func (c *call) Reader(pk, rk []byte, props protect.Props) (protect.Reader, error) {
	r := readerPool.Get().(*reader)
	r.c, r.pk, r.rk = c, pk, rk
	if err := r.open(props); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *reader) open(props protect.Props) error {
	c := r.c
	meta, ok, err := binaryProp(props, metaName, r.meta[:0])
	r.meta = meta
	if err != nil {
		return r.fail(MetadataProperty, readKind(err, ErrMetadata), "", err)
	}
	if !ok {
		switch {
		case props.Has(legacyKeyName):
			if !c.legacy {
				return r.fail("", ErrNotEncrypted, "written by the .NET client's TableEncryptionPolicy: set Config.Legacy to read it", nil)
			}
			pk, rk := r.strings()
			r.legacy, err = c.openLegacy(pk, rk, props)
			return err
		case c.plaintext:
			r.plain = true
			return nil
		}
		return r.fail("", ErrNotEncrypted, "no "+MetadataProperty+" property", nil)
	}
	m, err := parseMetadataWith(meta, r.names, &c.lastLists)
	r.names = m.names
	if err != nil {
		return r.fail(MetadataProperty, ErrMetadata, err.Error(), nil)
	}
	r.nEnc = m.nEnc
	r.mac = cacheKey(r.mac[:0], m.keyID, m.wrapAlg, m.wrapped)
	if r.gcm = c.cache.get(r.mac); r.gcm == nil {
		if err := r.unwrap(&m); err != nil {
			return err
		}
	}
	for _, name := range m.encrypted() {
		if r.cts, ok, err = binaryProp(props, name, r.cts); err != nil || !ok {
			return r.fail(string(name), ErrTampered, "listed as encrypted, missing or not an Edm.Binary", err)
		}
		r.ctEnd = append(r.ctEnd, len(r.cts))
	}
	for _, name := range m.signed() {
		edm, v, ok, err := props.Value(name)
		if err != nil || !ok {
			return r.fail(string(name), ErrTampered, "listed as signed, missing or malformed", err)
		}
		if r.vals, err = appendSigned(r.vals, entity.EDMType(edm), v); err != nil {
			return r.fail(string(name), ErrTampered, err.Error(), nil)
		}
	}
	signedEnd := len(r.vals)
	for _, name := range m.beacons() {
		start := len(r.vals)
		r.pt = append(append(r.pt[:0], BeaconPrefix...), name...)
		if r.vals, ok, err = binaryProp(props, r.pt, r.vals); err != nil || !ok || len(r.vals)-start != beaconSize {
			return r.fail(BeaconPrefix+string(name), ErrTampered, "listed beacon missing, malformed or not an Edm.Binary", err)
		}
	}
	// When a filter matched beacons, every reserved property must be one the
	// metadata lists: a beacon added by someone else would have made the
	// entity match wrongly. (Otherwise stray reserved properties are never
	// read: decoders skip them.)
	if n := 0; c.beaconed {
		n = props.CountPrefix(reservedName)
		if n != 1+len(m.beacons()) {
			return r.fail("", ErrTampered, fmt.Sprintf("%d reserved properties where the metadata lists %d", n, 1+len(m.beacons())), nil)
		}
	}
	r.mac = macInput(c.core, r.mac[:0], r.pk, r.rk, m.lists, r.cts, r.ctEnd, r.vals[:signedEnd], r.vals[signedEnd:])
	if _, err := r.gcm.Open(r.pt[:0], m.nonce, m.tag, r.mac); err != nil {
		return r.fail("", ErrTampered, "the entity's signature does not match its protected properties", nil)
	}
	r.names = m.names[:m.nEnc+m.nSign]
	r.aad = entityAAD(c.core, r.aad[:0], propertyAADLabel, r.pk, r.rk)
	return nil
}

// errStoredType: a protected value (a ciphertext, the metadata, a beacon)
// stored as another type than Edm.Binary, typically a String holding the
// same base64 text once its annotation was removed. Entity refuses a plain
// value of the wrong stored type; a protected one is tampering.
type errStoredType struct{ stored entity.EDMType }

func (e errStoredType) Error() string {
	if e.stored == 0 {
		return "stored without a type"
	}
	return "stored as " + e.stored.String() + ", not Edm.Binary"
}

// readKind is ErrTampered for a value of the wrong stored type, else kind.
func readKind(err error, kind error) error {
	var st errStoredType
	if errors.As(err, &st) {
		return ErrTampered
	}
	return kind
}

// binaryProp appends the bytes of the Edm.Binary property name to dst; ok
// is false when the body does not hold it. A property of any other stored
// type is an errStoredType, never read as its base64 text.
//
// The usual case is one lookup and no allocation: the value is annotated
// Edm.Binary (Binary refuses an annotation of another type). Otherwise (no
// annotation, or a value Binary refuses) Value says the type.
func binaryProp(props protect.Props, name, dst []byte) ([]byte, bool, error) {
	out, found, annotated, err := props.Binary(name, dst)
	switch {
	case !found:
		return dst, false, nil
	case annotated && err == nil:
		return out, true, nil
	}
	edm, v, ok, err := props.Value(name)
	if !ok {
		return dst, false, nil
	}
	if entity.EDMType(edm) != entity.EDMBinary {
		return dst, true, errStoredType{entity.EDMType(edm)}
	}
	if err != nil {
		return dst, true, err
	}
	b, isBytes := v.([]byte)
	if !isBytes {
		return dst, true, errStoredType{entity.EDMType(edm)}
	}
	return append(dst, b...), true, nil
}

// unwrap unwraps the entity's content key and keeps it in the cache.
func (r *reader) unwrap(m *metadata) error {
	c := r.c
	keyID, alg := c.keyStrings(m.keyID, m.wrapAlg)
	cek, err := c.key.Unwrap(c.ctx, keyID, alg, m.wrapped)
	switch {
	case errors.Is(err, ErrUnknownKey):
		return r.fail("", ErrUnknownKey, "key id "+quote(keyID), nil)
	case errors.Is(err, ErrUnwrap):
		return r.fail("", ErrUnwrap, "key id "+quote(keyID), err)
	case err != nil:
		pk, rk := r.strings()
		return fmt.Errorf("crypt: unwrapping the content key of entity (%s, %s): %w", quote(pk), quote(rk), err)
	case len(cek) != keySize:
		return r.fail("", ErrUnwrap, fmt.Sprintf("content key of %d bytes", len(cek)), nil)
	}
	g, err := newGCM(cek)
	if err != nil {
		return err
	}
	r.gcm = g
	c.cache.put(r.mac, g)
	return nil
}

// Reserved names as bytes, for Props.
var (
	metaName      = []byte(MetadataProperty)
	reservedName  = []byte(ReservedPrefix)
	legacyKeyName = []byte(legacyKeyProperty)
	legacySetName = []byte(legacySetProperty)
)

func quote(s string) string { return fmt.Sprintf("%q", s) }

func (r *reader) Mode(name []byte, tagged protect.Mode) (protect.Mode, error) {
	if bytes.HasPrefix(name, []byte(ReservedPrefix)) {
		return protect.Reserved, nil
	}
	if r.legacy != nil {
		return r.legacy.mode(name, tagged|r.c.tags[string(name)])
	}
	marked := tagged | r.c.tags[string(name)]
	if r.c.encrypt != nil || r.c.sign != nil {
		pk, rk := r.strings()
		marked = r.c.marked(pk, rk, string(name), marked)
	}
	if marked&protect.Encrypt != 0 {
		marked &^= protect.Sign
	}
	marked &= protect.Encrypt | protect.Sign
	if r.plain {
		return 0, nil
	}
	var stored protect.Mode
	for i, n := range r.names {
		if bytes.Equal(n, name) {
			stored = protect.Sign
			if i < r.nEnc {
				stored = protect.Encrypt
			}
			break
		}
	}
	if stored != marked {
		return 0, r.fail(string(name), ErrPolicy, "stored "+modeName(stored)+", the type and Config ask for "+modeName(marked), nil)
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

func (r *reader) Open(name []byte) (uint8, []byte, error) {
	if r.legacy != nil {
		return r.legacy.open(string(name))
	}
	var ct []byte
	start := 0
	for i, n := range r.names[:r.nEnc] {
		if bytes.Equal(n, name) {
			ct = r.cts[start:r.ctEnd[i]]
			break
		}
		start = r.ctEnd[i]
	}
	if len(ct) < propertyOverhead+1 || ct[0] != formatVersion {
		return 0, nil, r.fail(string(name), ErrTampered, "ciphertext too short or of an unknown version", nil)
	}
	aad := appendLP(r.aad, name)
	r.aad = aad[:len(r.aad)] // keep a grown array for the next property
	pt, err := r.gcm.Open(r.pt[:0], ct[1:1+nonceSize], ct[1+nonceSize:], aad)
	if err != nil {
		return 0, nil, r.fail(string(name), ErrTampered, "ciphertext does not authenticate for this table, entity and property", nil)
	}
	r.pt = pt
	if pt[0] < uint8(entity.EDMString) || pt[0] > uint8(entity.EDMBinary) {
		return 0, nil, r.fail(string(name), ErrTampered, "unknown EDM type in the plaintext", nil)
	}
	return pt[0], pt[1:], nil
}
