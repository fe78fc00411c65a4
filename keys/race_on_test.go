//go:build race

package keys_test

const raceEnabled = true
