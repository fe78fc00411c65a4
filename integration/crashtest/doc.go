// Package crashtest is the consistency harness of tablekit's patterns: it
// runs a pattern's scenario against a real service and kills it after
// every storage request in turn, then runs the pattern's recovery and
// checks its invariant — nothing lost, nothing applied twice.
//
// A crash is simulated the way a process dies as far as storage can tell:
// a [Killer], a pipeline policy on every client of the crashing run, lets
// the first k requests through and fails every later one before it is
// sent, with an error azcore does not retry; the run's context is cancelled
// at the same moment. Whatever the abandoned goroutines still try to do —
// release a message, finish a step, clean up — never reaches the service.
// Recovery then runs with healthy clients.
//
//	crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
//		// fresh tables and queues for this run
//		return crashtest.Run{
//			Work:    func(ctx context.Context, env *integration.Env) error { … },  // clients from env
//			Recover: func(ctx context.Context) error { … },                         // healthy clients
//			Check:   func(t *testing.T) { … },                                      // the invariant
//		}
//	}})
//
// [EveryStep] first runs the scenario without a crash and counts its
// requests, n; then twice for each k in 0..n-1: killed before request k+1
// is sent ([NewKiller]), and killed once the service has executed request
// k+1, before its reply is read ([NewExecutedKiller]) — the crash after
// which a fresh process must find out what was applied. The crash runs are
// subtests, [Scenario.Parallel] at a time (by default go test's -parallel,
// from goroutines of EveryStep's own: TestEveryStepRunsCrashPointsAtOnce). The other failures the
// guide's patterns must survive have their helpers here too: [Barrier]
// makes concurrent deliveries or writers meet inside a step, and package
// faults loses replies and fails requests at a given rate.
//
// # Use from your own tests
//
// crashtest is public: crash-test your own code against Azurite as tablekit
// crash-tests its patterns. Start an [integration.Env] from TestMain
// (integration.Main), describe a Scenario whose Work uses only the clients
// of the env it is given, and EveryStep crashes it at every request and
// checks the invariant after your recovery.
//
// # Layer
//
// crashtest imports package integration (the Env that Work receives), so
// it cannot sit in internal/, the floor under entity that imports nothing
// above it; as integration's public test kit it is usable by any code
// built on tablekit (package internal describes the layers).
package crashtest
