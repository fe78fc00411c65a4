// Package indexset is the one engine of tablekit's two index patterns:
// patterns/secondaryindex (entries per value, design guide §6.1 and §6.2)
// and patterns/indexentity (lists per value, §6.4). Each package's Set is
// a [Core] and what is the package's own: how an index lays out its rows,
// how a write builds its transaction, and its lookups and checks.
//
// # The engine
//
//   - [NewCore], [Core.Declare] and [Core.Open]: the Set's tables (the
//     primaries', as property bags with write tokens, and Config.Entries),
//     its declared indexes (names checked, SamePartition ones apart from
//     those its messages keep), the outbox of the primaries' table, and
//     the message kind of its remote indexes, registered on the processor
//     with the package's handler. [Core.Provision] creates the tables,
//     queues (and what more the package names), idempotently.
//   - [Primaries], the seam every primary row goes through: a write's
//     read, a worker's, a check's scan and a lookup's point reads come
//     from its Get and Query and are decoded by its Decode; every primary
//     written is its Encode's. [TablePrimaries] is entity's JSON; an
//     encrypted table plugs in here. A [Version] is one stored or intended
//     version of a primary: T, its properties as stored, its ETag and the
//     write token chain it was read with.
//   - The round driver, [Core.Insert], [Core.Update], [Core.Modify],
//     [Core.Delete] and [Core.MoveTo]: the checks before any request, the
//     read of the primary, the version to write (Modify's change, and its
//     Create), and the rounds, each a [Writer]'s Round — the package's
//     "build this round's transaction and submit it" — until the write is
//     applied or refused: [ErrAgain] builds again at once, a lost race
//     ([ErrRowChanged], or the primary's 412) reads again after a backoff
//     (Config.Retry), a delete whose outcome is unknown is settled by the
//     next read. [Core.Submit] is the transaction's one submit, with the
//     caller's messages as outbox intents ([Messages], [MaxMessages]), and
//     [PrimaryOp] and [Fence] are the primary's operations in it.
//   - [Core.Sync], the loop of the Set's message handler: for each remote
//     index, the row of the value the primary holds lists it and the rows
//     of the message's other values do not, read again until the primary
//     did not change under it; a [Syncer] says what "lists" means.
//   - One set of errors: [DeclarationError], [ConfigError], [KeyError],
//     [RowKeyError], [ModeError] and [StepError] are generic over a
//     [Package], a zero-size type of each pattern package that names it
//     and its ErrInvalidConfig sentinel; each package exports them under
//     its own names as aliases (type DeclarationError =
//     indexset.DeclarationError[pkg]), so its errors read
//     "secondaryindex: …" or "indexentity: …", match that package's
//     sentinels with errors.Is, and stay distinct types for errors.As.
//
// The shared test scenarios of both packages, run against this engine
// through each package's Set, are patterns/internal/patterntest/indextest.
//
// # Layer
//
// indexset imports entity, patterns/drift and patterns/eventual, so it
// lives under patterns/internal/, where only the pattern packages can
// import it, not in internal/, the floor under entity (package internal
// describes the layers).
package indexset
