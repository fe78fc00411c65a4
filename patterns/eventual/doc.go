// Package eventual runs work that spans partitions, tables, accounts or
// table and blob storage as eventually consistent transactions driven by a
// queue: the design guide's §6.3, the [eventually consistent transactions
// pattern], and the engine under its §6.2 (secondary
// index in another partition), §6.4 (index entities elsewhere), §6.5
// (denormalised copies) and §6.11 (large entities in blobs).
//
// An entity group transaction covers one partition of one table. Work that
// must change several partitions, tables or a blob is instead described by
// a message; a worker receives it, runs idempotent steps, and deletes the
// message only when every step is done. If the worker dies anywhere, the
// message reappears and the steps run again until they all succeed.
//
//	p, err := eventual.New(eventual.QueuesOf(queueService, "archive-0", "archive-1"), blobs, eventual.Config{})
//	archive := eventual.NewKind[ArchiveEmployee]("ArchiveEmployee.v1")
//	err = eventual.Handle(p, archive, func(ctx context.Context, m ArchiveEmployee) error {
//		return eventual.Move(ctx, current, archived, m.Department, m.ID, nil)
//	}, eventual.HandleOptions{})
//	msg, err := archive.Message(ArchiveEmployee{Department: "Sales", ID: "000123"})
//	err = p.Enqueue(ctx, msg)
//	err = p.Run(ctx) // the workers: until ctx ends
//
// # Guarantee
//
// Each guarantee names the test that injects the failure it survives.
//
//   - At least once: every step of an enqueued message runs to success at
//     least once, whatever crashes (TestCrashAtEveryStep: the worker killed
//     after each of its requests, a fresh one finishing), lost replies
//     (TestLoadUnderFaults: 5% of replies lost, 5% of requests failed) and
//     duplicate deliveries (TestDuplicateCopiesConcurrently,
//     TestRedeliveryWhileRunning) happen, unless the message is poisoned
//     (below).
//   - Convergence: once the queues have drained, the state is that of every
//     message having run exactly once — provided the steps are idempotent.
//     The steps of this package are: Upsert, Insert and Delete (a repeat
//     finds its work done, also beside another writer inside the retry
//     window of a lost reply: TestTableStepsLostReplyBesideAnotherWriter),
//     [Move] (TestMoveLostDeleteReplyReinsertInTheWindow; under endless
//     contention it gives up after 10 rounds:
//     TestMoveGivesUpUnderEndlessContention), [PutBlob],
//     [PutBlobIfAbsent], [DeleteBlob]
//     (TestBlobStepsLostReplyBesideAnotherWriter), and
//     Once, which applies a change that is not idempotent (an increment)
//     exactly once per message by writing a marker entity in the same entity
//     group transaction (also when a copy of the message runs inside the
//     retry window of a lost reply: TestOnceLostReplyWithACopyInTheWindow).
//     A step that cannot tell what it did (every reply lost, every
//     read-back failed) returns an error — matching
//     entity.ErrOutcomeUnknown for a write — never nil, so its message is
//     retried, never completed on a guess
//     (TestStepsNeverCompleteOnAnUnknownOutcome).
//     [SweepMarkers] deletes a marker only as the expired version it
//     found (If-Match its ETag): a marker rewritten between its scan and
//     its delete stays (TestSweepMarkersKeepsARewrittenMarker).
//   - No isolation: a reader may see any intermediate state — the guide's
//     archived employee may be in Current and Archive at once, or a counter
//     not yet incremented. Design readers for it.
//   - No order: messages may run in any order, concurrently, and twice.
//   - A change and its outbox messages commit together or not at all
//     (TestOutboxCrash; a change the service refuses commits no intent:
//     TestSubmitErrorsNameTheOutboxAndCommitNothing), a message that could never be sent is refused
//     before the transaction (TestSubmitRefusesAnUnsendableMessage), so
//     are more messages than the transaction holds — MaxSubmitMessages
//     (100 operations) less the change's own — with a
//     *TooManyMessagesError naming the count and the limit
//     (TestSubmitRefusesMoreMessagesThanItsTransactionHolds), and a
//     Submit whose reply was lost reports the truth also when a relay or
//     another writer acted inside azcore's retry window
//     (TestOutboxLostReply, TestSubmitLostReplyWithARelayInTheWindow,
//     TestSubmitLostReplyWithAWriterInTheWindow).
//   - One bad item never blocks the others: a message that can never
//     succeed is poisoned after one delivery while the rest run
//     (TestPoisonAtOnce, TestDrainHandlesEverythingThenReturns); Relay goes
//     on past an intent that fails and sets aside one that can never be
//     sent (TestRelayGoesOnPastUnsendableIntents,
//     TestRelayReportsEachPartitionAndGoesOn), and past an intent it sent
//     but could not delete, which its error names
//     (TestRelayReportsTheIntentItCouldNotDelete); Replay goes on past a poison
//     message it cannot move, which stays in the poison queue with its
//     record, named by Replay's error
//     (TestReplayPastOneMessageThatFailsToMoveBack); SweepMarkers goes on
//     past a partition whose deletes fail and names it in its error
//     (TestSweepMarkersGoesOnPastAPartitionItCannotDelete).
//   - Bad input fails alone and first: a nil processor, outbox, table,
//     container or queue service, an empty blob name or poison message
//     id, a negative ReplayOptions.Max, a PartitionKey or message id the
//     service would never store (SweepMarkers, Relay, Unsendable,
//     Revive) is a *ConfigError (matching entity.ErrInvalid) before any
//     request, never a panic (TestBadInputIsATypedErrorBeforeAnyRequest).
//   - A message that waits by failing is delivered until its wait is over:
//     a pattern's grace period its messages wait for (secondaryindex's
//     Config.Grace) must be shorter than the processor's
//     [Processor.RedeliveryWindow] — 15 s with the defaults — which
//     [Processor.CheckGrace] checks, refusing any other with a
//     *ConfigError, and from which [Processor.DefaultGrace] derives a safe
//     one (TestGraceMustBeShorterThanTheRedeliveryWindow). A slow account
//     needs a longer grace, and so a longer window: see DefaultGrace.
//
// # Steps of a message
//
//  1. Enqueue: one Put Message per message (base64 JSON envelope: kind, id,
//     created, payload; see "Wire format"). A payload that does not fit a
//     queue message (64 KiB, less a 2 KiB reserve for a wrapped poison
//     record) is written to a blob first and the message carries its name
//     (claim check).
//  2. Receive: up to 32 messages per Get Messages request (BatchSize), each
//     invisible to other workers for VisibilityTimeout, renewed halfway
//     through with Update Message while it waits or runs; each renewal's new
//     pop receipt is kept for the delete.
//  3. Run the kind's handler: its steps, each one storage request where the
//     service allows (Move: the target's read, the read, a write
//     conditional on the target's ETag, delete on the read's ETag; with an
//     edit, the target is read after the source and the source again).
//  4. Delete the message (and its claim-check blob).
//
// The guide's archive example costs enqueue + receive/32 + the target's
// read + read + copy + delete + delete-message: 6.03 storage
// transactions per employee (BenchmarkArchive, 1,000 messages; 5.03
// before Move read the target, which keeps a redelivered Move of an older
// version from overwriting a newer copy:
// TestMoveWithoutEditBesideAMoveOfANewerVersion).
//
// # Failure and recovery
//
//   - A crash before step 4 leaves the message in the queue; it reappears
//     after its visibility timeout and runs again from step 3. Each step
//     finds what an earlier run did (a re-insert's conflict, a re-delete's
//     404, Once's marker) and counts it as done. A crash after the handler
//     and before the delete runs the whole handler again: harmless. A crash
//     between a claim check's blob and its Put Message leaves the blob
//     unreferenced until the same message is enqueued again.
//   - A lost reply: azcore resends the request. A resent Put Message leaves a
//     second copy of the message (same id: handled twice, applied once); a
//     resent delete finds nothing (done); a resent transaction fails at
//     operation 0 (Once reads its marker back to report the truth). Move's
//     delete carries the ETag it read, so a resend never deletes a newer
//     version blindly; if another writer re-created the entity inside the
//     retry window, Move reads again and moves that version too, as a Move
//     running after it would (TestMoveLostDeleteReplyReinsertInTheWindow).
//   - A handler error: the message becomes visible again after RetryDelay,
//     doubling per delivery. After MaxDeliveries deliveries (5, as in Azure
//     Functions) it is moved to the poison queue "<queue>-poison" and
//     deleted from its queue; its [PoisonRecord] — the reason, the handler's
//     last error, the dequeue count, the times — is kept beside it (see
//     [PoisonFormat]). A message that cannot succeed (its text is not an
//     envelope, its kind has no handler, its payload does not decode) goes
//     there after its first delivery: it is never redelivered forever
//     (TestPoisonAfterMaxDeliveriesAndReplay, TestPoisonAtOnce). The copy
//     is made first, the record written second and the original deleted
//     third: a crash between leaves the original, which is poisoned again
//     later, so the poison queue may hold a second copy, byte for byte the
//     same, of which one has a record (TestPoisonCrashAtEveryStep).
//     [Processor.Replay] moves poison messages back, byte for byte, once the
//     cause is fixed (TestReplayCrashAtEveryStep) — but for one created
//     Config.MarkerTTL ago or more, whose Once markers may be swept
//     already, so that Once could apply its change again: that one stays,
//     reported as ErrStaleReplay, unless ReplayOptions.Stale
//     (TestReplayKeepsAMessageOlderThanItsMarkers).
//   - Shutdown (Run's context ends): no new receive; messages waiting in hand
//     are made visible at once; running handlers get ShutdownGrace, then
//     their context is cancelled and their messages released
//     (TestShutdownLosesNothing). A receive in flight is not cancelled with
//     Run's context — the service may have hidden its batch already, and
//     only its reply can release it: Run waits for the reply (ShutdownGrace
//     at most) and releases every message it brings, so that when Run
//     returns every message not done is visible
//     (TestShutdownReleasesTheBatchOfAReceiveInFlight; a reply slower than
//     ShutdownGrace is cut, and its batch comes back after its visibility
//     timeout). [Processor.Drain] is Run that returns by
//     itself once the queues are empty and nothing is in flight, with a
//     [DrainReport] of what it did and what was left
//     (TestDrainHandlesEverythingThenReturns,
//     TestDrainDeadlineReportsWhatIsLeft). Every other operation called
//     with a context that has ended returns an error matching ctx.Err()
//     and writes nothing (TestCancelledContextStopsEveryEntryPoint);
//     Replay cancelled mid-way releases the poison messages it held
//     (TestReplayCancelledReleasesWhatItHeld), also those of a receive
//     whose reply was on its way (TestReplayCancelledMidReceiveReleasesTheBatch).
//
// # Direct enqueue or outbox
//
// The guide's example changes an entity and then enqueues the message: a
// crash between the two leaves the change without its follow-up, forever.
// Enqueue first and the message may run before the change exists. Pick by
// what a lost message costs:
//
//   - [Processor.Enqueue]: at-least-once from the moment Enqueue returns nil.
//     Enqueue before the change when the handler copes with running first
//     (it may find nothing to do yet), or accept the window.
//   - [Outbox.Submit]: the change and the intent (an entity in the same
//     partition) in ONE entity group transaction, then enqueue and delete the
//     intent. Either both are committed or neither; a committed intent is
//     sent by Submit or, after a crash, by Relay (which scans for intents
//     older than [OutboxConfig].Grace). Relay may send a message twice; Once
//     is keyed by the message id, so it counts once. Submit checks first that
//     each message can be sent ([Processor.CheckSendable]: valid, and small
//     enough for a queue message or the processor has a blob container), so
//     a change is never committed with a message that cannot be sent. Relay
//     reports each intent it could not send as a [RelayError] and goes on;
//     an intent that can never be sent (written by a processor with a
//     container, relayed by one without; a damaged row) is set aside in its
//     partition, where [Outbox.Unsendable] lists it and [Outbox.Revive]
//     puts it back (TestRelayCrashAtEveryStep, TestRelaySetAsideLostReply,
//     TestRelayLostDeleteReplyWithANewIntentInTheWindow).
//
// # Inline processor
//
// A processor of [NewInline] has no queue and no worker: where a queued
// one would send a message, the caller's goroutine runs the handler
// registered for its kind, on the message as a worker would receive it
// (encoded and decoded again: the same kind, id, creation time and
// payload; no queue; DequeueCount the run's number: 1 in Submit, then
// one more for each Relay's run). Over an Outbox, Submit commits the
// change and the intents in one transaction, runs each intent's handler,
// and deletes the intents whose handler succeeded
// (TestInlineSubmitRunsTheHandler). It suits a service that wants the
// outbox's safety for a few handlers of its own — a table-wide unique
// index of secondaryindex or indexentity — without running a worker.
//
// Guarantee, beside the queued one's:
//
//   - A committed Submit's handlers run at least once, as with a queue: a
//     handler that fails, or a process that dies between the commit and
//     the intent's delete, leaves the intent, and Relay runs the handler
//     again (TestInlineHandlerFailureLeavesTheIntent; the writer killed
//     before and after each of its requests, a fresh processor's Relay
//     finishing: TestInlineSubmitCrash). A handler that runs twice counts
//     once when its steps are idempotent, as Once is
//     (TestInlineDuplicateRunCountsOnce).
//   - A handler's failure is not the write's: Submit returns nil once the
//     change committed, and reports the failure to Hooks.Error and, as
//     Result Retry, to Hooks.Outcome (a success is Result Done)
//     (TestInlineHandlerFailureLeavesTheIntent). Until a Relay runs it,
//     the handler's work is pending in the intent, as a queued message's
//     is in its queue.
//   - The same cap as a queue, on runs instead of deliveries: before it
//     runs a handler, Relay counts the run on the intent (Runs, the
//     intent replaced on condition of the ETag it read), and the
//     handler's Delivery.DequeueCount is the run's number — Submit's run
//     is 1, the first Relay's 2 — so a handler that fails twice then
//     succeeds runs exactly three times, DequeueCount 1, 2, 3, and its
//     intent is deleted (TestInlineFailsTwiceThenSucceeds, the failures
//     injected). When run Config.MaxDeliveries fails, its Relay sets the
//     intent aside instead of leaving it for another run, as a queue
//     poisons its message: a *RelayError with SetAside and Poisoned
//     matching ErrPoisoned (not ErrUnsendable) and the handler's error,
//     Result Poison with Reason ReasonFailed to Hooks.Outcome, and a
//     set-aside row whose Reason names the handler's last error, listed by
//     Unsendable; Revive brings it back with its count reset, its next run
//     DequeueCount 1 (TestInlineGivesUpAfterMaxDeliveries: a handler that
//     always fails, seen with DequeueCount 1 to MaxDeliveries, the table
//     read raw at the end). With MaxDeliveries 1, Submit's failed run sets
//     it aside (TestInlineMaxDeliveriesOneSetsAsideInSubmit).
//   - A run is counted once, and one count is run at most once: of two
//     Relays that read one version of an intent, one counts the run and
//     runs it; the other's count fails on the ETag and it leaves the
//     intent to the first, reporting nothing for it
//     (TestInlineRacingRelaysCountEachRunOnce: the second Relay injected
//     just before the first one's count). A run is counted before it
//     starts: a Relay that stops between its count and the handler (or a
//     count whose reply was lost) leaves a count without a run, and the
//     next Relay's DequeueCount skips one — nothing is lost
//     (TestInlineRelayCutAfterCountingSkipsOne). When that was run
//     MaxDeliveries, or its setting aside failed, the next Relay sets the
//     intent aside without running it again, Reason ReasonOverdelivered,
//     its error unknown (TestInlineCutLastRunIsSetAside).
//   - Runs are an outbox grace apart: a count rewrites the intent, whose
//     Timestamp is then the run's (TestInlineFailsTwiceThenSucceeds), and
//     Relay runs an intent only OutboxConfig.Grace after its Timestamp. A
//     handler that waits by failing so has at least (MaxDeliveries − 1) ×
//     Grace — 2 minutes with the defaults, none with NoGrace and Relays
//     in a loop — before it is given up: [Processor.RedeliveryWindow] is
//     0, [Processor.CheckGrace] takes any positive grace and
//     [Processor.DefaultGrace] is 10 s; keep a pattern's grace (and
//     secondaryindex's) below that window. Run Relay at startup and every
//     OutboxConfig.Grace or so (secondaryindex.Set.Relay, for a Set).
//   - What could never run is refused before anything is committed: a
//     kind without a handler on the processor, or a payload that does not
//     decode into the kind's type (CheckSendable, Submit, Enqueue); Relay
//     sets such an intent aside as unsendable. What needs a queue is an
//     *InlineError matching ErrInline: Run, Drain, Replay, PoisonRecord,
//     Enqueue of a message with a Delay; Provision and CreateQueues
//     create nothing (TestInlineRefusesWhatNeedsAQueue).
//   - Enqueue without an outbox runs the handlers and returns each one's
//     error as the message's *EnqueueError; a panic is an error, not a
//     crash of the caller. Nothing keeps such a message: the caller runs
//     it again, or submits it through an Outbox
//     (TestInlineEnqueueRunsOrRefuses).
//
// Cost against a queued processor: no Put Message, no receive, no message
// delete, no claim-check blob, no poison queue — a message costs its
// handler's requests and the intent's delete (a run of Relay one request
// more: the count, a Replace of the intent with its payload, so that
// Relay's run of the payroll example's raise is 5 requests with its
// query, TestInlineFailsTwiceThenSucceeds; a last run that fails, the
// set-aside transaction instead of the delete), and the
// write returns only
// after the handler ran, on the caller's time. For secondaryindex's
// unique TableWide index (BenchmarkTableWideInlineInsert in package
// secondaryindex, Azurite, 2 shared cores, -benchtime 50x -count 3): 8
// storage transactions per insert inline against 10 queued plus the
// worker's receives (2.2 to 2.4 per insert at 10 ms polling); the insert
// itself 7.9 to 13.6 ms inline against 6.5 to 13.7 ms queued, but its
// entry final (the handler done) 9.5 to 15.7 ms after the insert's start
// inline against 15.9 to 26.3 ms queued, the paired runs 1.85, 2.06 and
// 2.35 times faster inline; the hand-written least (the order's insert,
// then the entry's, neither crash-safe nor unique) is 2 requests and 1.8
// to 3.5 ms. What the queue buys and the inline processor gives up:
// writes that return before the handler ran, handlers that run on other
// machines, a poison queue and Replay (an intent that keeps failing is
// set aside in its partition instead, and Revive is its Replay), retry
// delays, delays, payloads over 64 KiB
// through Enqueue's claim check, and a retry that does not wait for the
// next Relay.
//
// # Azure Functions, WebJobs and other languages
//
// Messages are base64-encoded JSON by default, what Functions' queue
// triggers expect (PlainText matches "messageEncoding": "none"); poison
// queues are named, counted and filled as theirs are (the original text,
// byte for byte: TestPoisonIsTheOriginalByteForByte), so a step's worker
// may be a Function in another language, and their tooling shows the
// poison queue. Queues are chosen by keys.Bucket(Message.Key, number of
// queues), a hash other languages can reproduce; "Wire format" below says
// what every byte is.
//
// # Wire format
//
// DecodeMessage reads a message's envelope for a tool that shows a queue
// without handling it, with the checks a worker applies.
//
// Each example in this section is checked by TestWireFormatExamples to be
// exactly what the code writes, but for values that differ in each run:
// those the service assigns (message ids, insertion times), attempt ids
// (random), the queue's name and the time an intent was set aside.
//
// A message's text is its envelope, a JSON object, base64-encoded (the
// standard alphabet, padded: Config.Encoding Base64, the default) or as
// is (PlainText). Its members, in this order: "kind", the kind name;
// "id", the message id; "created", when the message was made, in UTC with
// exactly seven fractional digits (.NET's round-trip format, so a
// message's size does not depend on the clock); then either "payload", the
// payload's JSON as given, or, for a payload stored as a blob (claim
// check), "claim": the name of the blob in the processor's container that
// holds the payload's JSON bytes, kind + "/" + id. Readers accept any RFC
// 3339 time and ignore members they do not know.
//
//	{"kind":"ArchiveEmployee.v1","id":"7d0e5c1a-2f4b-4c7e-9a31-5b8f0e6d2c44","created":"2024-05-01T10:00:00.1234567Z","payload":{"department":"Sales","id":"000123"}}
//	eyJraW5kIjoiQXJjaGl2ZUVtcGxveWVlLnYxIiwiaWQiOiI3ZDBlNWMxYS0yZjRiLTRjN2UtOWEzMS01YjhmMGU2ZDJjNDQiLCJjcmVhdGVkIjoiMjAyNC0wNS0wMVQxMDowMDowMC4xMjM0NTY3WiIsInBheWxvYWQiOnsiZGVwYXJ0bWVudCI6IlNhbGVzIiwiaWQiOiIwMDAxMjMifX0=
//	{"kind":"StorePhoto.v1","id":"p-000123","created":"2024-05-01T10:00:00.1234567Z","claim":"StorePhoto.v1/p-000123"}
//
// A poison message is the original text, byte for byte (PoisonOriginal).
// Its record is the blob PoisonRecordPrefix + "<queue>-poison/" + the
// poison message's id in the processor's container, holding the JSON of
// [PoisonRecord]: "reason" (one of the Reason constants), "error" (the
// handler's last error, absent when it did not run), "kind" and "id" (the
// envelope's, when it decoded), "dequeueCount", "queue" and "messageId"
// (where it was poisoned from), "inserted" and "poisoned" (RFC 3339 times
// in UTC), "encoding" ("base64" or "plain", when it is an envelope) and
// "poisonMessageId":
//
//	{"reason":"unknown kind","error":"eventual: no handler for kind \"Unknown.v9\"","kind":"Unknown.v9","id":"u1","dequeueCount":1,"queue":"orders","messageId":"4e8f3c2a-0b1d-4f6e-8a7c-9d2b5e1f3a60","inserted":"2024-05-01T09:59:58Z","poisoned":"2024-05-01T10:00:00.1234567Z","encoding":"plain","poisonMessageId":"b3a1c9e2-5d4f-4e7a-9c8b-1f2e3d4c5b6a"}
//
// With PoisonWrapped the poison message is instead {"poison": record,
// "message": the envelope's JSON} (or "text": the original text, for text
// that is not compact JSON), encoded as Config.Encoding says.
//
// Once's marker is an entity of the partition Once was given, whose RowKey
// is MarkerPrefix + keys.Compound(message id, step) — the two joined by a
// space, a space or '!' inside either preceded by '!' — with the
// properties Expires (Edm.DateTime: when SweepMarkers may delete it,
// Config.MarkerTTL after it was written) and Attempt (the id of the Once
// call that wrote it). As JSON, the marker of step "raise" of the message
// above:
//
//	{"PartitionKey":"Sales","RowKey":"tablekit.once_7d0e5c1a-2f4b-4c7e-9a31-5b8f0e6d2c44 raise","Expires@odata.type":"Edm.DateTime","Expires":"2024-05-09T10:00:00.1234567Z","Attempt":"0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"}
//
// An outbox intent is an entity of the changed partition whose RowKey is
// OutboxPrefix + the message id, with the properties Kind, ID, Created
// (Edm.DateTime), Key (absent when empty), Payload (Edm.Binary: the
// payload's JSON bytes) and Attempt (the Submit call that wrote it). An
// intent set aside keeps them under the RowKey UnsendablePrefix + the
// message id and adds Reason (why it can never be sent) and SetAside
// (Edm.DateTime, by the processor's clock):
//
//	{"PartitionKey":"Sales","RowKey":"tablekit.outbox_7d0e5c1a-2f4b-4c7e-9a31-5b8f0e6d2c44","Kind":"RaiseRecorded.v1","ID":"7d0e5c1a-2f4b-4c7e-9a31-5b8f0e6d2c44","Created@odata.type":"Edm.DateTime","Created":"2024-05-01T10:00:00.1234567Z","Payload@odata.type":"Edm.Binary","Payload":"eyJkZXBhcnRtZW50IjoiU2FsZXMifQ==","Attempt":"0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"}
//	{"PartitionKey":"Sales","RowKey":"tablekit.unsendable_bad-1","Kind":"Bad Kind","ID":"bad-1","Created@odata.type":"Edm.DateTime","Created":"2024-05-01T10:00:00.0000000Z","Payload@odata.type":"Edm.Binary","Payload":"e30=","Attempt":"by-hand","Reason":"eventual: message \"bad-1\" of kind \"Bad Kind\": the kind is empty, longer than 128 bytes, or has characters other than letters, digits, '.', '_', '-'","SetAside@odata.type":"Edm.DateTime","SetAside":"2024-05-01T10:00:00.1234567Z"}
//
// An inline processor (NewInline) counts the runs of an intent's handler
// in the intent's property Runs (Edm.Int32): how many runs were started,
// Submit's own included. An intent without it — as Submit writes it, or
// as a version that did not count wrote it — has had 1. Before each run,
// Relay replaces the intent with Runs one higher, on condition of the
// ETag it read, and runs the handler only if that succeeded; Revive
// writes Runs 0. When run Config.MaxDeliveries fails, the intent is set
// aside as above, keeping Runs, with a Reason that starts with
// ReasonFailed ("failed on every delivery") and names the handler's last
// error (at most 1 KiB of Reason in all, as for every set-aside intent),
// or with ReasonOverdelivered when its last run was cut and its error is
// not known. Queued processors ignore Runs. An intent set aside after two
// runs:
//
//	{"PartitionKey":"Sales","RowKey":"tablekit.unsendable_7d0e5c1a-2f4b-4c7e-9a31-5b8f0e6d2c44","Kind":"RaiseRecorded.v1","ID":"7d0e5c1a-2f4b-4c7e-9a31-5b8f0e6d2c44","Created@odata.type":"Edm.DateTime","Created":"2024-05-01T10:00:00.1234567Z","Payload@odata.type":"Edm.Binary","Payload":"eyJkZXBhcnRtZW50IjoiU2FsZXMifQ==","Attempt":"0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9","Runs":2,"Reason":"failed on every delivery: 2 runs inline (Config.MaxDeliveries 2); the last failed: the ledger is closed","SetAside@odata.type":"Edm.DateTime","SetAside":"2024-05-01T10:00:00.1234567Z"}
//
// # Encrypted tables
//
// The steps and the Outbox take encrypted tables (package crypt's
// Table.Entity) unchanged: Once's markers and the outbox's intents are
// entities of the table, written in its transactions and read through its
// protection. Move from an encrypted table into one without is refused, as
// it would write the entity in clear (TestEncryptedTableRefusals,
// TestNoPlaintextLeaves in integration/canary).
//
// # Azurite and Cosmos DB
//
// Azurite answers a delete or update with a stale pop receipt with 400
// PopReceiptMismatch, the service with 404 MessageNotFound; both mean "no
// longer ours" and count as done. Azurite checks message size as this
// package does, by the UTF-8 bytes of the text. The Cosmos DB Table API has
// no queues: run the queues on a storage account and the tables on Cosmos
// DB; entity group transactions (Once, Outbox) work on both. Under the
// Cosmos DB profile of package integration/cosmos (TABLEKIT_PROFILE=cosmos:
// opaque ETags without a time, query pages in no key order, RowKeys of at
// most 255 bytes, reserved property names), on the tables only, the whole
// suite passes, TestLoadUnderFaults included (lost replies and failures
// before sending, every employee moved once).
//
// [eventually consistent transactions pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#eventually-consistent-transactions-pattern
package eventual
