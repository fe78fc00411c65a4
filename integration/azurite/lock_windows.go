//go:build windows

package azurite

import "context"

// lockFile does not lock on Windows: concurrent installations each run npm
// and the atomic rename in installAzurite keeps exactly one of them.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
