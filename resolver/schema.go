package resolver

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/keys"
)

// DefaultProperty is the property that holds the type name unless the
// discriminator names another.
const DefaultProperty = "EntityType"

// MaxTypeNameLength is the longest type name, in bytes.
const MaxTypeNameLength = 255

// Errors, for errors.Is.
var (
	// ErrUnknownType: a row's type name is not registered (or it has none).
	// Reads return such rows as *entity.DynamicEntity unless the schema's
	// Config is Strict; Get[T] reports them with this error.
	ErrUnknownType = errors.New("resolver: unknown entity type")
	// ErrWrongType: Get[T] found a row of another registered type.
	ErrWrongType = errors.New("resolver: entity of another type")
	// ErrUnregistered: a value to write is of a Go type the schema does not
	// write: not registered, or registered only to read old versions.
	// Refused before any request, it matches entity.ErrInvalid too.
	ErrUnregistered = invalidArg("resolver: Go type not registered for writing")
	// ErrSchema: NewSchema was given a contradictory or invalid Config or
	// registration. It matches entity.ErrInvalid too.
	ErrSchema = invalidArg("resolver: invalid schema")
	// ErrUpgrade: an upgrade function failed or returned nil.
	ErrUpgrade = errors.New("resolver: upgrade failed")
)

// Config is the settings of a Schema; the zero value of each field means
// its default.
type Config struct {
	// Discriminator says how rows are told apart and writes marked; the
	// zero value means ByProperty(DefaultProperty).
	Discriminator Discriminator
	// Strict makes reads fail with ErrUnknownType on a row whose type is
	// not registered, instead of returning it as a property bag. The query
	// stops at that row. false means unknown rows are read as
	// *entity.DynamicEntity.
	Strict bool
	// WriteBackUpgrades makes Table reads (Get, Query, QueryPage, Modify)
	// write each row they upgraded back in its new version: a Replace
	// conditional on the ETag the row was read with, so a row another
	// writer changed in the meantime is left alone (and upgraded again on
	// its next read); any other failure of a write-back ends the read with
	// its error. Rows read with a projection (Query.Select) are never
	// written back, as they are incomplete. The value returned carries the
	// ETag of the write-back. false means reads never write.
	//
	// The write-back replaces the row: properties the new version's Go
	// type does not model are removed, as an upgrade that drops or renames
	// a field intends. Give that type an `extra` field (see package
	// entity) to keep properties other writers add.
	WriteBackUpgrades bool
}

func (c Config) withDefaults() Config {
	if d := c.Discriminator; d.mode == modeNone && d.property == "" && d.sep == "" && d.bad == "" {
		c.Discriminator = ByProperty(DefaultProperty)
	}
	return c
}

// Registration is one type name of a Schema, made by Register or Upgrade
// and passed to NewSchema.
type Registration struct {
	add func(*builder) error
}

// Register registers the Go struct type T (mapped by its `table` tags) under
// typeName, the name written into every entity of type T and read back to
// choose T. Give type names a version, Kind.vN ("Employee.v2"), so that a
// later version can be registered beside an Upgrade from this one.
//
// T needs no field for the type name: writes through the schema stamp it.
// A Go type is registered under one name; a name is registered once.
func Register[T any](typeName string) Registration {
	return Registration{func(b *builder) error {
		return b.add(&entry{name: typeName, typ: reflect.TypeFor[T](), current: true})
	}}
}

// Upgrade registers an old version: rows named typeName are decoded into
// Old and turned by upgrade into New, which must be a registered type or
// the Old of another Upgrade (chains such as v1 → v2 → v3 are followed).
// Reads return the final registered type only, with the row's keys, ETag
// and Timestamp; Old is never returned and cannot be written.
//
// Old and New may be the same type, when a new version only adds fields:
// Upgrade[Employee, Employee]("Employee.v1", fill).
func Upgrade[Old, New any](typeName string, upgrade func(old *Old) (*New, error)) Registration {
	return Registration{func(b *builder) error {
		if upgrade == nil {
			return fmt.Errorf("%w: nil upgrade function for %q", ErrSchema, typeName)
		}
		fn := func(v any) (any, error) {
			old, ok := v.(*Old)
			if !ok {
				return nil, fmt.Errorf("%w: %q: got %T, want *%v", ErrUpgrade, typeName, v, reflect.TypeFor[Old]())
			}
			n, err := upgrade(old)
			if err != nil {
				return nil, fmt.Errorf("%w: %q: %w", ErrUpgrade, typeName, err)
			}
			if n == nil {
				return nil, fmt.Errorf("%w: %q: the upgrade function returned nil", ErrUpgrade, typeName)
			}
			return n, nil
		}
		return b.add(&entry{name: typeName, typ: reflect.TypeFor[Old](), upgrade: fn, to: reflect.TypeFor[New]()})
	}}
}

// Schema is a set of registered types and the discriminator that tells
// them apart. It is immutable and safe for concurrent use; build it with
// NewSchema.
type Schema struct {
	disc      Discriminator
	discKey   []byte // `"EntityType":`, for find
	sep       []byte
	strict    bool
	writeBack bool
	byName    map[string]*entry
	byType    map[reflect.Type]*entry   // the current entry of each written Go type
	byKind    map[string][]*entry       // prefix mode: the entries of each kind, oldest first
	resolving map[reflect.Type][]string // every name whose rows are read as the Go type
}

// entry is one registered type name.
type entry struct {
	name    string
	kind    string // name without its .vN suffix
	prefix  string // prefix mode: kind + separator, the start of stored RowKeys
	version int    // N of .vN; -1 without one
	typ     reflect.Type
	rowKey  entityfields.RowKeyField // typ's RowKey, stripped of prefix on reads
	current bool                     // rows of typ are written under this name

	// An old version: decode into typ, then upgrade to a value of type to.
	upgrade func(any) (any, error)
	to      reflect.Type
	// steps are the upgrades from typ to final, resolved by NewSchema.
	steps []*entry
	final *entry
}

type builder struct {
	s       *Schema
	entries []*entry
}

func (b *builder) add(e *entry) error {
	if err := checkTypeName(e.name); err != nil {
		return err
	}
	if e.typ.Kind() != reflect.Struct {
		return fmt.Errorf("%w: %q: %v is not a struct type", ErrSchema, e.name, e.typ)
	}
	if e.typ == reflect.TypeFor[entity.DynamicEntity]() {
		return fmt.Errorf("%w: %q: entity.DynamicEntity is what unknown types are read as; register a struct", ErrSchema, e.name)
	}
	// entity decides which fields hold the keys, ETag and Timestamp; a type
	// it cannot map (or that has no keys) is refused here.
	rk, err := entityfields.RowKeyFieldOf(e.typ)
	if err != nil {
		return fmt.Errorf("%w: %q: %w", ErrSchema, e.name, err)
	}
	e.rowKey = rk
	e.kind, e.version = splitVersion(e.name)
	b.entries = append(b.entries, e)
	return nil
}

// NewSchema builds a schema from cfg and the type names registered with
// Register and Upgrade. Every registered type is checked, and every
// upgrade chain resolved, here: a *entity.TypeError for a type entity
// cannot map, ErrSchema for the rest.
func NewSchema(cfg Config, regs ...Registration) (*Schema, error) {
	cfg = cfg.withDefaults()
	b := &builder{s: &Schema{
		disc:      cfg.Discriminator,
		strict:    cfg.Strict,
		writeBack: cfg.WriteBackUpgrades,
		byName:    map[string]*entry{},
		byType:    map[reflect.Type]*entry{},
		resolving: map[reflect.Type][]string{},
	}}
	for _, r := range regs {
		if r.add == nil {
			return nil, fmt.Errorf("%w: a zero Registration (make one with Register or Upgrade)", ErrSchema)
		}
		if err := r.add(b); err != nil {
			return nil, err
		}
	}
	if err := b.s.disc.check(); err != nil {
		return nil, err
	}
	if b.s.disc.property != "" {
		b.s.discKey = quotedKey(b.s.disc.property)
	}
	b.s.sep = []byte(b.s.disc.sep)
	if err := b.link(); err != nil {
		return nil, err
	}
	return b.s, nil
}

// link indexes the entries and resolves upgrade chains.
func (b *builder) link() error {
	s := b.s
	upgradeFrom := map[reflect.Type][]*entry{} // Old type → its upgrades
	for _, e := range b.entries {
		if _, dup := s.byName[e.name]; dup {
			return fmt.Errorf("%w: type name %q registered twice", ErrSchema, e.name)
		}
		s.byName[e.name] = e
		if e.current {
			if prev, dup := s.byType[e.typ]; dup {
				return fmt.Errorf("%w: %v registered under two names, %q and %q (register old versions with Upgrade)", ErrSchema, e.typ, prev.name, e.name)
			}
			s.byType[e.typ] = e
		} else {
			upgradeFrom[e.typ] = append(upgradeFrom[e.typ], e)
		}
	}
	for _, e := range b.entries {
		if e.current {
			e.final = e
			continue
		}
		cur := e
		seen := map[*entry]bool{}
		for {
			if seen[cur] {
				return fmt.Errorf("%w: the upgrades from %q go round in a circle", ErrSchema, e.name)
			}
			seen[cur] = true
			e.steps = append(e.steps, cur)
			if fin, ok := s.byType[cur.to]; ok {
				e.final = fin
				break
			}
			next := upgradeFrom[cur.to]
			switch len(next) {
			case 0:
				return fmt.Errorf("%w: the upgrade of %q returns %v, which is neither registered nor the old type of another upgrade", ErrSchema, cur.name, cur.to)
			case 1:
				cur = next[0]
			default:
				return fmt.Errorf("%w: the upgrade of %q returns %v, which the upgrades of %q and %q both start from", ErrSchema, cur.name, cur.to, next[0].name, next[1].name)
			}
		}
	}
	for _, e := range b.entries {
		s.resolving[e.final.typ] = append(s.resolving[e.final.typ], e.name)
	}
	for _, names := range s.resolving {
		slices.Sort(names)
	}
	if s.disc.mode == modePrefix {
		return b.linkKinds()
	}
	return nil
}

// linkKinds checks the kinds of prefix mode: each is a valid key prefix,
// versions of one kind are told apart by the property, and an upgrade keeps
// its kind so that it can be written back at the same key.
func (b *builder) linkKinds() error {
	s := b.s
	s.byKind = map[string][]*entry{}
	for _, e := range b.entries {
		if err := keys.Validate(e.kind + s.disc.sep); err != nil {
			return fmt.Errorf("%w: kind %q of %q is not a valid RowKey prefix: %w", ErrSchema, e.kind, e.name, err)
		}
		// The separator must first occur where the kind ends, or the prefix
		// of one kind could be cut as another's ("A-" + "--" reads as "A").
		if strings.Index(e.kind+s.disc.sep, s.disc.sep) != len(e.kind) {
			return fmt.Errorf("%w: kind %q of %q contains, or runs into, the separator %q", ErrSchema, e.kind, e.name, s.disc.sep)
		}
		if e.final.kind != e.kind {
			return fmt.Errorf("%w: %q is upgraded to %q, of another kind: with RowKey prefixes an upgrade must keep its kind (the key)", ErrSchema, e.name, e.final.name)
		}
		e.prefix = e.kind + s.disc.sep
		s.byKind[e.kind] = append(s.byKind[e.kind], e)
	}
	for kind, es := range s.byKind {
		if len(es) > 1 && s.disc.property == "" {
			return fmt.Errorf("%w: kind %q has %d versions (%q, %q, …), which a RowKey prefix without a type property cannot tell apart", ErrSchema, kind, len(es), es[0].name, es[1].name)
		}
		slices.SortStableFunc(es, func(a, b *entry) int { return a.version - b.version })
	}
	return nil
}

// checkTypeName: a type name is stored as a String property and compared in
// filters; keep it printable and short.
func checkTypeName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty type name", ErrSchema)
	case len(name) > MaxTypeNameLength:
		return fmt.Errorf("%w: type name longer than %d bytes: %.40q…", ErrSchema, MaxTypeNameLength, name)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: type name %q is not valid UTF-8", ErrSchema, name)
	}
	for _, r := range name {
		if r < 0x20 || (r >= 0x7F && r <= 0x9F) {
			return fmt.Errorf("%w: type name %q holds a control character", ErrSchema, name)
		}
	}
	return nil
}

// splitVersion splits "Employee.v2" into ("Employee", 2). A name without a
// .vN suffix is its own kind, with version -1 (older than any version).
func splitVersion(name string) (kind string, version int) {
	i := strings.LastIndex(name, ".v")
	if i <= 0 || i+2 == len(name) {
		return name, -1
	}
	digits := name[i+2:]
	if digits[0] == '+' || digits[0] == '-' || (len(digits) > 1 && digits[0] == '0') {
		return name, -1
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 {
		return name, -1
	}
	return name[:i], n
}

// errNilSchema is returned for a nil *Schema.
var errNilSchema = invalidArg("resolver: nil *resolver.Schema (make one with resolver.NewSchema)")

// Discriminator returns the schema's discriminator (the zero one for a nil
// Schema).
func (s *Schema) Discriminator() Discriminator {
	if s == nil {
		return Discriminator{}
	}
	return s.disc
}

// TypeNames lists the registered type names, sorted.
func (s *Schema) TypeNames() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// TypeName returns the name values of v's type are written under; v is a
// registered struct type or a pointer to one. ok is false for any other
// type, including the old types of upgrades.
func (s *Schema) TypeName(v any) (name string, ok bool) {
	if s == nil {
		return "", false
	}
	t := reflect.TypeOf(v)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	e, ok := s.byType[t]
	if !ok {
		return "", false
	}
	return e.name, true
}

// unregistered explains why a Go type cannot be written.
func (s *Schema) unregistered(t reflect.Type) error {
	for _, e := range s.byName {
		if e.typ == t && !e.current {
			return fmt.Errorf("%w: %v is registered only to read %q; write its upgrade, %v", ErrUnregistered, t, e.name, e.final.typ)
		}
	}
	return fmt.Errorf("%w: %v", ErrUnregistered, t)
}

// argError is an argument refused before any request (a nil schema or
// table, an unregistered type, a schema that cannot work): it matches
// entity.ErrInvalid, so that one errors.Is tells "nothing was sent"
// whichever package refused (TestRefusalsMatchErrInvalid in
// internal/apisweep). A sentinel made with it (ErrSchema,
// ErrUnregistered) matches entity.ErrInvalid too.
type argError struct{ msg string }

// invalidArg returns an *argError with text msg.
func invalidArg(msg string) error { return &argError{msg} }

func (e *argError) Error() string { return e.msg }

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *argError) Is(target error) bool { return target == entity.ErrInvalid }
