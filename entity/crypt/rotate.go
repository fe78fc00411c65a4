package crypt

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// errReread makes the retry loop read the entity again.
var errReread = fmt.Errorf("crypt: rotate: read again: %w", entity.ErrPreconditionFailed)

// RotateOptions tunes Rotate.
type RotateOptions struct {
	// Filter limits the scan (a partition, a RowKey range); the empty Expr
	// scans the table.
	Filter filter.Expr
	// From resumes a rotation from a token that an earlier one returned or
	// passed to Checkpoint; "" starts at the beginning.
	From string
	// Checkpoint, when set, is called after each page with the token that
	// resumes after it; an error stops the rotation and is returned.
	Checkpoint func(next string) error
	// Reencrypt decrypts and re-encrypts every entity of the scan in full
	// (a read, then a replace under its ETag) instead of rewrapping its
	// content key: the way to move legacy (.NET) entities, or plaintext
	// ones with Config.ReadPlaintext, to this package's format, and to apply
	// changed tags or beacons. It rewrites as T only the entities whose
	// every property T has a field for (or an extra field keeps); T needs
	// an etag field. An entity with a property T lacks — another type's,
	// or a pattern's own row in the table (an index entry, an outbox
	// intent, large's row) — is not read as T, which would drop that
	// property: it is rewrapped as without Reencrypt, or left alone when
	// it holds no envelope, and counted in RotateResult.Kept.
	// false rewraps, and leaves legacy and plaintext entities alone.
	Reencrypt bool
	// PageSize is the most entities read per request; 0 means 1000.
	PageSize int
	// Retry bounds the rounds spent on one entity that concurrent writers
	// keep changing; the zero value is entity.RetryPolicy's default.
	Retry entity.RetryPolicy
}

// RotateResult counts what a rotation did.
type RotateResult struct {
	Scanned     int // entities read
	Rewrapped   int // entities whose content key is now wrapped under the current key
	Reencrypted int // entities rewritten in full (RotateOptions.Reencrypt)
	Current     int // already under the current key
	Skipped     int // legacy or plaintext entities left alone (without Reencrypt, or of another shape)
	Gone        int // deleted while the rotation ran
	// Kept counts, with Reencrypt, the entities of another shape than T,
	// rewrapped or left alone rather than rewritten (also counted in
	// Rewrapped, Current or Skipped).
	Kept int
	// Failed lists the entities the rotation could not move, each with its
	// error, left as they are: metadata that is malformed or not an
	// Edm.Binary, a key no key-encryption key holds, a content key that does
	// not unwrap, concurrent writers that won every round, and with
	// Reencrypt an entity that does not read (any *ReadError or decode
	// error) or cannot be written back (entity.ErrInvalid). The rotation
	// goes on past them; see Rotate.
	Failed []RotateFailure
	// Next resumes the rotation; "" when the scan is complete.
	Next string
}

// RotateFailure is one entity a rotation left as it was, and why.
type RotateFailure struct {
	PartitionKey, RowKey string
	Err                  error
}

// RotateError reports the entities a rotation that scanned everything
// could not move (RotateResult.Failed). errors.Is and errors.As see each
// entity's error, so it matches the kinds among them (ErrTampered,
// ErrUnknownKey, …, entity.ErrDecode). Its text reads "crypt: Rotate: <n>
// entities not rotated: " and the first three entities' errors, each
// naming the keys as PartitionKey "p", RowKey "r".
type RotateError struct {
	Failed []RotateFailure
}

func (e *RotateError) Error() string {
	var b strings.Builder
	b.WriteString("crypt: Rotate: ")
	b.WriteString(strconv.Itoa(len(e.Failed)))
	b.WriteString(" entities not rotated")
	for i, f := range e.Failed {
		if i == 3 {
			b.WriteString("; …")
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		// A *ReadError names the entity itself.
		var re *ReadError
		if !errors.As(f.Err, &re) {
			b.WriteString(argerr.Keys(f.PartitionKey, f.RowKey))
			b.WriteString(": ")
		}
		b.WriteString(strings.TrimPrefix(f.Err.Error(), "crypt: "))
	}
	return b.String()
}

// Unwrap returns each entity's error.
func (e *RotateError) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		errs[i] = f.Err
	}
	return errs
}

// entityFailure reports an error about one entity, which a rotation goes
// on past, rather than one that stops it (the service, Key Vault or ctx).
func entityFailure(err error) bool {
	return errors.Is(err, entity.ErrDecode) || errors.Is(err, entity.ErrInvalid) || errors.Is(err, entity.ErrContention)
}

// Rotate moves the entities of the scan under the current key-encryption
// key (the first of Config.Key's Keyring) by rewriting only their key
// envelope: the content key is unwrapped with whichever key holds it and
// wrapped again, and the new envelope is merged into the entity on
// condition that its ETag is unchanged. The data, the signature and the
// beacons stay as they are, so a rotation costs one read per page and one
// merge per entity, whatever the entity's size.
//
// Readers keep working throughout, as long as their Keyring holds both the
// old and the new key. A writer that wrote in between already used the new
// key (or, with an old configuration, is caught by running Rotate again).
// Each step is idempotent: a merge whose reply was lost and which azcore
// resent fails on the ETag, and the entity, read again, is found already
// rotated. Stopped anywhere (ctx, a crash), Rotate resumes from the last
// token passed to Checkpoint, or from the start, at the cost of a scan.
func (t *Table[T]) Rotate(ctx context.Context, opts RotateOptions) (RotateResult, error) {
	if err := t.ok(); err != nil {
		return RotateResult{}, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return RotateResult{}, err
	}
	var res RotateResult
	current, err := t.currentKeyID(ctx)
	if err != nil {
		return res, err
	}
	dyn, err := entity.NewTable[entity.DynamicEntity](t.base.Client())
	if err != nil {
		return res, err
	}
	q := entity.Query{Filter: opts.Filter, PageSize: opts.PageSize, Select: []string{MetadataProperty, legacyKeyProperty}}
	if opts.Reencrypt {
		q.Select = nil // every property's name, to tell T's entities from others
	}
	token := opts.From
	rw := rewraps{}
	for {
		page, err := dyn.QueryPage(ctx, q, token)
		if err != nil {
			res.Next = token
			return res, err
		}
		for i := range page.Items {
			res.Scanned++
			d := &page.Items[i]
			pk, rk := d.PartitionKey, d.RowKey
			if err := t.rotateOne(ctx, dyn, d, current, opts, rw, &res); err != nil {
				if !entityFailure(err) {
					res.Next = token // this page again: its done entities are skipped as current
					return res, err
				}
				res.Failed = append(res.Failed, RotateFailure{PartitionKey: pk, RowKey: rk, Err: err})
			}
		}
		token = page.Next
		res.Next = token
		if opts.Checkpoint != nil {
			if err := opts.Checkpoint(token); err != nil {
				return res, err
			}
		}
		if token == "" {
			if len(res.Failed) > 0 {
				return res, &RotateError{Failed: res.Failed}
			}
			return res, nil
		}
	}
}

// currentKeyID learns the key id new writes get, by wrapping a throwaway key.
func (t *Table[T]) currentKeyID(ctx context.Context) (string, error) {
	var probe [keySize]byte
	if _, err := rand.Read(probe[:]); err != nil {
		return "", err
	}
	id, _, _, err := t.core.key.Wrap(ctx, probe[:])
	if err != nil {
		return "", fmt.Errorf("crypt: rotate: wrapping with the current key: %w", err)
	}
	return id, nil
}

// rotateOne rotates one entity, read with its envelope and ETag, retrying
// from a fresh read while concurrent writers change it.
func (t *Table[T]) rotateOne(ctx context.Context, dyn *entity.Table[entity.DynamicEntity], d *entity.DynamicEntity, current string, opts RotateOptions, rw rewraps, res *RotateResult) error {
	first, merged, counted := true, false, false
	return opts.Retry.Retry(ctx, func(ctx context.Context) error {
		if !first {
			fresh, err := dyn.Get(ctx, d.PartitionKey, d.RowKey)
			if errors.Is(err, entity.ErrNotFound) {
				res.Gone++
				return nil
			}
			if err != nil {
				return err
			}
			d = &fresh
		}
		first = false
		if opts.Reencrypt {
			if !t.otherShape(d) {
				return t.reencrypt(ctx, d, res)
			}
			if !counted {
				res.Kept++
				counted = true
			}
		}
		meta, ok := entity.Prop[[]byte](d, MetadataProperty)
		if !ok {
			if v, has := d.Properties[MetadataProperty]; has {
				return &ReadError{Op: "Rotate", PartitionKey: d.PartitionKey, RowKey: d.RowKey, Property: MetadataProperty, Kind: ErrTampered, Reason: fmt.Sprintf("not stored as an Edm.Binary (read as Go %T)", v)}
			}
			res.Skipped++
			return nil
		}
		m, err := parseMetadata(meta, nil)
		if err != nil {
			return &ReadError{Op: "Rotate", PartitionKey: d.PartitionKey, RowKey: d.RowKey, Property: MetadataProperty, Kind: ErrMetadata, Reason: err.Error()}
		}
		keyID, alg := string(m.keyID), string(m.wrapAlg)
		if keyID == current {
			if merged { // our merge was applied, its reply lost
				res.Rewrapped++
			} else {
				res.Current++
			}
			return nil
		}
		old := envelopeKey(keyID, alg, m.wrapped)
		if r, ok := rw[old]; ok { // a content key shared with an entity rotated before
			return t.mergeEnvelope(ctx, dyn, d, meta, r, &merged, res)
		}
		cek, err := t.core.key.Unwrap(ctx, keyID, alg, m.wrapped)
		switch {
		case errors.Is(err, ErrUnknownKey):
			return &ReadError{Op: "Rotate", PartitionKey: d.PartitionKey, RowKey: d.RowKey, Kind: ErrUnknownKey, Reason: "key id " + quote(keyID)}
		case errors.Is(err, ErrUnwrap):
			return &ReadError{Op: "Rotate", PartitionKey: d.PartitionKey, RowKey: d.RowKey, Kind: ErrUnwrap, Reason: "key id " + quote(keyID), Err: err}
		case err != nil: // Key Vault unreachable, refusing, …: not the entity's fault
			return fmt.Errorf("crypt: rotate: unwrapping the content key of entity (%s, %s): %w", quote(d.PartitionKey), quote(d.RowKey), err)
		case len(cek) != keySize:
			return &ReadError{Op: "Rotate", PartitionKey: d.PartitionKey, RowKey: d.RowKey, Kind: ErrUnwrap, Reason: fmt.Sprintf("content key of %d bytes", len(cek))}
		}
		id, alg, wrapped, err := t.core.key.Wrap(ctx, cek)
		if err != nil {
			return fmt.Errorf("crypt: rotate: %w", err)
		}
		r := rewrapped{id, alg, wrapped}
		if len(rw) < maxRewraps {
			rw[old] = r
		}
		return t.mergeEnvelope(ctx, dyn, d, meta, r, &merged, res)
	})
}

// rewraps remembers, for one Rotate call, the new envelope of each content
// key rewrapped, by its old envelope: entities that share a content key
// (Config.ContentKeyWrites) cost one unwrap and one wrap, not one each.
// It holds wrapped keys only, never a content key.
type rewraps map[string]rewrapped

type rewrapped struct {
	keyID, alg string
	wrapped    []byte
}

// maxRewraps bounds a rotation's memory of rewrapped keys (about 100 bytes
// each); past it every entity is rewrapped on its own.
const maxRewraps = 1 << 16

func envelopeKey(keyID, alg string, wrapped []byte) string {
	return string(cacheKey(nil, keyID, alg, wrapped))
}

// mergeEnvelope writes the entity's envelope r under the ETag it was read
// with.
func (t *Table[T]) mergeEnvelope(ctx context.Context, dyn *entity.Table[entity.DynamicEntity], d *entity.DynamicEntity, meta []byte, r rewrapped, merged *bool, res *RotateResult) error {
	next, err := replaceEnvelope(meta, r.keyID, r.alg, r.wrapped)
	if err != nil {
		return err
	}
	patch := entity.DynamicEntity{PartitionKey: d.PartitionKey, RowKey: d.RowKey, ETag: d.ETag}
	patch.Set(MetadataProperty, next)
	*merged = true
	err = dyn.Update(ctx, &patch, entity.Merge)
	switch {
	case errors.Is(err, entity.ErrNotFound):
		res.Gone++
		return nil
	case errors.Is(err, entity.ErrOutcomeUnknown):
		// A lost reply the service did not settle: the next read does
		// (the envelope is either the new one or the old one).
		return errReread
	case err != nil:
		return err // ErrPreconditionFailed: read again and retry
	}
	res.Rewrapped++
	return nil
}

// otherShape reports whether d has a property that T has no field for and
// that an entity of T does not carry (its envelope, beacons, a write
// token): rewriting it as T would drop that property.
func (t *Table[T]) otherShape(d *entity.DynamicEntity) bool {
	if t.fields == nil || t.keepsUnknown {
		return false
	}
	for name := range d.Properties {
		switch {
		case strings.HasPrefix(name, ReservedPrefix), name == legacyKeyProperty, name == legacySetProperty, name == wtoken.Property:
		default:
			if _, ok := t.fields[name]; !ok {
				return true
			}
		}
	}
	return false
}

// reencrypt rewrites one legacy or plaintext entity in this package's
// format, under its ETag.
func (t *Table[T]) reencrypt(ctx context.Context, d *entity.DynamicEntity, res *RotateResult) error {
	v := t.ent
	e, err := v.Get(ctx, d.PartitionKey, d.RowKey)
	if errors.Is(err, entity.ErrNotFound) {
		res.Gone++
		return nil
	}
	if err != nil {
		return err
	}
	if err := v.Update(ctx, &e, entity.Replace); err != nil {
		switch {
		case errors.Is(err, entity.ErrNotFound):
			res.Gone++
			return nil
		case errors.Is(err, entity.ErrOutcomeUnknown):
			return errReread // re-encrypting again is harmless
		}
		return err
	}
	res.Reencrypted++
	return nil
}
