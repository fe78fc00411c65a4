// Package internal is the floor of tablekit: implementation details that
// the packages above share and that are not part of its public API — the
// $batch wire format (batch), the JSON scanner (jsonscan), the transport
// pipeline (pipeline), write and resume tokens (wtoken, scantoken),
// connection strings (connstr), names and EDM values (tablename, ident,
// edmvalue), the struct field walks (entityfields, blobfield), one-line
// joined errors (errline), the clock and merges of sorted streams (clock,
// merge), and the repository's own checks (doccheck, readme, layers,
// apisweep, errtext, secretscan, testrun).
//
// # Layers
//
// From the bottom, each layer imports only the layers below it:
//
//  1. keys — key encodings; imports no tablekit package (a leaf).
//  2. internal/... — this floor; imports only keys and other internal/
//     packages, never entity, resolver, integration or patterns.
//  3. entity and its packages (entity/filter, entity/crypt, entity/sas,
//     entity/internal/...): the typed table; import only entity's own
//     packages, internal/ and keys. entity/internal/protect, the seam
//     between the codec and entity/crypt, lives there because only
//     entity's packages use it.
//  4. resolver, backup, cost, throttle, account: built on entity (cost
//     and throttle on internal/ alone; account on internal/, cost and
//     throttle).
//  5. integration (a real storage account for tests, through account) and
//     its test kits integration/faults, integration/crashtest and
//     integration/seamtest: public, so that code built on tablekit can be
//     crash- and fault-tested against Azurite the way tablekit is.
//  6. patterns/...: one package per pattern of the design guide, on entity;
//     what several patterns share lives in patterns/internal/ (indexset
//     for the two index patterns, patterntest for their tests), what one
//     pattern's implementation alone uses under that pattern
//     (patterns/eventual/internal/queueproc, eventual's queue worker).
//
// Go's internal rule lets only the tree rooted at an internal directory's
// parent import it, so where a package lives says who may use it. External
// test packages (package x_test) import nothing into the graph, so a test
// here may import what it checks (apisweep and errtext sweep the public
// API). The test in internal/layers parses the module and fails on an
// import that runs back up any layer, the examples (layer 7, on the public
// API) included; package layers lists each layer's rule.
package internal
