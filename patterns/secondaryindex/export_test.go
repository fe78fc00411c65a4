package secondaryindex

import "time"

// TruncateBeacons cuts the beacons of s's Encrypted indexes to n bytes,
// so that tests make distinct values collide. Call it before any write.
func TruncateBeacons[T any](s *Set[T], n int) {
	for _, ix := range s.core.Indexes {
		if ix.beacon != nil {
			ix.beacon.Len = n
		}
	}
}

// AgeReservations makes s read every reservation's age d older than the
// service's clock says: tests let Grace pass without waiting for it.
func AgeReservations[T any](s *Set[T], d time.Duration) {
	s.aged = d
}
