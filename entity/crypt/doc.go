// Package crypt encrypts and authenticates chosen properties of typed
// entities on the client, so the Table service (and whoever reads the
// storage account) holds only ciphertext: design guide §4,
// [Encrypting table data].
//
// The guide's .NET client encrypted chosen string properties with AES-CBC
// and nothing to detect a change. This package encrypts properties of any
// EDM type with authenticated encryption, binds every ciphertext to its
// table, entity and property, signs the entity's whole protected set, and
// reads the old .NET format to migrate away from it.
//
// # Use
//
// Mark properties with the tag options encrypt (stored as ciphertext) and
// sign (stored in clear, authenticated), or choose them per entity with
// Config.Encrypt and Config.Sign (a function of PartitionKey, RowKey and
// property name, as the guide describes), and open the table through New:
//
//	type Employee struct {
//		Department string `table:"PartitionKey,pk"`
//		ID         string `table:"RowKey,rk"`
//		ETag       string `table:",etag"`
//		Email      string `table:",encrypt"`
//		Salary     int64  `table:",encrypt"`
//		Grade      int32  `table:",sign"`
//		Office     string
//	}
//
//	kek, _ := crypt.NewLocalKey("employees-2026-01", key32) // or keyvault.New(…)
//	tbl, _ := entity.NewTableFromService[Employee](svc, "Employees")
//	emps, _ := crypt.New(tbl, crypt.Config{Key: kek})
//	err := emps.Insert(ctx, &e)                       // encrypted on the way out
//	e, err = emps.Get(ctx, "Sales", "000123")         // decrypted and checked
//	err = emps.Update(ctx, &e, entity.Replace)        // Merge is refused: ErrMerge
//	for e, err := range emps.Query(ctx, q) { … }      // filters on encrypted properties refused
//
// [Table] has the methods of [entity.Table] that make sense for encrypted
// entities, with their meaning (ETags, lost replies, transactions through
// [Batch] and Submit, BulkWrite, paging, fan-out); [entity.Marshal] and
// an entity.Table of a type with encrypt or sign fields refuse to write it,
// so such a type is never written in clear by mistake. A plain view of the
// same table as another type (entity.ViewAs, a DynamicEntity table) knows
// no tags and writes what it is given: write encrypted entities through
// this package's Table only. [Table.Entity] is the same table as
// an *entity.Table[T], for everything that takes one (see Patterns).
//
// # Patterns
//
// An encrypted table is a table: [Table.Entity] returns an
// *entity.Table[T] whose every call — Get, Insert, Upsert, Update,
// UpdateAny, Modify, Query, QueryPage, QueryPartitions, BulkWrite, NewBatch
// and Submit, and the conversions Unmarshal, ToDynamic, FromDynamic, Seal
// and Open — binds this Table's policy to its own context, so every
// pattern, package backup and package resolver take it unchanged, with no
// second copy of the rows to keep in step. [Table] itself runs through it,
// so the Guarantee above is its guarantee. Views a component makes of the
// table (entity.ViewAs: its property bags, its rows as sent) keep the
// protection, and protect the properties T's tags encrypt by name whatever
// their own type; [Config].Types adds the tags of the other entity types a
// table holds. What the format cannot take is refused before any request
// with an error matching entity.ErrInvalid: a merge (a transaction's merge
// of nothing but the write token, a fence, is taken), a filter on an
// encrypted property without a beacon, an entity added to a transaction by
// a view without the protection (entity.Batch.Through adds entities
// through another view's). entity.Validate checks an encrypted type as it
// is stored, and an error about an encrypted value never holds the value
// (a poison message's record would otherwise keep it).
//
// What each component does over an encrypted table (the canary in
// integration/canary writes a unique plaintext through each, with lost
// replies and crashes, and finds it nowhere in the account, in any error
// or in azcore's log: TestNoPlaintextLeaves):
//
//   - logtail, compound, bucket, lookup, eventual's steps (Insert, Upsert,
//     Delete, Move, Once, SweepMarkers) and Outbox: unchanged; Once's
//     markers and the outbox's intents are entities of the table, written
//     and read through its protection; lookup holds decrypted values in
//     memory for its TTL.
//   - dataseries writes an encrypted series entity whole (a replace under
//     its ETag) rather than merging the changed counters.
//   - wide seals a logical entity as a whole (entity.Table.Seal: one
//     metadata property, ciphertexts bound to the logical keys) before
//     spreading it over rows, and opens the assembled rows.
//   - large encrypts the entity's fields; blob values are stored in clear,
//     so a blob field Config.Encrypt may choose is refused at New (list the
//     others in Config.Encryptable); a blob field cannot be tagged encrypt.
//   - denormalize decrypts a source and encrypts its copies under the
//     targets' table; a relation copying a property the sources' table may
//     encrypt into one the targets' does not always encrypt is refused at
//     New, as are sources and targets in one table whose crypt Tables
//     protect some property differently (name each other's type in
//     Config.Types).
//   - backup exports an encrypted table in clear only with
//     ExportOptions.Decrypted (ExportCSV never): export the plain
//     entity.Table of the same client for the ciphertexts, which import
//     back through a plain table into a table that a crypt Table of the
//     original name (Config.Table) reads. Import through an encrypted
//     table encrypts plaintext lines.
//   - resolver takes one through NewTableOf (a Table of
//     entity.DynamicEntity whose Config.Encrypt chooses the properties); a
//     discriminator property Config.Encrypt may choose is refused.
//   - eventual.Move from an encrypted table into a plain one is refused.
//   - rotation makes its period tables itself: its Config.Open wraps each
//     in a crypt Table (TestEncryptedPeriods).
//   - secondaryindex keys the entries of an index declared Encrypted by
//     the property's beacon, copies no encrypted property into entries,
//     and verifies every lookup against the decrypted primary; an
//     Encrypted property without a beacon or that Config.Encrypt may
//     choose, Properties naming an encrypted one, and prefix lookups of
//     a beacon are refused. indexentity keeps the lists of an Encrypted
//     index under the beacon, and checks every member it reads.
//
// Writing a pattern's entity costs what the entity's encryption costs and
// no storage transaction more: logtail's Append of an entity with one
// encrypted property takes 1 storage transaction, as in clear, for 1.07 to
// 1.09× the client CPU (1.05 to 1.08× sharing content keys over 1,024
// writes; BenchmarkEncryptedAppend in integration/canary, interleaved
// rounds on Azurite, four runs: about 25 µs over 260 to 370 µs per
// append, the rest being the HTTP request).
//
// An index of an encrypted property keys its entries by the property's
// beacon instead of its value: entity.Table.Beacon(property, value) on the
// Entity table (or a view of it) returns the beacon crypt stores for that
// value — ok false for a property in clear, indexed as it is; a
// *BeaconError matching ErrNoBeacon and entity.ErrInvalid for one without
// a beacon (Config.Beacons) or encrypted for some entities only — and a
// lookup computes the same of the value looked up, then reads each
// candidate through the Entity table, which decrypts it, to check it
// (TestBeacon). A beacon answers equality only: no prefix or range index
// of an encrypted value.
//
// # Guarantee
//
// For every entity written through a Table:
//
//   - each encrypted property is AES-256-GCM under a content key drawn at
//     random for this write (or, with Config.ContentKeyWrites n > 1, for
//     at most n writes of the Table and Config.ContentKeyAge), with a
//     fresh random nonce, its authenticated data naming the format
//     version, the table, the PartitionKey, the RowKey and the property: a
//     ciphertext copied to another property, entity or table does not
//     decrypt, between entities that share a content key too
//     (TestContentKeyWrites, TestSharedKeyConcurrentWriters: no content
//     key serves more writes than n, no nonce repeats;
//     TestSharedKeyNothingMovesBetweenEntities);
//   - the content key is wrapped by a key-encryption key (Config.Key:
//     [LocalKey]'s AES key wrap, RFC 3394/5649, or an Azure Key Vault key
//     through package keyvault) and stored, with the key's id, in the
//     reserved property _tkEnc, which also lists the encrypted, signed and
//     beaconed properties;
//   - a signature (GMAC under the content key) covers that list, every
//     ciphertext, every signed value and every beacon: adding, removing,
//     swapping or changing any protected property, within a row or between
//     rows, is detected (TestTamperEveryByte, TestSwaps,
//     TestTamperBetweenRowsOnAzurite);
//   - a ciphertext, _tkEnc or a beacon stored as any other type than
//     Edm.Binary (its annotation removed, so that the service keeps the same
//     base64 text as a String) is ErrTampered, as entity refuses a plain
//     value of the wrong stored type; a signed value's type is signed with
//     it (TestProtectedValueOfWrongStoredType, TestStoredTypeVariants);
//   - a read fails closed with a typed error: [ErrTampered], [ErrMetadata],
//     [ErrUnknownKey], [ErrUnwrap], [ErrNotEncrypted] (no metadata at all)
//     or [ErrPolicy] (the stored protection is not the one the type asks
//     for, so writing it back would silently change it). Each is a
//     *ReadError naming the entity and property, and matches
//     entity.ErrDecode. The signature is checked before any property is
//     decrypted; a read that fails, whatever the error (these, a plain value
//     of the wrong type, the service's), returns the zero value — from Get,
//     Query and QueryPartitions rows, QueryPage, Modify (which then never
//     calls its change) and Unmarshal — never a partly filled one whose keys
//     and ETag would invite a conditional overwrite
//     (TestFailedReadsReturnZero);
//
// The reserved properties count in the entity's limits (252 properties,
// 1 MiB, 64 KiB per Binary) and are checked with them, before any request.
// The stored format is specified below (Wire format), so that another
// language can read it.
//
// # Threat model
//
// Hidden from anyone who can read the table but cannot use the
// key-encryption key: the values of encrypted properties. Not hidden: the
// PartitionKey and RowKey (the service needs them), property names, which
// properties are encrypted, the approximate length of each encrypted value
// (a ciphertext is 30 bytes longer than the value's text), the values of
// signed and clear properties, Timestamps and the pattern of reads and
// writes. A beacon (Config.Beacons) also shows which entities hold equal
// values of its property, and lets whoever holds the beacon key test a
// guessed value.
//
// Keys: a content key is used for one write only, unless
// Config.ContentKeyWrites shares it among up to n writes: then whoever
// obtains that one unwrapped content key reads the encrypted properties of
// those n entities. Unwrapped content keys of entities recently written or
// read stay in process memory, ready for the next read (Config.KeyCache; a
// negative value keeps none).
//
// Detected: any change to a protected property or to the metadata by
// someone who cannot unwrap content keys. Not detected: replacing an entity
// by an older version of itself (a rollback), deleting a whole entity, and
// changes to clear properties. Someone who can wrap keys under the
// key-encryption key (with an RSA key in Key Vault, anyone holding its
// public half) can write entities that read as authentic: keep wrap
// permission as scarce as unwrap permission.
//
// # Steps
//
// A write is one storage call, as without encryption (plus one call to Key
// Vault with package keyvault, or one per Config.ContentKeyWrites writes):
// encode the entity with the entity codec, encrypt each protected value as
// it is written, wrap the content key, add the metadata, send. A read is
// one call (plus one to Key Vault unless the content key is cached, as it
// is after a read of another entity that shares it): decode the body,
// unwrap the content key, check the signature over the whole protected
// set, then decrypt each property into its field with the same codec. A
// write whose wrap fails sends nothing (TestSharedKeyWrapFailure); a write
// waiting for another to draw the next shared key gives up with its
// context (TestSharedKeyDrawHonoursContext).
//
// # Key rotation
//
// Rotate moves existing entities to a new key-encryption key by rewriting
// only their key envelope (one merge per entity, under its ETag; data,
// signature and beacons unchanged; entities that share a content key
// under Config.ContentKeyWrites cost one unwrap and one wrap per key, not
// per entity: TestRotateSharedContentKeys). During a rotation give readers and
// writers [Keyring](newKey, oldKey): every entity reads under either key.
// Rotate with [RotateOptions].Reencrypt re-encrypts entities in full, which
// also moves legacy and plaintext entities to this format. It rewrites as
// T only entities whose every property T has a field for: a row of
// another shape (another type of the table, an index entry, an outbox
// intent) is rewrapped, or left alone if it holds no envelope, and never
// loses a property (RotateResult.Kept; TestReencryptKeepsOtherShapes).
// An entity that
// cannot be moved (its metadata malformed, its key unknown, with Reencrypt
// one that fails to read) is left as it is and listed in
// RotateResult.Failed; the rotation goes on past it and ends with a
// *RotateError naming every such entity (TestRotatePastBadEntities).
//
// What the patterns keep, and what stays under the old key after Rotate
// (TestRotationAcrossPatterns in integration/canary checks each):
//
//   - Everything a pattern stores in a table is an entity of that table,
//     encrypted by its own write and moved by that table's Rotate: a wide
//     entity's rows (its one metadata property lives in one of them), an
//     outbox intent a crashed writer left (until Relay sends it), Once's
//     markers (Config.MarkerTTL, 8 days), series entities, large's
//     entities, a copy in the same table. Nothing of them stays.
//   - A denormalized copy in another table is that table's entity: it
//     stays under the old key until that table is rotated (a worker
//     without the old key fails to read it, so its fan-out is retried):
//     rotate every table a pattern writes, and keep the Keyring in
//     readers, writers and workers until all are.
//   - Index entries and index entities (secondaryindex, indexentity)
//     hold beacons and clear properties, never a ciphertext or an
//     envelope: no Rotate touches them, and lookups work across a
//     rotation with the new key alone (TestEncryptedIndexAcrossRotation
//     in secondaryindex). A beacon is an HMAC under Config.BeaconKey,
//     which Rotate never changes: keep it for the life of the table. A
//     table opened with another one computes other beacons, so its beacon
//     filters and beacon-keyed indexes find none of the entities written
//     before (never a wrong one).
//   - Queue messages (fan-out messages, large's disposals, the outbox's)
//     and claim-check blobs hold keys, blob names and the caller's
//     payloads, never a ciphertext or a wrapped key: a message in flight
//     is handled after a rotation by workers with the new key alone,
//     which write under it.
//   - large's blobs are not encrypted (see Patterns): no key.
//   - A backup of the ciphertexts keeps the old key's envelopes for as
//     long as it is kept: keep the old key in the Keyring of whatever
//     restores it, and Rotate the restored table, or export again after
//     the rotation.
//   - In memory: the content key cache (Config.KeyCache) and lookup's
//     snapshots hold decrypted data until they expire; shared content keys
//     (Config.ContentKeyWrites) keep encrypting for at most
//     Config.ContentKeyAge under the key that wrapped them.
//
// # Failure and recovery
//
// A write either stores the whole encrypted entity or nothing (one request;
// a lost reply is handled as entity.Table handles it). A rotation that
// stops (a crash, a cancelled context, a lost reply azcore's retries did
// not get past) leaves every entity under the old key or the new one, both
// readable with the Keyring; run it again, from the token it last passed to
// RotateOptions.Checkpoint or from the start (entities already under the
// new key are skipped), with a fresh Table if the process died: each entity
// ends under the new key, its content key rewrapped once, no plaintext
// written (TestRotateCrashAtEveryRequest). A merge whose reply was lost and
// that azcore resent fails on the ETag; the entity, read again, is found
// rotated. A transaction ([Batch]) is atomic: one entity that cannot be
// written refuses the whole Submit before any request, naming its keys
// (TestSubmitOneBadEntityAmongMany).
//
// Every write replaces the whole entity (Merge is refused), so a write
// whose reply was lost while another writer inserted, replaced, merged or
// deleted the entity inside azcore's retry window leaves it absent or
// authentic, never a mix of two writes' properties under one signature, and
// is never reported refused (TestSeamsLostReplyWithAnotherWriter; a clear
// property merged by another writer stays unsigned, as always). An entity
// that fits the service in clear but not once encrypted (a ciphertext over
// 64 KiB, the entity over 1 MiB with its metadata) is refused before any
// request; in a BulkWrite it fails alone and the others are written
// (TestBulkWriteOneBadEntity).
//
// # Filters
//
// A filter that compares an encrypted property could only match
// ciphertext, so Query, QueryPage and QueryPartitions refuse it
// ([ErrEncryptedFilter]) before any request. For properties listed in
// Config.Beacons, eq and ne run on the beacon instead: the HMAC-SHA256 of
// the value's canonical bytes under Config.BeaconKey, stored beside the
// ciphertext. Signed and clear properties filter as usual. A beacon is
// written with the entity: an entity written before its property was
// listed in Config.Beacons has none, and no beacon filter matches it until
// Rotate with Reencrypt rewrites it. Every entity a beacon filter returns
// must hold exactly the beacons its metadata lists, so one copied onto it
// is ErrTampered (TestBeaconQueryOnAzurite).
//
// Which comparisons count as encrypted: a field tagged encrypt always. A
// property Config.Encrypt chooses depends on each entity's keys, and the
// service would run a comparison in clear on the entities where the
// function said clear and silently miss those where it said encrypt. So a
// property Config.Encrypt may mark for some keys — any property but
// PartitionKey, RowKey and Timestamp, or only those Config.Encryptable
// lists — filters only where the filter pins the keys of every entity it
// can match: filter.Plan reports a Point (PartitionKey eq and RowKey eq
// constrain the whole filter), in QueryPartitions for each partition.
// Config.Encrypt is asked at those keys: clear for all, the comparison
// runs in clear; encrypt for all, it is encrypted (a beacon or a refusal);
// otherwise, and for any filter that does not pin the keys (the whole
// table, a partition, a RowKey range, an or of entities), it is refused
// (TestFilterOnPerEntityEncryption). Config.Encryptable lets the other
// properties filter as usual; a write for which Config.Encrypt marks a
// property it does not list is refused, so the declaration holds.
//
// # Wire format
//
// What a Table stores, for readers in other languages (format.go keeps the
// same grammar beside the code). lp(x) is x's length as a uvarint (LEB128)
// followed by x; list(names) is the count as a uvarint followed by lp(name)
// per name; strings are UTF-8 and the table name is in lower case. Beside
// its clear and signed properties, stored as package entity stores any
// property, an entity holds:
//
//   - each encrypted property, under its own name, as an Edm.Binary whose
//     whole stored value is version (1 byte: 1) | nonce (12 bytes) |
//     ciphertext | tag (16 bytes): AES-256-GCM under the entity's content
//     key, sealing EDM type (1 byte) | the value's text, with the
//     authenticated data "tablekit/v1/property" 0x00 | lp(table) |
//     lp(PartitionKey) | lp(RowKey) | lp(property name). EDM types: 1
//     String, 2 Int32, 3 Int64, 4 Double, 5 Boolean, 6 DateTime, 7 Guid, 8
//     Binary. The text is the value as the service's JSON carries it,
//     unescaped (digits, "true", a DateTime in RFC 3339, a Guid's 36
//     characters), except a Binary's, which is its bytes, not their base64;
//   - _tkEnc, an Edm.Binary: version (1) | algorithm (1: AES-256-GCM) |
//     lp(key id) | lp(key-wrap algorithm) | lp(wrapped content key) |
//     list(encrypted) | list(signed) | list(beacons) | nonce (12) | tag
//     (16);
//   - _tkEq_<name>, an Edm.Binary of 16 bytes, for each beaconed property:
//     HMAC-SHA256(beacon key, "tablekit/v1/beacon" 0x00 | lp(table) |
//     lp(name) | EDM type | canonical value), its first 16 bytes.
//
// The tag of _tkEnc is the entity's signature: AES-256-GCM under the
// content key with the nonce of _tkEnc, sealing nothing, over
// "tablekit/v1/entity" 0x00 | lp(table) | lp(PartitionKey) | lp(RowKey) |
// version | algorithm | the three lists as stored | lp(stored value) per
// encrypted name | EDM type | lp(canonical value) per signed name |
// lp(beacon) per beaconed name, each in its list's order. An encrypted
// property's stored value there (format.go's lp(ciphertext)) is its whole
// stored value — version, nonce, ciphertext and tag, the bytes of its
// Edm.Binary — not the GCM ciphertext alone. A canonical value is a String's
// UTF-8, an Int32 or Int64 big-endian, a Double's IEEE 754 bits big-endian
// (negative zero as zero), a Boolean 0 or 1, a DateTime's .NET ticks (100
// ns since 0001-01-01) big-endian, a Guid's 16 bytes, a Binary's bytes.
// Every ciphertext, _tkEnc and beacon must be stored as an Edm.Binary: any
// other stored type reads as ErrTampered. Several entities may hold the
// same key envelope (Config.ContentKeyWrites): a reader unwraps it as any
// other, and may keep the content key for the next entity that holds it.
//
// For example (TestWireFormat checks that these are the bytes the code
// writes, and reads them back by this description alone): table
// "employees"; key-encryption key "kek-1", 32 bytes of 0x42, RFC 3394
// (A256KW); beacon key 32 bytes of 0x07; Email encrypted and beaconed,
// Level signed, Dept in clear; content key 00 01 … 1f, first nonce a0 a1 …
// ab (a writer adds one to the last 8 bytes, big-endian, for each next
// nonce under the same content key: the signature's is a0 … aa ac). The
// body:
//
//	{
//	  "PartitionKey": "Sales",
//	  "RowKey": "000123",
//	  "Email@odata.type": "Edm.Binary",
//	  "Email": "AaChoqOkpaanqKmqq+dyE0MguGj/AQrpp2gJr/ATwzTnsORtQoY8avm+WfGpfoL0",
//	  "Level": 3,
//	  "Dept": "Sales",
//	  "_tkEnc@odata.type": "Edm.Binary",
//	  "_tkEnc": "AQEFa2VrLTEGQTI1NktXKCulhTPlT3m5k7Ym7HIzrUKRkk1uUq2OCzBWox6FDd3ROhM79pJoQusBBUVtYWlsAQVMZXZlbAEFRW1haWygoaKjpKWmp6ipqqxFAy65CfjGDnGnQ9cLimhZ",
//	  "_tkEq_Email@odata.type": "Edm.Binary",
//	  "_tkEq_Email": "miFlOMLOoWEAcf95p7GASw=="
//	}
//
// Its protected values in hex, field by field:
//
//	Email, 48 bytes:
//	  version    01
//	  nonce      a0a1a2a3a4a5a6a7a8a9aaab
//	  ciphertext e772134320b868ff010ae9a76809aff013c334
//	  tag        e7b0e46d42863c6af9be59f1a97e82f4
//	_tkEnc, 105 bytes:
//	  version    01
//	  algorithm  01
//	  key id     056b656b2d31
//	  wrap alg   06413235364b57
//	  wrapped    282ba58533e54f79b993b626ec7233ad4291924d6e52ad8e0b3056a31e850dddd13a133bf6926842eb
//	  encrypted  0105456d61696c
//	  signed     01054c6576656c
//	  beacons    0105456d61696c
//	  nonce      a0a1a2a3a4a5a6a7a8a9aaac
//	  tag        45032eb909f8c60e71a743d70b8a6859
//	_tkEq_Email, 16 bytes:
//	  beacon     9a216538c2cea1610071ff79a7b1804b
//
// # Legacy wire format
//
// With Config.Legacy, entities the .NET storage client's
// TableEncryptionPolicy wrote are read (never written). Its reserved
// properties are _ClientEncryptionMetadata1, an Edm.String holding the JSON
// document {"WrappedContentKey":{"KeyId","EncryptedKey" (base64),
// "Algorithm"}, "EncryptionAgent":{"Protocol":"1.0",
// "EncryptionAlgorithm":"AES_CBC_256"}, "ContentEncryptionIV" (base64, 16
// bytes), "KeyWrappingMetadata":{"EncryptionLibrary"}}, and
// _ClientEncryptionMetadata2, an Edm.Binary: the JSON array of the
// encrypted property names, itself encrypted as a property of that name.
// Each encrypted property is an Edm.Binary: AES-256-CBC with PKCS#7
// padding under the unwrapped content key, with the IV
//
//	SHA-256(ContentEncryptionIV | UTF-8(RowKey + PartitionKey + name))[:16]
//
// — RowKey first, as the .NET writer joined them. The Java v1 client
// concatenated PartitionKey + RowKey + name and wrote the names as
// "[a, b]"; it is recognised, as the .NET reader did, by a missing
// KeyWrappingMetadata or an EncryptionLibrary naming Java. For example,
// with ContentEncryptionIV a0 a1 … af, PartitionKey "Sales", RowKey
// "000123" and the property Email (TestLegacyIV checks both):
//
//	.NET IV  5053859227a689ed71f8907eaf90bcfc
//	Java IV  f6015b2e24e5fba86a56da09f029d7b7
//
// # Legacy .NET entities
//
// With Config.Legacy, entities written by the .NET storage client's
// TableEncryptionPolicy (AES-CBC, _ClientEncryptionMetadata1/2) are read,
// never written; Rotate with Reencrypt rewrites them in this format. The
// legacy format has no integrity: leave Legacy off once migrated.
//
// # Azurite / Cosmos DB differences
//
// None in what is stored or checked: ciphertexts and metadata are ordinary
// Edm.Binary properties. Merge, refused here, is the operation where the
// Cosmos DB Table API also differs.
//
// [Encrypting table data]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-encrypt-data
package crypt
