//go:build !unix

package secondaryindex_test

import "time"

// processCPU is not measured here: the cpu metrics of the benchmarks read
// 0.
func processCPU() time.Duration { return 0 }
