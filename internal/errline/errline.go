// Package errline joins errors as errors.Join does, in one line: tablekit's
// errors are one line each (the HTTP exchange of an *azcore.ResponseError
// stays reachable with errors.As, not in the text).
package errline

import "strings"

// Join returns an error wrapping the non-nil errs, nil when there are
// none. Its text is the first line of each, separated by "; ".
func Join(errs ...error) error {
	var kept []error
	for _, err := range errs {
		if err != nil {
			kept = append(kept, err)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return &joined{kept}
}

type joined struct{ errs []error }

func (e *joined) Error() string {
	var b strings.Builder
	for i, err := range e.errs {
		if i > 0 {
			b.WriteString("; ")
		}
		line, _, _ := strings.Cut(err.Error(), "\n")
		b.WriteString(line)
	}
	return b.String()
}

func (e *joined) Unwrap() []error { return e.errs }
