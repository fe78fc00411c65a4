package entity

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/keys"
)

// Sentinel errors, for errors.Is.
var (
	// ErrInvalid reports a value that breaks a limit of the service: a key,
	// property name, size, range or count. Nothing was sent. It is also
	// the one sentinel of every package's *ConfigError: an argument of a
	// constructor or a call (a Config field, a nil table) refused before
	// any request matches it, whichever package refused it.
	ErrInvalid = argerr.Err
	// ErrInvalidType reports a Go type that cannot be mapped: an unknown tag
	// option, an unsupported field type, two fields with one property name,
	// or a value that is no entity at all (nil). Every such refusal is a
	// *TypeError, which matches ErrInvalid too: nothing was sent.
	ErrInvalidType = errors.New("entity: unsupported entity type")
	// ErrDecode reports a body that cannot be read into the target: malformed
	// JSON, or a property whose value does not fit the Go field.
	ErrDecode = errors.New("entity: cannot decode entity")
)

// Rule names the limit a ValidationError is about, in words. It is
// [keys.Rule]: one rule type for every package of tablekit, so a rule reads
// and compares the same whether entity or keys reports it.
type Rule = keys.Rule

// The rules of design guide §1 that Marshal and Validate enforce.
const (
	RuleKey             Rule = "key"                    // PartitionKey/RowKey characters and length
	RulePropertyName    Rule = "property name"          // C# identifier, at most 255 characters, not reserved
	RulePropertyCount   Rule = "property count"         // at most 252 user properties
	RuleStringLength    Rule = "string length"          // at most 32 K UTF-16 code units
	RuleBinaryLength    Rule = "binary length"          // at most 64 KiB
	RuleEntitySize      Rule = "entity size"            // at most 1 MiB by the service's formula
	RuleIntegerRange    Rule = "integer range"          // the value does not fit Int32/Int64
	RuleDateTimeRange   Rule = "datetime range"         // 1601-01-01 to 9999-12-31 UTC
	RuleFiniteDouble    Rule = "finite double"          // no longer reported: NaN and ±Inf are written as the service's "NaN", "Infinity", "-Infinity"
	RuleUTF8            Rule = "valid UTF-8"            // strings must be valid UTF-8
	RulePropertyType    Rule = "property value type"    // a DynamicEntity value of a type with no EDM mapping
	RuleDuplicateName   Rule = "duplicate property"     // one property name twice
	RuleReservedName    Rule = "reserved property name" // PartitionKey, RowKey, Timestamp as user properties
	RuleMissingKeyField Rule = "key field"              // the type has no PartitionKey or RowKey
	RuleTableName       Rule = "table name"             // 3-63 letters and digits, starting with a letter, not "tables"
)

// ValidationError reports one broken limit. It names the property (or key),
// the rule, the limit and the offending value; errors.Is(err, ErrInvalid)
// holds for every ValidationError, and Unwrap exposes an underlying cause such
// as a *keys.KeyError.
type ValidationError struct {
	Property string // property name, "PartitionKey" or "RowKey"
	Rule     Rule
	Limit    string // the limit, in words: "32768 UTF-16 code units"
	Value    string // the offending value, shortened for display
	Err      error  // the underlying cause, if any
}

func (e *ValidationError) Error() string {
	if e == nil {
		return "entity: invalid entity: <nil>"
	}
	var b strings.Builder
	b.WriteString("entity: invalid entity: ")
	if e.Property != "" {
		b.WriteString("property ")
		b.WriteString(e.Property)
		b.WriteString(": ")
	}
	b.WriteString(string(e.Rule))
	if e.Limit != "" {
		b.WriteString(" (limit ")
		b.WriteString(e.Limit)
		b.WriteString(")")
	}
	if e.Value != "" {
		b.WriteString(": got ")
		b.WriteString(e.Value)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(inner(e.Err))
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns the underlying cause.
func (e *ValidationError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// TypeError reports a Go type that cannot be mapped to an entity (or a nil
// value where an entity is wanted). It is found when the type is first
// planned, never by a panic, and before any request: it matches
// ErrInvalidType and ErrInvalid (TestRefusalsMatchErrInvalid in
// internal/apisweep).
type TypeError struct {
	Type   reflect.Type
	Field  string // Go field path, for example "Address.Street"
	Reason string
}

func (e *TypeError) Error() string {
	if e == nil {
		return "entity: unsupported entity type: <nil>"
	}
	if e.Field == "" {
		return fmt.Sprintf("entity: unsupported entity type %v: %s", e.Type, e.Reason)
	}
	return fmt.Sprintf("entity: unsupported entity type %v: field %s: %s", e.Type, e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidType) and errors.Is(err, ErrInvalid)
// true.
func (e *TypeError) Is(target error) bool { return target == ErrInvalidType || target == ErrInvalid }

// DecodeError reports a body that cannot be read into the target.
type DecodeError struct {
	Property string // empty for a syntax error
	Offset   int    // byte offset in the body, for a syntax error
	Reason   string
	Err      error
	// Stored is the EDM type the property is stored as, when the body says
	// it (0 when it does not: a string in a no-metadata body).
	Stored EDMType
	// Type is the Go type of the field the value was read into; nil for a
	// property bag and for syntax errors.
	Type reflect.Type
}

func (e *DecodeError) Error() string {
	if e == nil {
		return "entity: cannot decode entity: <nil>"
	}
	var b strings.Builder
	b.WriteString("entity: cannot decode entity: ")
	if e.Property != "" {
		b.WriteString("property ")
		b.WriteString(e.Property)
		b.WriteString(": ")
	} else {
		fmt.Fprintf(&b, "at byte %d: ", e.Offset)
	}
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(inner(e.Err))
	}
	return b.String()
}

// Is makes errors.Is(err, ErrDecode) true.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// Unwrap returns the underlying cause.
func (e *DecodeError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// prefix starts the text of every error of this package.
const prefix = "entity: "

// inner is the text of an error that one of this package's errors wraps,
// in one line and without a leading "entity: ": the wrapping error's text
// names the package once. Only the first line of a foreign error is kept:
// an *azcore.ResponseError's continues with the HTTP exchange, which stays
// reachable with errors.As.
func inner(err error) string {
	if err == nil {
		return "<nil>"
	}
	line, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), prefix), "\n")
	return line
}

// chain is an error of this package that adds a cause to another: its
// text is both, in one line, with the package named once; errors.Is and
// errors.As reach both.
type chain struct{ err, cause error }

func (e *chain) Error() string   { return e.err.Error() + ": " + inner(e.cause) }
func (e *chain) Unwrap() []error { return []error{e.err, e.cause} }

// join is errors.Join for this package's errors: one line, nil when both
// are nil, either when the other is nil.
func join(err, cause error) error {
	switch {
	case err == nil:
		return cause
	case cause == nil:
		return err
	}
	return &chain{err, cause}
}

// shorten quotes a key or a value an error names, as every error of
// tablekit does (argerr.Quote): cut to 64 bytes for 64 KiB values.
func shorten(s string) string { return argerr.Quote(s) }

// oneLine joins the lines of a message the service wrote.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// RowError reports an error about one entity, named by its keys: a row of
// a query that cannot be decoded (or, through package crypt,
// authenticated), or the entity of a single-entity call that cannot be
// encoded, addressed, read (a reply that cannot be read, a cancelled
// context: Op is the call's, Get or Modify) or decoded. It unwraps to the cause, so
// errors.Is(err, ErrDecode), ErrInvalid or crypt.ErrTampered and
// errors.As(err, &*DecodeError) reach it. A row that fails is never
// handed out partly filled: the value yielded or returned with a
// RowError is T's zero value.
type RowError struct {
	Op                   string // "Query", "Get", "Insert", …
	Table                string
	PartitionKey, RowKey string
	Err                  error
}

func (e *RowError) Error() string {
	if e == nil {
		return "entity: row error: <nil>"
	}
	return where(e.Op, e.Table, scopeEntity, e.PartitionKey, e.RowKey) + ": " + inner(e.Err)
}

// Unwrap returns the cause.
func (e *RowError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// rowErr wraps err (nil stays nil) as a *RowError of op on the entity pk, rk.
func rowErr(op, table, pk, rk string, err error) error {
	if err == nil {
		return nil
	}
	return &RowError{Op: op, Table: table, PartitionKey: pk, RowKey: rk, Err: err}
}

// ETagError reports a conditional write asked for an entity without an
// ETag, before any request; it matches ErrNoETag and ErrInvalid. Read the
// entity first, or write whatever its version: UpdateAny, or Delete with
// AnyETag.
type ETagError struct {
	Op                   string // "Update", "Delete", "DeleteEntity", or a transaction's operation kind
	Table                string
	PartitionKey, RowKey string
}

func (e *ETagError) Error() string {
	if e == nil {
		return "entity: no etag: <nil>"
	}
	hint := "read it first, or use UpdateAny to write whatever its version"
	if strings.HasPrefix(e.Op, "Delete") || e.Op == OpDelete.String() {
		hint = "read it first, or pass entity.AnyETag to delete whatever its version"
	}
	return where(e.Op, e.Table, scopeEntity, e.PartitionKey, e.RowKey) + ": entity has no etag for a conditional write: " + hint
}

// Is makes errors.Is(err, ErrNoETag) and errors.Is(err, ErrInvalid) true.
func (e *ETagError) Is(target error) bool { return target == ErrNoETag || target == ErrInvalid }

// ErrNeedsClientOptions reports a call that only a client built with
// ClientOptions can make (a merge, replace, upsert or delete addressed by
// an empty PartitionKey), refused before any request.
var ErrNeedsClientOptions = errors.New("entity: the client must be built with entity.ClientOptions")

// ClientOptionsError reports a write that the table's client cannot send
// because it was built without ClientOptions, before any request. It
// matches ErrNeedsClientOptions and ErrInvalid, and its message says what
// to do: build the *aztables.Client or *aztables.ServiceClient with
// entity.ClientOptions(opts), or make the table with tablekit's
// constructors (NewTableFromConnectionString, NewTableWithCredential),
// which do.
type ClientOptionsError struct {
	Op                   string
	Table                string
	PartitionKey, RowKey string
	Reason               string
}

func (e *ClientOptionsError) Error() string {
	if e == nil {
		return "entity: client options: <nil>"
	}
	return where(e.Op, e.Table, scopeEntity, e.PartitionKey, e.RowKey) + ": " + e.Reason +
		"; build the *aztables.Client or *aztables.ServiceClient with entity.ClientOptions(opts), or make the table with entity.NewTableFromConnectionString or NewTableWithCredential"
}

// Is makes errors.Is(err, ErrNeedsClientOptions) and errors.Is(err,
// ErrInvalid) true.
func (e *ClientOptionsError) Is(target error) bool {
	return target == ErrNeedsClientOptions || target == ErrInvalid
}

// argError is an argument of a constructor or a call refused before any
// request — a nil client, table or credential, a connection string or a
// token that cannot be read: it matches ErrInvalid, and unwraps to its
// cause. An exported sentinel made with it (ErrInvalidConnectionString,
// ErrInvalidToken) matches ErrInvalid too.
type argError struct {
	msg   string
	cause error
}

// invalidArg returns an *argError with text msg.
func invalidArg(msg string) error { return &argError{msg: msg} }

func (e *argError) Error() string {
	if e.cause == nil {
		return e.msg
	}
	return e.msg + ": " + inner(e.cause)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *argError) Is(target error) bool { return target == ErrInvalid }

func (e *argError) Unwrap() error { return e.cause }
