//go:build !race

package throttle_test

// seeds is how many runs of each measured load the tests make (each seed
// draws other latencies; azcore's retries draw their own delays), and
// everyRow whether TestLearnedLimitTable measures all its rows.
const (
	seeds    = 3
	everyRow = true
)
