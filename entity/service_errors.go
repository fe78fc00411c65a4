package entity

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/provision"
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
	// The error that matches it is an *ETagError naming the operation,
	// the table and the keys.
	ErrNoETag = errors.New("entity: entity has no etag for a conditional write")
	// ErrUnauthorized: the service refused the credential or its rights
	// (401 or 403: AuthenticationFailed, AuthorizationFailure,
	// AuthorizationPermissionMismatch, …): a wrong key, an expired SAS, a
	// role without the permission. Repeating the call does not help.
	ErrUnauthorized = errors.New("entity: not authorized")
	// ErrUnreachable: no answer came from the service after azcore's
	// retries (connection refused, DNS failure, timeouts), and nothing was
	// sent that may have been executed. A write whose request may have
	// reached the service is ErrOutcomeUnknown instead. A cancelled or
	// expired ctx is reported as ctx's error, not as this.
	ErrUnreachable = errors.New("entity: service unreachable")
	// ErrBeingDeleted: the service refused to create a table because a
	// table of that name is being deleted (409 TableBeingDeleted, for
	// about 40 seconds after a delete on Azure Storage). Table.Provision
	// asks again until ctx ends, and its error then matches this and
	// ctx's error. Package account's ErrBeingDeleted is this value, and
	// the Provision methods of the patterns' queues and containers
	// (QueueBeingDeleted, ContainerBeingDeleted) match it too.
	ErrBeingDeleted = provision.ErrBeingDeleted
)

// ServiceError is a failed call to the service. It matches ErrNotFound,
// ErrTableNotFound, ErrAlreadyExists, ErrPreconditionFailed or
// ErrUnauthorized by its error code and unwraps to the
// *azcore.ResponseError, whose Error() holds the whole HTTP exchange; its
// own Error() is one line. StatusCode 0 means no answer came (the error
// matches ErrUnreachable and unwraps to the transport's error).
type ServiceError struct {
	Op    string // "Get", "Insert", …
	Table string
	// PartitionKey and RowKey name the entity of a single-entity call
	// (Get, Insert, Upsert, Update, UpdateAny, Delete, Modify): its
	// message names both, quoted, empty keys included.
	PartitionKey, RowKey string
	StatusCode           int
	Code                 string // the service's error code, e.g. "UpdateConditionNotSatisfied"
	Err                  error  // usually an *azcore.ResponseError

	scope scope
}

// scope is what an error's message names besides the operation and table.
type scope uint8

const (
	scopeAuto      scope = iota // the keys that are set
	scopeEntity                 // both keys, even empty ones: one entity
	scopePartition              // the PartitionKey, even empty: a transaction
)

// where starts the message of an error about op on table: the package,
// the operation, the table and the keys the scope names.
func where(op, table string, sc scope, pk, rk string) string {
	s := prefix + op
	if table != "" {
		s += " on table " + table
	}
	switch {
	case sc == scopeEntity || (sc == scopeAuto && rk != ""):
		s += " (" + argerr.EntityKeys(pk, rk) + ")"
	case sc == scopePartition || (sc == scopeAuto && pk != ""):
		s += " (" + argerr.Keys(pk, "") + ")"
	}
	return s
}

func (e *ServiceError) Error() string {
	if e == nil {
		return "entity: service error: <nil>"
	}
	where := where(e.Op, e.Table, e.scope, e.PartitionKey, e.RowKey)
	if e.StatusCode == 0 && e.Code == "" {
		return where + ": service unreachable: " + transportLine(e.Err)
	}
	return where + ": " + answerLine(e.StatusCode, e.Code, e.Err)
}

// transportLine says in one line why no answer came: the transport's own
// error without the request URL that net/http puts before it (a SAS URL
// carries its signature).
func transportLine(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	if err == nil {
		return "<nil>"
	}
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
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
	if e == nil {
		return false
	}
	if target == ErrUnreachable {
		return e.StatusCode == 0 && e.Code == ""
	}
	if e.Op == opDeleteTable && e.StatusCode == http.StatusNotFound {
		// The service answers ResourceNotFound: the resource is the table.
		return target == ErrTableNotFound
	}
	return matchesCode(target, e.Code, e.StatusCode)
}

func matchesCode(target error, code string, status int) bool {
	switch target {
	case ErrNotFound:
		return code == "ResourceNotFound" || code == "EntityNotFound" || (code == "" && status == http.StatusNotFound)
	case ErrTableNotFound:
		return code == "TableNotFound"
	case ErrBeingDeleted:
		return code == "TableBeingDeleted"
	case ErrAlreadyExists:
		return code == "EntityAlreadyExists" || code == "TableAlreadyExists" || (code == "" && status == http.StatusConflict)
	case ErrPreconditionFailed:
		return code == "UpdateConditionNotSatisfied" || status == http.StatusPreconditionFailed
	case ErrUnauthorized:
		switch code {
		case "AuthenticationFailed", "AuthorizationFailure", "AuthorizationPermissionMismatch",
			"AuthorizationResourceTypeMismatch", "AuthorizationServiceMismatch", "AuthorizationProtocolMismatch",
			"AuthorizationSourceIPMismatch", "InsufficientAccountPermissions":
			return true
		}
		return status == http.StatusUnauthorized || status == http.StatusForbidden
	}
	return false
}

const opDeleteTable = "DeleteTable"

// wrapErr turns an SDK error into a *ServiceError: the service's answer, or
// no answer at all (a transport failure azcore gave up retrying); other
// errors (a cancelled context, a failing credential) are returned
// unchanged.
func wrapErr(op, table string, err error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return &ServiceError{Op: op, Table: table, StatusCode: re.StatusCode, Code: re.ErrorCode, Err: err}
	}
	if noAnswer(err) {
		return &ServiceError{Op: op, Table: table, Err: err}
	}
	return err
}

// wrapEntityErr is wrapErr for a call about the entity pk, rk: the
// *ServiceError names its keys.
func wrapEntityErr(op, table, pk, rk string, err error) error {
	err = wrapErr(op, table, err)
	if se, ok := err.(*ServiceError); ok {
		se.PartitionKey, se.RowKey, se.scope = pk, rk, scopeEntity
	}
	return err
}

// noAnswer reports a transport failure: net/http's *url.Error, or a
// network error. azcore returns the caller's context error itself when
// ctx ends, so a *url.Error that survives its retries is the service not
// answering (a try timeout included).
func noAnswer(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne)
}

// unanswered reports a *ServiceError for a call that got no answer.
func unanswered(err error) (*ServiceError, bool) {
	var se *ServiceError
	ok := errors.As(err, &se) && se.StatusCode == 0 && se.Code == ""
	return se, ok
}
