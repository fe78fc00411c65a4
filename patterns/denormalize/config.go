package denormalize

import (
	"encoding/json"
	"reflect"
	"slices"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/internal/ident"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// Key addresses one entity of a table.
type Key struct {
	PartitionKey string `json:"pk"`
	RowKey       string `json:"rk"`
}

func (k Key) String() string { return k.PartitionKey + "/" + k.RowKey }

// Range is every entity of one partition whose RowKey is in [From, To); an
// empty To means no upper bound. It is read with one range query per
// page (design guide §2), never a scan of the table.
type Range struct {
	PartitionKey string `json:"pk"`
	From         string `json:"from"`
	To           string `json:"to,omitempty"`
}

// Prefix returns the Range of the entities of partition pk whose RowKey
// starts with prefix (keys.PrefixRange).
func Prefix(pk, prefix string) Range {
	from, to := keys.PrefixRange(prefix)
	return Range{PartitionKey: pk, From: from, To: to}
}

// Targets says where the targets that may copy from one source are:
// entities read by a point query each, and ranges read by a range query.
// It must name every target that may refer to the source. Naming others
// never changes a copy (a target copies only from the source it refers
// to), but it is not free: each is read, and InsertSource of a
// SamePartition source fences each that exists, whatever source it refers
// to — a write conditional on its version, so that a target made to refer
// to the new source meanwhile is not left without its copy
// (TestInsertSourceFencesTargetsOfOtherSources) — and more than 99 of them
// refuse the insert with a *CopiesError (ErrTooManyCopies). Name no more
// than may refer to the source: a Range per source rather than per
// partition, where the keys allow it.
type Targets struct {
	Keys   []Key   `json:"keys,omitempty"`
	Ranges []Range `json:"ranges,omitempty"`
}

// Placement says where a relation's targets live relative to its sources.
type Placement uint8

const (
	// SamePartition: the targets are in their source's partition of the
	// same table, and every copy is written in the entity group
	// transaction that changes the source, or the target (guide §6.5,
	// §5 one-to-many (a)): readers never see a copy that disagrees.
	SamePartition Placement = iota
	// OtherPartition: the targets are in other partitions or another
	// table; a change of a source is fanned out to them by a queue-driven
	// worker of package eventual (guide §6.3): the copies catch up.
	OtherPartition
)

func (p Placement) String() string {
	switch p {
	case SamePartition:
		return "same partition"
	case OtherPartition:
		return "other partition"
	}
	return "unknown placement"
}

// Field is one copied property: the source's property From is stored in the
// target as To ("Phone" as "ManagerPhone"). Both are property names as
// stored (a field's name, or its `table` tag's name; "Total_Cents" for
// field Cents of a flattened field Total) or the Go path of a field
// ("Total.Cents"). New refuses, with a *ConfigError, a From the source
// type does not store or a To the target type does not store — unless
// the type keeps any property (entity.DynamicEntity, a struct with an
// extra map) — rather than copy nothing (TestFieldsNameStoredProperties,
// TestFieldsGoPath).
type Field struct {
	From, To string
}

// Relation declares which properties targets of type T copy from which
// sources of type S: the guide's department (T) that keeps its manager's
// (S) name and phone.
type Relation[T, S any] struct {
	// Name names the relation in errors, messages and findings: 1 to 32
	// ASCII letters and digits, unique among the relations of one Copies.
	Name string
	// Fields are the copied properties, at least one. Each To names a
	// distinct property of the target that only this package writes.
	Fields []Field
	// Source returns the keys of the source t copies from (its manager),
	// and false when t refers to none. A target never copies from itself.
	Source func(t *T) (Key, bool)
	// Targets returns where the targets that may refer to s live: for the
	// guide's department, the department entity of the manager's partition.
	// It is called with the source as it was before and after a change,
	// and must name every target that refers to s; the others it names
	// count against InsertSource's transaction (see the Targets type).
	// OtherPartition: a
	// change's fan-out carries what it names, before and after, in
	// messages of 40 KiB, at most 48 (about 50,000 keys; a Range counts
	// as one entry): more is refused with ErrFanOutTooLarge. A key (or a
	// Range's PartitionKey) no entity can have, named for a source's new
	// version, refuses its write before anything is written with a
	// *StepError matching entity.ErrInvalid that names it; named for the
	// stored version only, it names no target and is left out
	// (TestInvalidTargetKeyRefused).
	Targets func(s *S) Targets
	// Placement is where the targets live; the zero value is
	// SamePartition.
	Placement Placement
}

// Config tunes a Copies. The zero value works for SamePartition relations;
// each field says what 0 means.
type Config struct {
	// Processor is the processor of package eventual whose workers fan
	// OtherPartition relations' changes out (New registers its message
	// kind on it; run its Run somewhere, and Relay now and then), and
	// that sends the caller's messages (WriteOptions.Messages) from the
	// outbox of the table written. It is required when a relation is
	// OtherPartition (a *ConfigError naming Config.Processor otherwise,
	// before any request); nil is allowed when every relation is
	// SamePartition and no write carries messages.
	Processor *eventual.Processor
	// Retry bounds the read-write rounds lost to concurrent writers; the
	// zero value is entity.RetryPolicy's defaults (10 rounds). A
	// ModifySource or ModifyTarget whose ModifyOptions.Retry is not zero
	// uses that instead.
	Retry entity.RetryPolicy
	// Kind is the name of the message kind that fans out OtherPartition
	// copies: 1 to 128 ASCII letters, digits, '.', '_' and '-'. "" means
	// "denormalize.<source table>.<target table>.v1" or, when the tables'
	// names make that longer than 128 bytes, both names cut to 47
	// characters and followed by 16 hex digits of a hash of the pair. Two
	// Copies of one pair of tables on one processor need distinct kinds.
	Kind string
	// Outbox tunes the outboxes that make a write and its messages one
	// transaction: a source's change and its fan-out messages
	// (OtherPartition relations), and any write and the caller's own
	// messages (WriteOptions.Messages). Both tables use it when the
	// targets are in another table.
	Outbox eventual.OutboxConfig
	// Concurrency is how many targets a fan-out writes at once; 0 means
	// entity.DefaultConcurrency.
	Concurrency int
}

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = entity.DefaultConcurrency
	}
	return c
}

// Properties a target's copy never touches, whatever a Field says.
const (
	propWriteToken = "TkWrite" // entity's write token chain
	maxNameLength  = 32
)

// relation is a checked declaration.
type relation[T, S any] struct {
	Relation[T, S]
}

func compile[T, S any](i int, r Relation[T, S], tgt, src *entityfields.Stored) (*relation[T, S], error) {
	bad := func(field, reason string) error {
		return &ConfigError{Relation: r.Name, Position: i, Field: field, Reason: reason}
	}
	// A name T or S does not store would copy nothing, or into a
	// property no reader of T sees: refused, never silent. A Go path
	// names the property of its field.
	r.Fields = slices.Clone(r.Fields)
	for j, f := range r.Fields {
		from, why := src.Resolve(f.From)
		if why != "" {
			return nil, bad("Fields", "From "+why)
		}
		to, why := tgt.Resolve(f.To)
		if why != "" {
			return nil, bad("Fields", "To "+why)
		}
		r.Fields[j] = Field{From: from, To: to}
	}
	if r.Name == "" || len(r.Name) > maxNameLength {
		return nil, bad("Name", "must be 1 to 32 ASCII letters and digits")
	}
	for _, c := range []byte(r.Name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return nil, bad("Name", "must be 1 to 32 ASCII letters and digits")
		}
	}
	if r.Source == nil {
		return nil, bad("Source", "is nil")
	}
	if r.Targets == nil {
		return nil, bad("Targets", "is nil")
	}
	if r.Placement > OtherPartition {
		return nil, bad("Placement", "is not SamePartition or OtherPartition")
	}
	if len(r.Fields) == 0 {
		return nil, bad("Fields", "are none")
	}
	var tos []string
	for _, f := range r.Fields {
		for _, name := range []string{f.From, f.To} {
			if why := ident.Check(name); why != "" {
				return nil, bad("Fields", "name "+quote(name)+": "+why)
			}
			if systemProperty(name) {
				return nil, bad("Fields", "name "+name+", which is not a property a copy can hold")
			}
		}
		if slices.Contains(tos, f.To) {
			return nil, bad("Fields", "copy into "+f.To+" twice")
		}
		tos = append(tos, f.To)
	}
	return &relation[T, S]{Relation: r}, nil
}

func systemProperty(name string) bool {
	switch name {
	case "PartitionKey", "RowKey", "Timestamp", propWriteToken:
		return true
	}
	return false
}

func quote(s string) string { return "\"" + s + "\"" }

// storedOf returns the properties V stores; json.RawMessage (a document
// kept whole) keeps any.
func storedOf[V any]() (*entityfields.Stored, error) {
	t := reflect.TypeFor[V]()
	if t == reflect.TypeFor[json.RawMessage]() {
		return entityfields.Open(), nil
	}
	return entityfields.StoredOf(t)
}
