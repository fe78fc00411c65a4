package secondaryindex

// TruncateBeacons cuts the beacons of s's Encrypted indexes to n bytes,
// so that tests make distinct values collide. Call it before any write.
func TruncateBeacons[T any](s *Set[T], n int) {
	for _, ix := range s.core.Indexes {
		if ix.beacon != nil {
			ix.beacon.Len = n
		}
	}
}
