// Package layers holds the test that keeps tablekit's layout true to its
// layers: TestLayers parses every .go file of the module and fails on an
// import that runs back up a layer (or sideways where a layer forbids it),
// so a new arrow the wrong way fails `go test`. TestLayersFindsUpwardImports
// plants one of each kind and checks that the test finds them.
//
// # The layers
//
// From the bottom; a package follows the rule of the most specific
// directory that holds it, and may always import its own tree:
//
//  1. keys imports no tablekit package.
//  2. internal/... imports only internal/ and keys.
//  3. entity/... (entity/filter, entity/crypt, entity/sas,
//     entity/internal/...) imports only entity/, internal/ and keys.
//  4. On entity, or on internal/ alone: resolver and backup import
//     entity, internal/ and keys; cost imports internal/ and keys;
//     throttle also cost; account also cost and throttle.
//  5. integration imports layers 1 to 4; its kits integration/crashtest
//     and integration/seamtest also integration and integration/faults.
//     integration/azurite (account, cost, throttle, internal/, keys),
//     integration/cosmos (internal/, keys) and integration/faults (no
//     tablekit package) import neither integration nor entity, and link no
//     testing, so a program may use them.
//  6. patterns/...: first the foundation patterns, patterns/drift (entity,
//     internal/, keys) and patterns/eventual (layers 1 to 4, and its
//     internal/queueproc); then patterns/internal/... (indexset,
//     patterntest) on layers 1 to 4 and the foundation; then every other
//     pattern on layers 1 to 4, the foundation and patterns/internal/ —
//     never on integration, never on another pattern sideways, never on
//     patterns/internal/patterntest, which links testing (patterntest alone
//     also imports integration).
//  7. examples/...: programs on the public API — layers 3 and 4, keys and
//     patterns/ — each standing alone, to be copied whole into a service:
//     never internal/ (a user cannot copy that), never integration (it
//     links testing), never another example. examples/tour, the runner of
//     `make demo`, also imports integration/azurite (its private Azurite)
//     and runs the other examples as programs, importing none.
//
// A package's own tests (package x) follow its rule, and above layer 2
// (but for cost, throttle and account, which integration imports) may
// also import integration and its kits; the patterns' tests
// patterns/internal/patterntest. External test packages (package x_test)
// are outside the graph — nothing imports them — so a sweep of the public
// API from internal/ (apisweep, errtext) may import what it sweeps.
package layers
