//go:build race

package throttle_test

// seeds is how many runs of each measured load the tests make, and
// everyRow whether TestLearnedLimitTable measures all its rows: under the
// race detector, which slows each run several times over, one run of
// three rows (the lowest partition limit, a high one, and an account's).
const (
	seeds    = 1
	everyRow = false
)
