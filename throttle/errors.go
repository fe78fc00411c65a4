package throttle

import "github.com/tablekit/tablekit/internal/argerr"

// ConfigError reports a Config or SimConfig field that cannot pace — a
// rate or Floor that is negative, NaN or infinite, a Floor above 1, a
// negative duration — found by NewLimiter or NewSimulator before any
// request. It matches entity.ErrInvalid (TestBadConfigIsATypedError).
type ConfigError struct {
	Field  string // "Config.PartitionRate", "SimConfig.RetryAfter", …
	Reason string
}

func (e *ConfigError) Error() string {
	if e == nil {
		return "throttle: invalid config: <nil>"
	}
	return argerr.Message("throttle", e.Field, e.Reason)
}

// Is makes errors.Is(err, entity.ErrInvalid) true.
func (e *ConfigError) Is(target error) bool { return target == argerr.Err }

// checkRate refuses a rate that is negative, NaN or infinite; 0 is the
// default.
func checkRate(field string, v float64) error {
	if v < 0 || v != v || v > maxFloat {
		return &ConfigError{Field: field, Reason: "is " + formatFloat(v) + ": want a finite rate of 0 (the default) or more"}
	}
	return nil
}
