package indexset

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
)

var (
	errA = errors.New("a: invalid configuration")
	errB = errors.New("b: invalid configuration")
)

type pkgA struct{}

func (pkgA) Name() string            { return "a" }
func (pkgA) ErrInvalidConfig() error { return errA }

type pkgB struct{}

func (pkgB) Name() string            { return "b" }
func (pkgB) ErrInvalidConfig() error { return errB }

// TestErrorsArePerPackage checks that one package's errors read with its
// name, match its sentinel only, and are not the other package's type.
func TestErrorsArePerPackage(t *testing.T) {
	var err error = &DeclarationError[pkgA]{Index: "email", Position: 1, Field: "Name", Reason: "is used twice"}
	if got := err.Error(); got != `a: invalid index 1 ("email"): Name is used twice` {
		t.Errorf("Error() = %q", got)
	}
	if !errors.Is(err, errA) || errors.Is(err, errB) || !errors.Is(err, entity.ErrInvalid) {
		t.Error("DeclarationError[pkgA] must match a's sentinel and entity.ErrInvalid only")
	}
	var b *DeclarationError[pkgB]
	if errors.As(err, &b) {
		t.Error("a's DeclarationError is b's")
	}
	err = &ConfigError[pkgB]{Field: "Config.Kind", Reason: "is empty"}
	if got := err.Error(); got != "b: invalid Config.Kind: is empty" || !errors.Is(err, errB) || errors.Is(err, errA) || !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("ConfigError: %q", got)
	}
	inner := errors.New("bad key")
	err = &KeyError[pkgA]{Index: "email", Value: strings.Repeat("x", 100), Err: inner}
	if !errors.Is(err, entity.ErrInvalid) || !errors.Is(err, inner) || len(err.Error()) > 120 {
		t.Errorf("KeyError: %q", err)
	}
	err = &RowKeyError[pkgA]{RowKey: "email_x", Reason: "starts with index email's prefix email_"}
	if got := err.Error(); got != `a: primary RowKey "email_x" starts with index email's prefix email_` || !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("RowKeyError: %q", got)
	}
	err = &StepError[pkgB]{Step: "submit", Index: "name", PartitionKey: "Sales", RowKey: "1", Err: entity.ErrPreconditionFailed}
	if !errors.Is(err, entity.ErrPreconditionFailed) || err.Error() != `b: submit (index "name") of PartitionKey "Sales", RowKey "1": `+entity.ErrPreconditionFailed.Error() {
		t.Errorf("StepError: %q", err)
	}
	// No keys: none printed; the cause's own package prefix said once.
	err = &StepError[pkgA]{Step: "lookup", Index: "status", Err: errors.New("a: index is not unique")}
	if got := err.Error(); got != `a: lookup (index "status"): index is not unique` {
		t.Errorf("StepError without keys: %q", got)
	}
	err = &StepError[pkgA]{Step: "check: read partition", PartitionKey: "", RowKey: "", Err: errors.New("x")}
	if got := err.Error(); got != `a: check: read partition: x` {
		t.Errorf("StepError without keys: %q", got)
	}
	err = &StepError[pkgA]{Step: "check: read partition", PartitionKey: "Sales", Err: errors.New("x")}
	if got := err.Error(); got != `a: check: read partition of PartitionKey "Sales": x` {
		t.Errorf("StepError of a partition: %q", got)
	}
	err = &StepError[pkgA]{Step: "read primary", PartitionKey: "", RowKey: "O'Brien 1", Err: errors.New("x")}
	if got := err.Error(); got != `a: read primary of PartitionKey "", RowKey "O'Brien 1": x` {
		t.Errorf("StepError with an empty PartitionKey: %q", got)
	}
	err = CheckMode[pkgA]("Modify", entity.Merge)
	if got := err.Error(); got != "a: Modify with Merge: a Set writes its primaries whole; use Replace" || !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("ModeError: %q", got)
	}
	if err := CheckMode[pkgB]("Modify", 9); err == nil || err.Error() != "b: Modify with mode 9: a Set writes its primaries whole; use Replace" {
		t.Errorf("ModeError of an unknown mode: %v", err)
	}
	if CheckMode[pkgA]("Modify", 0) != nil || CheckMode[pkgA]("Modify", entity.Replace) != nil {
		t.Error("CheckMode refuses 0 or Replace")
	}
	if err := Raced(inner); !errors.Is(err, drift.ErrRaced) || !errors.Is(err, inner) {
		t.Errorf("Raced: %v", err)
	}
	// A refusal's sentinel matches itself and entity.ErrInvalid, wrapped
	// or not, and no other refusal.
	unknown, other := Refusal("a: no such index"), Refusal("a: no such index")
	err = &StepError[pkgA]{Step: "lookup", Index: "nope", Err: unknown}
	if !errors.Is(err, unknown) || !errors.Is(err, entity.ErrInvalid) || errors.Is(err, other) || err.Error() != `a: lookup (index "nope"): no such index` {
		t.Errorf("Refusal: %v", err)
	}
}
