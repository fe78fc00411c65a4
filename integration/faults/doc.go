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
//   - [Killer], a pipeline policy that simulates a process that dies after
//     a number of requests (before sending the next, or once the service
//     executed it): package crashtest's crash points, usable outside tests
//     too, since faults links no testing.
//   - [Deleting], a pipeline policy that refuses the creates of a table,
//     queue or container name with 409 TableBeingDeleted (QueueBeingDeleted,
//     ContainerBeingDeleted), as the service does for about 40 seconds
//     after a delete and Azurite never does: the case a Provision must
//     wait out, never report as done.
//   - [ShortPages], a pipeline policy that makes the table service end each
//     page of a query after a few entities, as Table storage may end a page
//     before its 1,000: code that pages through a table meets its page
//     boundaries with a tenth of the data (TestShortPagesEndPagesEarly).
//
// A lost reply is the case that makes a retried insert see 409, a retried
// conditional update 412 and a retried $batch a 409 at operation 0 for a change
// that was applied; every tablekit write path is tested under it.
//
// Both are deterministic for a seed (the Proxy per connection order), safe for
// concurrent use, and can be switched off and on while a test runs. The Proxy
// only forwards to loopback addresses.
//
// # Use from your own tests
//
// faults is public: code built on tablekit tests its own write paths the
// way tablekit does, against the Azurite of package integration. Give an
// Env's clients an Injector and lose the next reply of a request:
//
//	f := faults.New(faults.Config{})
//	lossy := env.With(f)    // an *integration.Env whose clients carry f
//	f.LoseNext(1, func(r *http.Request) bool { return r.Method == http.MethodPost })
//	// … run the code under test with lossy's clients, then read the state
//	// back with env's and check it, and that f.Stats().LostReplies == 1.
//
// [Injector.LoseNextThen] runs a function after the lost request was
// executed and before azcore resends it: the place for a second writer,
// through clients without the Injector.
//
// # Layer
//
// faults imports no tablekit package; it lives beside integration, not
// under internal/, because it is public and is used with an
// integration.Env (package internal describes the layers).
package faults
