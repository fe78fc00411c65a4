package resolver

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/entityfields"
)

// RowError reports a stored row the resolver could not return: of unknown
// type in strict mode (ErrUnknownType), of another type than asked
// (ErrWrongType), missing (entity.ErrNotFound), or that failed to decode
// (entity.ErrDecode) or upgrade (ErrUpgrade). errors.Is sees through it.
type RowError struct {
	PartitionKey string
	RowKey       string // as stored
	TypeName     string // the row's type name, "" when it has none
	Err          error
}

func (e *RowError) Error() string {
	if e == nil {
		return "resolver: row error: <nil>"
	}
	var b strings.Builder
	b.WriteString("resolver: row (" + argerr.EntityKeys(e.PartitionKey, e.RowKey) + ")")
	if e.TypeName != "" {
		fmt.Fprintf(&b, " of type %q", e.TypeName)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *RowError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Props gives a ResolveFunc the properties of a row. The row is decoded on
// the first call only.
type Props struct {
	row *lazyRow
}

type lazyRow struct {
	body    []byte
	un      unmarshal
	bag     *entity.DynamicEntity
	err     error
	decoded bool
}

// unmarshal decodes a row's body: entity.Unmarshal, or a protected table's
// (package crypt), which decrypts and checks it.
type unmarshal func(body []byte, v any) error

func (r *lazyRow) decode() (*entity.DynamicEntity, error) {
	if !r.decoded {
		r.decoded = true
		r.bag = &entity.DynamicEntity{}
		r.err = r.un(r.body, r.bag)
	}
	return r.bag, r.err
}

// Get returns the property name as one of entity.DynamicEntity's canonical
// types (string, int32, int64, float64, bool, time.Time, uuid.UUID,
// []byte), and whether the row has it.
func (p Props) Get(name string) (any, bool) {
	if p.row == nil {
		return nil, false
	}
	bag, err := p.row.decode()
	if err != nil {
		return nil, false
	}
	v, ok := bag.Properties[name]
	return v, ok
}

// String returns the String property name, "" when absent or of another type.
func (p Props) String(name string) string {
	v, _ := p.Get(name)
	s, _ := v.(string)
	return s
}

// readInfo tells the Table what decode did, for write-backs.
type readInfo struct {
	upgraded bool
	etag     string // the row's ETag, when upgraded
}

// Decode reads one entity body, as the service returns it, into the Go
// type its discriminator names: a *T for a registered T (after upgrading an
// old version), or, for a row of unknown type, a *entity.DynamicEntity —
// or a *RowError matching ErrUnknownType in a Strict schema. Decode bodies
// in minimal or full metadata (an entity.Table[json.RawMessage]
// reads them so) to keep every property's type.
//
// With a RowKey-prefix discriminator the RowKey field of the returned value
// holds the id, without kind and separator.
func (s *Schema) Decode(body []byte) (any, error) {
	if s == nil {
		return nil, errNilSchema
	}
	v, _, err := s.decode(body, entity.Unmarshal)
	return v, err
}

func (s *Schema) decode(body []byte, un unmarshal) (any, readInfo, error) {
	e, lazy, typeName, err := s.resolve(body, un)
	if err != nil {
		return nil, readInfo{}, s.rowError(body, typeName, err)
	}
	if e == nil {
		if s.strict {
			return nil, readInfo{}, s.rowError(body, typeName, ErrUnknownType)
		}
		var bag *entity.DynamicEntity
		if lazy != nil {
			bag, err = lazy.decode()
		} else {
			bag = &entity.DynamicEntity{}
			err = un(body, bag)
		}
		if err != nil {
			return nil, readInfo{}, s.rowError(body, typeName, err)
		}
		return bag, readInfo{}, nil
	}
	pv := reflect.New(e.typ)
	if err := un(body, pv.Interface()); err != nil {
		return nil, readInfo{}, s.rowError(body, e.name, err)
	}
	if s.disc.mode == modePrefix {
		rk, err := e.rowKey.Get(pv.Interface())
		if id, cut := strings.CutPrefix(rk, e.prefix); cut && err == nil {
			err = e.rowKey.Set(pv.Interface(), id)
		}
		if err != nil {
			return nil, readInfo{}, s.rowError(body, e.name, err)
		}
	}
	if e.current {
		return pv.Interface(), readInfo{}, nil
	}
	v, err := s.upgrade(e, pv.Interface(), body)
	if err != nil {
		return nil, readInfo{}, s.rowError(body, e.name, err)
	}
	h, _ := peek(body, wantETag, "")
	etag, _ := h.etag.text()
	return v, readInfo{upgraded: true, etag: etag}, nil
}

// upgrade runs e's upgrade chain on old and gives the result the row's
// keys, ETag and Timestamp.
func (s *Schema) upgrade(e *entry, old any, body []byte) (any, error) {
	sys, err := entity.SystemOf(old)
	if err != nil {
		return nil, err
	}
	v := old
	for _, st := range e.steps {
		if v, err = st.upgrade(v); err != nil {
			return nil, err
		}
	}
	nv := reflect.ValueOf(v)
	if nv.Kind() != reflect.Pointer || nv.IsNil() || nv.Elem().Type() != e.final.typ {
		return nil, fmt.Errorf("%w: %q: got %T, want *%v", ErrUpgrade, e.name, v, e.final.typ)
	}
	// The old type may lack an ETag or Timestamp field: take them from the row.
	h, _ := peek(body, wantETag|wantTimestamp, "")
	if etag, ok := h.etag.text(); ok {
		sys.ETag = etag
	}
	if ts, ok := h.ts.text(); ok {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			sys.Timestamp = t.UTC()
		}
	}
	if err := entityfields.SetSystem(v, entityfields.System(sys)); err != nil {
		return nil, err
	}
	return v, nil
}

// resolve finds the registered entry of a row: nil for an unknown type,
// with the type name the row has, if any. In function mode the lazily
// decoded row is returned so that an unknown row is decoded once.
func (s *Schema) resolve(body []byte, un unmarshal) (e *entry, lazy *lazyRow, typeName string, err error) {
	d := &s.disc
	switch d.mode {
	case modeProperty:
		disc, ok := find(body, s.discKey)
		if !ok {
			h, err := peek(body, wantDisc, d.property)
			if err != nil {
				return nil, nil, "", err
			}
			disc = h.disc
		}
		e, name := s.byDisc(disc)
		return e, nil, name, nil

	case modePrefix:
		rkv, ok := find(body, rowKeyKey)
		var disc rawValue
		if ok && d.property != "" {
			disc, ok = find(body, s.discKey)
		}
		if !ok {
			want := wantRK
			if d.property != "" {
				want |= wantDisc
			}
			h, err := peek(body, want, d.property)
			if err != nil {
				return nil, nil, "", err
			}
			rkv, disc = h.rk, h.disc
		}
		if !rkv.str {
			return nil, nil, "", nil
		}
		rk := rkv.b
		if rkv.esc {
			text, _ := rkv.text()
			rk = []byte(text)
		}
		i := bytes.Index(rk, s.sep)
		if i < 0 {
			return nil, nil, "", nil
		}
		kind := rk[:i]
		if disc.found {
			e, name := s.byDisc(disc)
			if e != nil && e.kind != string(kind) {
				return nil, nil, name, nil
			}
			return e, nil, name, nil
		}
		versions := s.byKind[string(kind)]
		if len(versions) == 0 {
			return nil, nil, string(kind), nil
		}
		return versions[0], nil, versions[0].name, nil

	case modeFunc:
		h, err := peek(body, wantPK|wantRK, "")
		if err != nil {
			return nil, nil, "", err
		}
		pk, _ := h.pk.text()
		rk, _ := h.rk.text()
		lazy := &lazyRow{body: body, un: un}
		name := d.resolve(pk, rk, Props{row: lazy})
		return s.byName[name], lazy, name, nil
	}
	return nil, nil, "", errors.New("resolver: invalid discriminator")
}

// byDisc looks up the entry a discriminator value names, and the name.
func (s *Schema) byDisc(v rawValue) (*entry, string) {
	switch {
	case !v.found:
		return nil, ""
	case !v.str:
		return nil, string(v.b)
	case !v.esc:
		if e := s.byName[string(v.b)]; e != nil {
			return e, e.name
		}
		return nil, string(v.b)
	}
	name, _ := v.text()
	return s.byName[name], name
}

// rowError wraps err with the row's keys.
func (s *Schema) rowError(body []byte, typeName string, err error) error {
	h, _ := peek(body, wantPK|wantRK, "")
	pk, _ := h.pk.text()
	rk, _ := h.rk.text()
	return &RowError{PartitionKey: pk, RowKey: rk, TypeName: typeName, Err: err}
}
