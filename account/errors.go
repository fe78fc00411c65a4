package account

import (
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/connstr"
)

// Sentinels matched (errors.Is) by this package's errors.
var (
	// ErrInvalid is matched by every *ConfigError: an argument that cannot
	// be used, refused before any request.
	ErrInvalid = errors.New("account: invalid argument")
	// ErrNoEndpoint is matched by every *EndpointError: the account was
	// given no endpoint for the service asked for.
	ErrNoEndpoint = errors.New("account: no endpoint for the service")
)

// Fields a ConfigError names.
const (
	FieldConnectionString = "connection string"
	FieldAccountKey       = "AccountKey"
	FieldAccountURL       = "account URL"
	FieldSASURL           = "SAS URL"
	FieldCredential       = "credential"
	FieldTableName        = "table name"
	FieldQueueName        = "queue name"
	FieldContainerName    = "container name"
	FieldOptions          = "options"
	FieldAccount          = "account"
	FieldProvisioners     = "provisioners"
)

// ConfigError reports an argument that cannot be used: "account: invalid
// <Field>: <Reason>", which one (Field, one of the Field constants) and
// why. It never repeats an account key or a
// signature.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	if e == nil {
		return "account: invalid argument: <nil>"
	}
	return argerr.Message("account", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) and errors.Is(err,
// entity.ErrInvalid) true: entity.ErrInvalid is every package's
// ConfigError's sentinel (this package does not import entity; both are
// one value); and, for a connection string that cannot be read (Field
// FieldConnectionString or FieldAccountKey),
// errors.Is(err, entity.ErrInvalidConnectionString).
func (e *ConfigError) Is(target error) bool {
	return target == ErrInvalid || target == argerr.Err ||
		target == connstr.ErrMalformed && (e.Field == FieldConnectionString || e.Field == FieldAccountKey)
}

// errNilAccount is the error of a method called on a nil *Account.
var errNilAccount = &ConfigError{Field: FieldAccount, Reason: "nil *Account (use one of the New functions)"}

// Services an EndpointError names.
const (
	ServiceTable = "table"
	ServiceQueue = "queue"
	ServiceBlob  = "blob"
)

// EndpointError reports a client asked for a service the account has no
// endpoint for: Service is ServiceTable, ServiceQueue or ServiceBlob, and
// Reason says what would have given one.
type EndpointError struct {
	Service string
	Reason  string
}

func (e *EndpointError) Error() string {
	if e == nil {
		return "account: no endpoint: <nil>"
	}
	return fmt.Sprintf("account: no %s endpoint: %s", e.Service, e.Reason)
}

// Is makes errors.Is(err, ErrNoEndpoint) true.
func (e *EndpointError) Is(target error) bool { return target == ErrNoEndpoint }
