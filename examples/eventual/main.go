// Command eventual runs the eventual step of the tour: the design guide's
// archive-an-employee example (§6.3), a worker that crashes half-way and
// one that finishes its work, and a poisoned message replayed — against a
// private Azurite it starts, or, when TABLEKIT_CONNECTION_STRING (or
// TABLEKIT_ACCOUNT_URL) is set, against that account.
//
//	go run ./examples/eventual
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/eventual/tour"
)

func main() { demo.Main("eventual example", tour.Tour) }
