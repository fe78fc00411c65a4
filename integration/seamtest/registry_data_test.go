package seamtest_test

// registry is every exported operation taking a context, by package; see
// registry_test.go. Reads need no seam tests. A seam is named by the test
// that injects it ("TestX" in the operation's package, "dir:TestX" in
// another directory), by why it does not apply ("n/a: …"), or, while no
// test injects it yet, as "missing: …" (listed by TestSeamMatrix).
var registry = []op{
	// entity
	read("entity.RetryPolicy.Retry"), // runs the caller's function; no request of its own
	write("entity.Table.BulkWrite", "TestBulkWriteCrashAtEveryRequest", "TestSeamsLostReplyWithAnotherWriter", "TestSeamsOneBadItemAmongMany"),
	write("entity.Table.CreateTable", "n/a: one request and no state of its own: before it nothing, after it the table, which CreateTableIfNotExists takes as done", "integration/seamtest:TestTableLifecycleIsTruthfulAfterALostReply", "n/a: one table"),
	write("entity.Table.CreateTableIfNotExists", "n/a: one request, idempotent", "integration/seamtest:TestTableLifecycleIsTruthfulAfterALostReply", "n/a: one table"),
	write("entity.Table.DeleteTable", "n/a: one request and no state of its own", "integration/seamtest:TestTableLifecycleIsTruthfulAfterALostReply", "n/a: one table"),
	write("entity.Table.Delete", "n/a: one request and no state of its own: a crash after it is the lost-reply seam without a resend", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("entity.Table.DeleteEntity", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("entity.Table.DeleteIfExists", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("entity.Table.Insert", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity, refused before sending (TestInvalidInputSendsNothing)"),
	write("entity.Table.Modify", "n/a: a read, then one conditional write: a crash between changes nothing", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("entity.Table.Submit", "n/a: one atomic $batch request", "TestSeamsLostReplyWithAnotherWriter", "TestSeamsOneBadItemAmongMany"),
	write("entity.Table.Update", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("entity.Table.UpdateAny", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("entity.Table.Upsert", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	read("entity.Table.Get"),
	read("entity.Table.Query"),
	read("entity.Table.QueryPage"),
	read("entity.Table.QueryPartitions"),

	// Provision: idempotent creates of tables, queues and containers; a lost
	// reply whose resend meets what the first try made counts as done
	write("entity.Table.Provision", "n/a: idempotent creates, each one request with no state of its own", "TestProvisionLostReply", "n/a: no items"),
	write("crypt.Table.Provision", "n/a: idempotent creates, each one request with no state of its own", "n/a: entity.Table.Provision (entity:TestProvisionLostReply)", "n/a: no items"),
	write("resolver.Table.Provision", "n/a: idempotent creates, each one request with no state of its own", "account:TestProvisionEveryPattern", "n/a: no items"),
	write("eventual.Processor.Provision", "n/a: idempotent creates, each one request with no state of its own", "account:TestProvisionEveryPattern", "n/a: no items"),
	write("large.Table.Provision", "n/a: idempotent creates, each one request with no state of its own", "account:TestProvisionEveryPattern", "n/a: no items"),
	write("logtail.Log.Provision", "n/a: idempotent creates, each one request with no state of its own", "account:TestProvisionEveryPattern", "n/a: no items"),
	write("rotation.Rotation.Provision", "n/a: idempotent creates, each one request with no state of its own", "account:TestProvisionEveryPattern", "n/a: no items"),
	write("bloblog.Logger.Provision", "n/a: idempotent creates, each one request with no state of its own", "account:TestProvisionEveryPattern", "n/a: no items"),
	write("denormalize.Copies.Provision", "n/a: idempotent creates, each one request with no state of its own", "account:TestProvisionEveryPattern", "n/a: no items"),
	write("dataseries.Series.Provision", "n/a: idempotent creates, each one request with no state of its own", "account:TestProvisionEveryPattern", "n/a: no items"),
	write("wide.Table.Provision", "n/a: idempotent creates, each one request with no state of its own", "account:TestProvisionEveryPattern", "n/a: no items"),
	write("compound.Relation.Provision", "n/a: idempotent creates, each one request with no state of its own", "account:TestProvisionEveryPattern", "n/a: no items"),
	write("bucket.Spread.Provision", "n/a: idempotent creates, each one request with no state of its own", "account:TestProvisionEveryPattern", "n/a: no items"),
	write("secondaryindex.Set.Provision", "n/a: idempotent creates, each one request with no state of its own", "TestProvision", "n/a: no items"),
	write("indexentity.Set.Provision", "n/a: idempotent creates, each one request with no state of its own", "TestProvision", "n/a: no items"),
	write("account.Provision", "n/a: idempotent creates, each one request with no state of its own", "TestProvisionEveryPattern", "n/a: no items"),
	read("entity.Table.Unmarshal"), // decodes bytes the caller has; no request
	read("entity.Table.Seal"),      // a protected table's stored form of an entity; no request
	read("entity.Table.Open"),

	// entity/crypt: each write encrypts before any request, then is entity's
	read("crypt.LocalKey.Unwrap"), // local key wrapping, no request
	read("crypt.LocalKey.Wrap"),
	read("crypt.Table.Marshal"),
	read("crypt.Table.Unmarshal"),
	read("crypt.Table.Get"),
	read("crypt.Table.Query"),
	read("crypt.Table.QueryPage"),
	read("crypt.Table.QueryPartitions"),
	write("crypt.Table.BulkWrite", "n/a: encrypts every entity before the first request, then is entity.Table.BulkWrite (entity:TestBulkWriteCrashAtEveryRequest)", "TestSeamsLostReplyWithAnotherWriter", "TestBulkWriteOneBadEntity"),
	write("crypt.Table.CreateTableIfNotExists", "n/a: entity.Table.CreateTableIfNotExists", "n/a: entity.Table.CreateTableIfNotExists (integration/seamtest:TestTableLifecycleIsTruthfulAfterALostReply)", "n/a: one table"),
	write("crypt.Table.Delete", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("crypt.Table.DeleteIfExists", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("crypt.Table.Insert", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("crypt.Table.Modify", "n/a: a read, then one conditional write", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("crypt.Table.Rotate", "TestRotateCrashAtEveryRequest", "TestSeamsLostReplyWithAnotherWriter", "TestRotatePastBadEntities"),
	write("crypt.Table.Submit", "n/a: one atomic $batch request", "TestSeamsLostReplyWithAnotherWriter", "TestSubmitOneBadEntityAmongMany"),
	write("crypt.Table.Update", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("crypt.Table.UpdateAny", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),
	write("crypt.Table.Upsert", "n/a: one request and no state of its own", "TestSeamsLostReplyWithAnotherWriter", "n/a: one entity"),

	// resolver: each write stamps the type, then is entity's
	read("resolver.Get"),
	read("resolver.Query"),
	read("resolver.Table.Get"),
	read("resolver.Table.Query"),
	read("resolver.Table.QueryPage"),
	write("resolver.Table.Migrate", "TestMigrateSurvivesACrashAtEveryRequest", "TestMigrateBesideAnotherWriter", "TestMigrateOneBadRowAmongMany"),
	write("resolver.Table.Delete", "n/a: one request and no state of its own", "TestWritesBesideAnotherWriter", "n/a: one entity"),
	write("resolver.Table.DeleteEntity", "n/a: one request and no state of its own", "TestWritesBesideAnotherWriter", "n/a: one entity"),
	write("resolver.Table.DeleteIfExists", "n/a: one request and no state of its own", "TestWritesBesideAnotherWriter", "n/a: one entity"),
	write("resolver.Table.Insert", "n/a: one request and no state of its own", "TestWritesBesideAnotherWriter", "n/a: one entity"),
	write("resolver.Table.Modify", "n/a: a read, then one conditional write", "TestWritesBesideAnotherWriter", "n/a: one entity"),
	write("resolver.Table.Submit", "n/a: one atomic $batch request", "TestWritesBesideAnotherWriter", "TestSubmitOneBadEntityAmongMany"),
	write("resolver.Table.Update", "n/a: one request and no state of its own", "TestWritesBesideAnotherWriter", "n/a: one entity"),
	write("resolver.Table.UpdateAny", "n/a: one request and no state of its own", "TestWritesBesideAnotherWriter", "n/a: one entity"),
	write("resolver.Table.Upsert", "n/a: one request and no state of its own", "TestWritesBesideAnotherWriter", "n/a: one entity"),

	// backup
	write("backup.Export", "TestExportSurvivesACrashAtEveryRequest", "n/a: reads the table only; what it writes is the caller's io.Writer", "TestExportKeepsStoredEntitiesAWriteWouldRefuse"),
	write("backup.ExportBlob", "TestExportBlobResumesAfterACrashAtEveryRequest", "TestExportBlobBesideAnotherWriter", "TestExportBlobRefusesABlobChangedBySomeoneElse"),
	write("backup.ExportCSV", "n/a: reads the table only and keeps no checkpoint: a crashed ExportCSV is run again whole", "n/a: reads the table only; what it writes is the caller's io.Writer", "TestExportCSVNamesAPropertyAddedBetweenItsReads"),
	write("backup.Import", "TestImportSurvivesACrashAtEveryRequest", "TestImportBesideAnotherWriter", "TestImportOneBadEntityAmongMany"),
	write("backup.ImportCSV", "TestImportSurvivesACrashAtEveryRequest", "TestImportBesideAnotherWriter", "TestCSVOneBadRecordAmongMany"),

	// patterns/wide
	write("wide.Table.Insert", "TestCrashAtEveryRequest", "TestLostReplySeams", "n/a: one logical entity, refused whole before sending when too large (TestInvalidInputRefusedBeforeSending)"),
	write("wide.Table.Replace", "TestCrashAtEveryRequest", "TestLostReplySeams", "n/a: one logical entity (TestInvalidInputRefusedBeforeSending)"),
	write("wide.Table.Upsert", "TestCrashAtEveryRequest", "TestLostReplySeams", "n/a: one logical entity (TestInvalidInputRefusedBeforeSending)"),
	write("wide.Table.Modify", "TestCrashAtEveryRequest", "TestLostReplySeams", "n/a: one logical entity (TestInvalidInputRefusedBeforeSending)"),
	write("wide.Table.Delete", "TestCrashAtEveryRequest", "TestLostReplySeams", "n/a: one logical entity"),
	read("wide.Table.Get"),

	// patterns/dataseries
	write("dataseries.Series.Add", "TestCrashAtEveryRequest", "TestLostReplySeams", "n/a: one slot of one entity"),
	write("dataseries.Series.AddMany", "TestCrashAtEveryRequest", "TestLostReplySeams", "TestAddManyOneBadSlotWritesNothing"),
	read("dataseries.Series.Get"),

	// patterns/logtail
	write("logtail.Log.Append", "TestAppendCrash", "TestAppendLostReplySeams", "TestAppendReportsEntriesNotWritten"),
	write("logtail.Log.Trim", "TestTrimCrashLeavesNoHole", "TestTrimLostReplySeams", "n/a: deletes by key, no item of the caller's"),
	read("logtail.Log.Between"),
	read("logtail.Log.Page"),
	read("logtail.Log.Since"),
	read("logtail.Log.Tail"),

	// patterns/compound: reads only
	read("compound.Relation.Children"),
	read("compound.Relation.ChildrenBetween"),
	read("compound.Relation.ChildrenIn"),
	read("compound.Relation.Get"),

	// patterns/lookup: a cache over a table, reads only
	read("lookup.Cache.Get"),
	read("lookup.Cache.Refresh"),
	read("lookup.Cache.Reload"),
	read("lookup.Cache.Snapshot"),

	// patterns/bucket
	write("bucket.Spread.Write", "TestWriteSurvivesACrashAtEveryRequest", "TestWriteBesideAnotherWriter", "TestWriteOneBadEntryAmongMany"),
	read("bucket.Spread.Get"),
	read("bucket.Spread.Query"),
	read("bucket.Spread.Tail"),

	// patterns/bloblog
	read("bloblog.New"), // starts a Logger and sends nothing: its flushes are AppendContext's and Flush's
	write("bloblog.Logger.AppendContext", "TestLoggerSurvivesACrashAtEveryRequest", "TestLoggerBesideAnotherWriter", "TestOneBadRecordAmongMany"),
	write("bloblog.Logger.Flush", "TestLoggerSurvivesACrashAtEveryRequest", "TestLoggerBesideAnotherWriter", "TestOneBadRecordAmongMany"),
	read("bloblog.Reader.Blobs"),
	read("bloblog.Reader.Read"),

	// patterns/denormalize (its matrix: matrix_test.go)
	read("denormalize.Copies.Check"),
	write("denormalize.Copies.InsertSource", "TestCrashMatrixSamePartition", "TestLostReplyMatrix", "TestInsertSourceCountsFences"),
	write("denormalize.Copies.ModifySource", "TestCrashMatrixSamePartition", "TestLostReplyMatrix", "TestLargeFanOut"),
	write("denormalize.Copies.DeleteSource", "TestCrashMatrixSamePartition", "TestLostReplyMatrix", "TestBadTargetSamePartition"),
	write("denormalize.Copies.Push", "TestCrashMatrixSamePartition", "TestLostReplyMatrix", "TestBadTargetFanOut"),
	write("denormalize.Copies.InsertTarget", "TestCrashMatrixSamePartition", "TestLostReplyMatrix", "n/a: one target entity"),
	write("denormalize.Copies.ModifyTarget", "TestCrashMatrixSamePartition", "TestLostReplyMatrix", "n/a: one target entity"),
	write("denormalize.Copies.Refresh", "TestCrashMatrixSamePartition", "TestLostReplyMatrix", "TestBadTargetSamePartition"),
	write("denormalize.Copies.Relay", "TestCrashAtEveryStep", "TestLostRepliesFanOut", "TestBadTargetFanOut"),
	write("denormalize.Copies.Repair", "TestRepairAndRebuildSurviveACrashAtEveryRequest", "TestRepairAndRebuildBesideAnotherWriter", "n/a: one finding"),
	write("denormalize.Copies.Rebuild", "TestRepairAndRebuildSurviveACrashAtEveryRequest", "TestRepairAndRebuildBesideAnotherWriter", "TestBadTargetCheck"),

	// patterns/eventual
	read("eventual.DeliveryFrom"), // reads the context
	read("eventual.Outbox.Unsendable"),
	read("eventual.Processor.PoisonRecord"),
	write("eventual.Outbox.Submit", "TestOutboxCrash", "TestSubmitLostReplyWithAWriterInTheWindow", "TestSubmitRefusesAnUnsendableMessage"),
	write("eventual.Outbox.Relay", "TestRelayCrashAtEveryStep", "TestRelayLostDeleteReplyWithANewIntentInTheWindow", "TestRelayGoesOnPastUnsendableIntents"),
	write("eventual.Outbox.Revive", "TestReviveSurvivesACrashAtEveryRequest", "TestReviveBesideAnotherWriter", "n/a: one intent"),
	write("eventual.Processor.CreateQueues", "n/a: creating a queue that exists is done", "n/a: creating a queue that exists is done", "n/a: no item"),
	write("eventual.Processor.Enqueue", "TestEnqueueCrashAtEveryStep", "TestEnqueueLostReplyWithAWorkerInTheWindow", "TestMessagesAreCheckedBeforeSending"),
	write("eventual.Processor.Run", "TestCrashAtEveryStep", "TestLoadUnderFaults", "TestPoisonAtOnce"),
	write("eventual.Processor.Drain", "TestCrashAtEveryStep", "TestLoadUnderFaults", "TestPoisonAtOnce"),
	write("eventual.Processor.Replay", "TestReplayCrashAtEveryStep", "TestReplayBesideAnotherWriter", "TestReplayPastOneMessageThatFailsToMoveBack"),
	write("eventual.Insert", "n/a: one request, a step run again by its handler", "TestTableStepsLostReplyBesideAnotherWriter", "n/a: one entity"),
	write("eventual.Upsert", "n/a: one request, a step run again by its handler", "TestTableStepsLostReplyBesideAnotherWriter", "n/a: one entity"),
	write("eventual.Delete", "n/a: one request, a step run again by its handler", "TestTableStepsLostReplyBesideAnotherWriter", "n/a: one entity"),
	write("eventual.Move", "TestCrashAtEveryStep", "TestMoveLostDeleteReplyReinsertInTheWindow", "n/a: one entity"),
	write("eventual.Once", "TestCrashAtEveryStep", "TestOnceLostReplyWithACopyInTheWindow", "n/a: one step's transaction"),
	write("eventual.SweepMarkers", "TestSweepMarkersSurvivesACrashAtEveryRequest", "TestSweepMarkersBesideAnotherWriter", "n/a: deletes markers by key"),
	write("eventual.PutBlob", "n/a: one request, a step run again by its handler", "TestBlobStepsLostReplyBesideAnotherWriter", "n/a: one blob"),
	write("eventual.PutBlobIfAbsent", "n/a: one request, a step run again by its handler", "TestPutBlobIfAbsentReplacedInTheRetryWindow", "n/a: one blob"),
	write("eventual.DeleteBlob", "n/a: one request, a step run again by its handler", "TestBlobStepsLostReplyBesideAnotherWriter", "n/a: one blob"),

	// patterns/large
	read("large.Stream.Open"),
	read("large.Table.Get"),
	write("large.Table.Insert", "TestCrashInsert", "TestLostReplyBesideAnotherWriter", "TestOneFailingValueAmongSeveral"),
	write("large.Table.Replace", "TestCrashReplace", "TestLostReplyBesideAnotherWriter", "TestOneFailingValueAmongSeveral"),
	write("large.Table.Upsert", "TestCrashUpsert", "TestLostReplyBesideAnotherWriter", "TestOneFailingValueAmongSeveral"),
	write("large.Table.Delete", "TestCrashDelete", "TestLostReplyBesideAnotherWriter", "n/a: one entity"),
	write("large.Table.Sweep", "TestCrashSweep", "TestSlowEntityWriteBesideSweep", "TestSweepGoesPastABadBlob"),

	// patterns/secondaryindex
	read("secondaryindex.Set.Check"),
	read("secondaryindex.Set.Lookup"),
	read("secondaryindex.Set.LookupAll"),
	read("secondaryindex.Set.LookupPrefix"),
	read("secondaryindex.Set.LookupValue"),
	read("secondaryindex.Set.LookupValueAll"),
	read("secondaryindex.Set.LookupValuePrefix"),
	write("secondaryindex.Set.MoveTo", "TestMoveCrashAtEveryStep", "TestMoveToBesideAnotherWriter", "n/a: one primary"),
	write("secondaryindex.Set.Insert", "TestCrashAtEveryStep", "TestLostReplyBesideWriter", "n/a: one entity"),
	write("secondaryindex.Set.Update", "TestCrashAtEveryStep", "TestLostReplyBesideWriter", "n/a: one entity"),
	write("secondaryindex.Set.Modify", "TestCrashAtEveryStep", "TestLostReplyBesideWriter", "n/a: one entity"),
	write("secondaryindex.Set.Delete", "TestCrashAtEveryStep", "TestLostReplyBesideWriter", "n/a: one entity"),
	write("secondaryindex.Set.Relay", "patterns/eventual:TestRelayCrashAtEveryStep", "patterns/eventual:TestRelayLostDeleteReplyWithANewIntentInTheWindow", "patterns/eventual:TestRelayGoesOnPastUnsendableIntents"), // the Set's outbox is an eventual.Outbox: its Relay is Outbox.Relay
	read("secondaryindex.Set.Unsendable"), // the Set's outbox's Outbox.Unsendable
	write("secondaryindex.Set.Revive", "patterns/eventual:TestReviveSurvivesACrashAtEveryRequest", "patterns/eventual:TestReviveBesideAnotherWriter", "n/a: one intent"), // the Set's outbox's Outbox.Revive
	write("secondaryindex.Set.Rebuild", "TestRebuildResumes", "TestRebuildWhileWriting", "TestOneBadRow"),
	write("secondaryindex.Set.Repair", "TestRepairCrashAtEveryRequest", "TestRepairBesideWriter", "n/a: one finding"),

	// patterns/indexentity
	read("indexentity.Set.Check"),
	read("indexentity.Set.LookupAll"),
	read("indexentity.Set.Members"),
	read("indexentity.Set.LookupValueAll"),
	read("indexentity.Set.ValueMembers"),
	write("indexentity.Set.MoveTo", "TestMoveCrashAtEveryStep", "TestMoveToBesideAnotherWriter", "n/a: one primary"),
	write("indexentity.Set.Insert", "TestCrashThenFreshProcess", "TestLostReplyBesideWriter", "n/a: one entity"),
	write("indexentity.Set.Update", "TestCrashThenFreshProcess", "TestLostReplyBesideWriter", "n/a: one entity"),
	write("indexentity.Set.Modify", "TestCrashThenFreshProcess", "TestLostReplyBesideWriter", "n/a: one entity"),
	write("indexentity.Set.Delete", "TestCrashThenFreshProcess", "TestLostReplyBesideWriter", "n/a: one entity"),
	write("indexentity.Set.Relay", "patterns/eventual:TestRelayCrashAtEveryStep", "patterns/eventual:TestRelayLostDeleteReplyWithANewIntentInTheWindow", "patterns/eventual:TestRelayGoesOnPastUnsendableIntents"), // the Set's outbox is an eventual.Outbox: its Relay is Outbox.Relay
	read("indexentity.Set.Unsendable"), // the Set's outbox's Outbox.Unsendable
	write("indexentity.Set.Revive", "patterns/eventual:TestReviveSurvivesACrashAtEveryRequest", "patterns/eventual:TestReviveBesideAnotherWriter", "n/a: one intent"), // the Set's outbox's Outbox.Revive
	write("indexentity.Set.Rebuild", "TestRebuildResumes", "TestRebuildWhileWriting", "TestOneBadRow"),
	write("indexentity.Set.Repair", "TestRepairCrashAtEveryRequest", "TestRepairBesideWriter", "TestRepairTouchesOnlyItsList"),

	// patterns/rotation (its matrix: matrix_test.go)
	read("rotation.Rotation.Periods"),
	read("rotation.Rotation.Query"),
	write("rotation.Rotation.Insert", "TestCrashMatrix", "TestLostReplyMatrix", "n/a: one entity"),
	write("rotation.Rotation.Upsert", "TestCrashMatrix", "TestLostReplyMatrix", "n/a: one entity"),
	write("rotation.Rotation.BulkWrite", "TestCrashMatrix", "TestLostReplyMatrix", "TestBulkWriteBadItems"),
	write("rotation.Rotation.Prepare", "TestCrashMatrix", "TestLostReplyMatrix", "n/a: no item"),
	write("rotation.Rotation.Table", "TestCrashMatrix", "TestLostReplyMatrix", "n/a: no item"),
	write("rotation.Rotation.Expire", "TestExpireCrashRecoveredByFreshRotation", "TestLostReplyMatrix", "n/a: deletes whole periods, no item of the caller's"),
}
