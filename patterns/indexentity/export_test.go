package indexentity

// SetMaxEntityBytes sets s's spill limit below what Config allows, so
// that a test shows a spilled list of a few members.
func SetMaxEntityBytes[T any](s *Set[T], n int) { s.cfg.MaxEntityBytes = n }

// TruncateBeacons cuts the beacons of s's Encrypted indexes to n bytes,
// so that tests make distinct values collide. Call it before any write.
func TruncateBeacons[T any](s *Set[T], n int) {
	for _, ix := range s.core.Indexes {
		if ix.beacon != nil {
			ix.beacon.Len = n
		}
	}
}
