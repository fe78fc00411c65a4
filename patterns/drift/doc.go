// Package drift is the shared vocabulary of tablekit's index checkers: the
// secondary indexes of §6.1 and §6.2 ([intra-partition] and [inter-partition])
// and the [index entities] of §6.4 copy data
// the service does not keep consistent by itself, so each of those packages
// offers a Check that compares the primaries with their index entries and a
// Repair that fixes what it finds, and both speak in the types below.
//
// A check is a scan: it reports what it finds as it goes, and every
// [Finding] carries the resume token of the page it was found on, so a check
// (or a rebuild that repairs as it checks) killed half-way resumes from the
// last token it reported instead of starting again.
//
// Findings are of four kinds, named from the index's side:
//
//   - [Missing]: a primary has no index entry for a value it holds;
//   - [Stale]: an index entry exists but disagrees with its primary (another
//     value, older copied properties);
//   - [Orphan]: an index entry points at a primary that does not exist or no
//     longer holds that value;
//   - [Duplicate]: a second primary holds a value of a unique index (only a
//     write around the index does that); the entry stays with one holder,
//     and no repair changes it.
//
// A repair is idempotent and guarded by the ETags the check read, so it can
// run while writers keep writing: a repair that loses a race to a writer
// reports [ErrRaced] (errors.Is) and the next check decides again.
//
// [intra-partition]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#intra-partition-secondary-index-pattern
// [inter-partition]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#inter-partition-secondary-index-pattern
// [index entities]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#index-entities-pattern
package drift
