package entity

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// Sentinels for the service's answers, for errors.Is. The *azcore.ResponseError
// behind each stays reachable with errors.As.
var (
	// ErrNotFound: the entity does not exist.
	ErrNotFound = errors.New("entity: not found")
	// ErrTableNotFound: the table does not exist (a typo, or deleted), which
	// is not the same as a missing entity: DeleteIfExists reports it.
	ErrTableNotFound = errors.New("entity: table not found")
	// ErrAlreadyExists: an insert found an entity (or table) with the same keys.
	ErrAlreadyExists = errors.New("entity: already exists")
	// ErrPreconditionFailed: the ETag did not match; another writer changed
	// the entity since it was read.
	ErrPreconditionFailed = errors.New("entity: etag mismatch")
	// ErrNoETag: a conditional write was asked for an entity with no ETag.
	// Read it first, or ask for an unconditional write with UpdateAny.
	ErrNoETag = errors.New("entity: entity has no etag for a conditional write")
)

// ServiceError is a failed call to the service. It matches ErrNotFound,
// ErrTableNotFound, ErrAlreadyExists or ErrPreconditionFailed by its error code and unwraps to
// the *azcore.ResponseError.
type ServiceError struct {
	Op         string // "Get", "Insert", …
	Table      string
	StatusCode int
	Code       string // the service's error code, e.g. "UpdateConditionNotSatisfied"
	Err        error  // usually an *azcore.ResponseError
}

func (e *ServiceError) Error() string {
	if e == nil {
		return "entity: service error: <nil>"
	}
	where := "entity: " + e.Op
	if e.Table != "" {
		where += " on table " + e.Table
	}
	return where + ": " + answerLine(e.StatusCode, e.Code, e.Err)
}

// answerLine says in one line what the service answered: status and error
// code for a service error, the first line of anything else (a transport
// failure). The full HTTP exchange azcore prints stays reachable through
// errors.As to *azcore.ResponseError; it is not repeated here.
func answerLine(status int, code string, err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if status == 0 {
			status = re.StatusCode
		}
		if code == "" {
			code = re.ErrorCode
		}
	}
	switch {
	case status != 0 && code != "":
		return strconv.Itoa(status) + " " + code
	case status != 0:
		return strconv.Itoa(status) + " " + http.StatusText(status)
	case err != nil:
		line, _, _ := strings.Cut(err.Error(), "\n")
		return line
	}
	return code
}

func (e *ServiceError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Is maps the service's codes and statuses onto the sentinels.
func (e *ServiceError) Is(target error) bool {
	return e != nil && matchesCode(target, e.Code, e.StatusCode)
}

func matchesCode(target error, code string, status int) bool {
	switch target {
	case ErrNotFound:
		return code == "ResourceNotFound" || code == "EntityNotFound" || (code == "" && status == http.StatusNotFound)
	case ErrTableNotFound:
		return code == "TableNotFound"
	case ErrAlreadyExists:
		return code == "EntityAlreadyExists" || code == "TableAlreadyExists" || (code == "" && status == http.StatusConflict)
	case ErrPreconditionFailed:
		return code == "UpdateConditionNotSatisfied" || status == http.StatusPreconditionFailed
	}
	return false
}

// wrapErr turns an SDK error into a *ServiceError; other errors (a cancelled
// context, a network failure) are returned unchanged.
func wrapErr(op, table string, err error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return err
	}
	return &ServiceError{Op: op, Table: table, StatusCode: re.StatusCode, Code: re.ErrorCode, Err: err}
}
