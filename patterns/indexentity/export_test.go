package indexentity

// SetMaxEntityBytes sets s's spill limit below what Config allows, so
// that a test shows a spilled list of a few members.
func SetMaxEntityBytes[T any](s *Set[T], n int) { s.cfg.MaxEntityBytes = n }
