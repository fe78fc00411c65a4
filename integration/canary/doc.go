// Package canary holds the test that no pattern lets an encrypted value out
// in clear: with properties marked encrypt (tags and crypt's
// Config.Encrypt), it writes a unique plaintext through every component
// that takes an encrypted table (crypt.Table.Entity) — logtail,
// dataseries, compound, bucket, wide, large, lookup, denormalize, the
// index Sets (secondaryindex, indexentity), rotation (through its
// Config.Open), eventual's steps and outbox, backup, resolver — with
// replies lost and
// processes killed mid-way, then scans everything the account holds
// (every entity of every table, every message of every queue, poison
// queues included, every blob and its metadata, gzip members opened),
// every error the calls returned and every line azcore logged, for the
// plaintext and its base64, base64url and hex forms.
//
// The test lives beside package integration because it spans the
// patterns: it imports them all, as a user's service would. It has no
// code of its own outside its tests.
package canary
