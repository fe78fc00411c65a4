package entity

import "github.com/tablekit/tablekit/internal/argerr"

// Fields a ConfigError names.
const (
	FieldConnectionString = "connection string"
	FieldAccountKey       = "AccountKey"
	FieldServiceURL       = "service URL"
	FieldCredential       = "credential"
	FieldServiceClient    = "service client"
	FieldClientOptions    = "client options"
)

// ConfigError reports an argument of a constructor (NewTableFromService,
// NewTableFromConnectionString, NewTableWithCredential) that cannot be
// used, refused before any request: "entity: invalid <Field>: <Reason>".
// Field is one of the Field constants. It never repeats an account key, a
// signature, a URL's query or its user information.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	if e == nil {
		return "entity: invalid argument: <nil>"
	}
	return argerr.Message("entity", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) true, and errors.Is(err,
// ErrInvalidConnectionString) for a connection string (or its AccountKey)
// that cannot be read.
func (e *ConfigError) Is(target error) bool {
	if e == nil {
		return false
	}
	return target == ErrInvalid ||
		target == ErrInvalidConnectionString && (e.Field == FieldConnectionString || e.Field == FieldAccountKey)
}
