// Package faults injects the transport failures that tablekit's consistency
// guarantees are tested against, on a real service (Azurite or an account):
//
//   - [Injector], an azcore pipeline policy (put it in PerRetryPolicies) that
//     loses replies — the request reaches the service and is executed, then
//     the reply is dropped and replaced by a connection-reset error, so azcore
//     retries a request that was applied — or fails requests before they are
//     sent;
//   - [Proxy], a TCP proxy on the loopback interface that resets connections
//     in the middle of a reply, below the HTTP client, for tests that must not
//     depend on where a policy sits in the pipeline.
//
// A lost reply is the case that makes a retried insert see 409, a retried
// conditional update 412 and a retried $batch a 409 at operation 0 for a change
// that was applied; every tablekit write path is tested under it.
//
// Both are deterministic for a seed (the Proxy per connection order), safe for
// concurrent use, and can be switched off and on while a test runs. The Proxy
// only forwards to loopback addresses.
package faults
