// Package compound keeps one-to-many data under compound RowKeys, so that a
// child is found by one point query and all the children of a parent by
// one range query: the design guide's [compound key pattern] (§6.6), with
// §5's [one-to-many relationships] of type (a), separate entity types in one
// partition.
//
// The guide's example keeps each employee's yearly reviews in the
// employee's partition, under RowKeys made of the employee id and the year
// ("empid_000123_2012"), and reads all of employee 000123's reviews with
//
//	$filter=(PartitionKey eq 'Sales') and (RowKey ge 'empid_000123') and (RowKey lt 'empid_000124')
//
// A [Relation] declares such keys once, with a typed [Part] for the parent's
// id and one for the child's, over keys.Compound (space-separated parts
// that sort as the tuple of ids sorts and split back unambiguously, the
// "separator that parses unambiguously" the guide asks for):
//
//	reviews, err := compound.New(table, compound.Config[int64, int64]{
//		Prefix: "empid", Parent: compound.Int(6), Child: compound.Int(4),
//	})
//	key, err := reviews.Key(123, 2012)                     // "empid 000123 2012"
//	r, err := reviews.Get(ctx, "Sales", 123, 2012)         // one point query
//	for r, err := range reviews.Children(ctx, "Sales", 123, entity.Query{Select: []string{"ManagerRating"}}) { … } // one range query
//	for r, err := range reviews.ChildrenBetween(ctx, "Sales", 123, 2012, 2014, entity.Query{}) { … }       // 2012 and 2013
//	err = reviews.Stamp(&review, "Sales", 123, 2013)       // set the keys, then Insert or add to a transaction
//
// A time-keyed relation reads a window of time in time's terms, whichever
// way its keys sort: with Child NewestFirst (the latest reading first),
//
//	w := compound.Window[time.Time]{From: t1, To: t2}      // t1 ≤ At < t2, t1 the earlier
//	for r, err := range readings.ChildrenIn(ctx, "site", "dev-7", w, entity.Query{}) { … } // newest first
//
// where ChildrenBetween, which takes the bounds in key order, would need
// the newer one first and read (t1, t2] instead.
//
// The range of a parent's children is [Compound(prefix, parent, ""),
// Compound(prefix, parent) + "!"): it holds every child key of the parent
// and nothing else — not 000124's, not 0001230's, and not the parent's own
// entity, whose RowKey ParentKey gives ("empid 000123"). Ids are encoded so
// that their keys sort as the ids do: [Int] pads to a fixed width (the
// guide's 000123), [Signed] orders negative numbers too, [Time] and [NewestFirst]
// are .NET ticks (NewestFirst lists the latest child first), [Text] and
// [Escaped] take strings. An id that cannot be encoded — a negative Int, one
// too wide, a string with a forbidden character — is a *KeyError before
// any request, never a key that sorts wrong.
//
// # Guarantee
//
// Keys only: a child's key is a function of its ids, a parent's children
// are exactly one contiguous range of the partition, in id order, and
// Parse reads back exactly the keys Key makes. A [Window] of ids is one
// contiguous range too, in either time order, and holds exactly the ids
// From ≤ id < To, to the 100 ns tick (TestChildrenInIsChronological,
// TestWindowKeys, FuzzWindow). The children live in their
// parent's partition, so an entity group transaction (entity.Batch) can
// change a parent and its children together: Stamp sets a child's keys for
// that.
//
// # Steps
//
// Get is one point query; Children, ChildrenBetween and ChildrenIn one
// range query per 1,000 children (ChildrenIn none for an empty window). Writes are the table's (entity.Table, entity.Batch).
//
// # Why a package of its own
//
// The typed layer reads tables, and package keys cannot: entity imports
// keys (to validate keys), so keys importing entity would be a cycle. The
// key builders it stands on (Compound, CompoundPrefix, SplitCompound,
// PadChecked, …) stay in keys, usable without a table.
//
// # Azurite and Cosmos DB
//
// Both evaluate the range the same way. The Cosmos DB Table API returns a
// range's entities unsorted: sort them by key if order matters there.
// Measured under the Cosmos DB profile of package integration/cosmos
// (TABLEKIT_PROFILE=cosmos: opaque ETags without a time, query pages in no
// key order, RowKeys of at most 255 bytes, reserved property names): a
// range returns the right entities in another order (TestGuideReviews fails
// there on order alone, and nothing else does).
//
// [compound key pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#compound-key-pattern
// [one-to-many relationships]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-modeling#one-to-many-relationships
package compound
