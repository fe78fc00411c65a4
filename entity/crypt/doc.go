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
// entity.Table refuse a type with encrypt or sign fields, so nothing marked
// is ever written in clear by mistake.
//
// # Guarantee
//
// For every entity written through a Table:
//
//   - each encrypted property is AES-256-GCM under a content key drawn at
//     random for this write, with a fresh random nonce, its authenticated
//     data naming the format version, the table, the PartitionKey, the
//     RowKey and the property: a ciphertext copied to another property,
//     entity or table does not decrypt;
//   - the content key is wrapped by a key-encryption key (Config.Key:
//     [LocalKey]'s AES key wrap, RFC 3394/5649, or an Azure Key Vault key
//     through package keyvault) and stored, with the key's id, in the
//     reserved property _tkEnc, which also lists the encrypted, signed and
//     beaconed properties;
//   - a signature (GMAC under the content key) covers that list, every
//     ciphertext, every signed value and every beacon: adding, removing,
//     swapping or changing any protected property is detected;
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
// The stored format is specified in format.go, so that another language can
// read it.
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
// Keys: a content key is used for one write only; unwrapped content keys
// of entities recently written or read stay in process memory, ready for
// the next read (Config.KeyCache; a negative value keeps none).
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
// Vault with package keyvault): encode the entity with the entity codec,
// encrypt each protected value as it is written, wrap the content key, add
// the metadata, send. A read is one call (plus one to Key Vault unless the
// content key is cached): decode the body, unwrap the content key, check
// the signature over the whole protected set, then decrypt each property
// into its field with the same codec.
//
// # Key rotation
//
// Rotate moves existing entities to a new key-encryption key by rewriting
// only their key envelope (one merge per entity, under its ETag; data,
// signature and beacons unchanged). During a rotation give readers and
// writers [Keyring](newKey, oldKey): every entity reads under either key.
// Rotate with [RotateOptions].Reencrypt re-encrypts entities in full, which
// also moves legacy and plaintext entities to this format.
//
// # Failure and recovery
//
// A write either stores the whole encrypted entity or nothing (one request;
// a lost reply is handled as entity.Table handles it). A rotation that
// stops (a crash, a cancelled context, a lost reply azcore's retries did
// not get past) leaves every entity under the old key or the new one, both
// readable with the Keyring; run it again, from the token it last passed to
// RotateOptions.Checkpoint or from the start (entities already under the
// new key are skipped). A merge whose reply was lost and that azcore resent
// fails on the ETag; the entity, read again, is found rotated.
//
// # Filters
//
// A filter that compares an encrypted property could only match
// ciphertext, so Query, QueryPage and QueryPartitions refuse it
// ([ErrEncryptedFilter]) before any request. For properties listed in
// Config.Beacons, eq and ne run on the beacon instead: the HMAC-SHA256 of
// the value's canonical bytes under Config.BeaconKey, stored beside the
// ciphertext. Signed and clear properties filter as usual.
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
