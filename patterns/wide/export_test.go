package wide

// SetPageSize makes w read its rows n per page, so that a test can make
// writers commit between the pages of one read.
func SetPageSize[T any](w *Table[T], n int) { w.pageSize = n }
