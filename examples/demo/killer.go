package demo

import "github.com/tablekit/tablekit/integration/faults"

// ErrKilled is the error of every request a Killer stops.
var ErrKilled = faults.ErrKilled

// Killer is the pipeline policy that simulates a process that dies
// (faults.Killer, the one tablekit's crash tests use): it lets a number of
// requests through and then fails every later one before it is sent, so
// that a tour can show what a fresh process recovers from what is stored.
// Put it in a view with Env.With. Package faults links no testing.
type Killer = faults.Killer

// NewKiller returns a Killer that lets after requests through; after < 0
// lets every request through until Kill is called.
func NewKiller(after int) *Killer { return faults.NewKiller(after) }
