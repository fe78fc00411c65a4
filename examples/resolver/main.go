// Command resolver runs the resolver step of the tour: the design guide's
// departments and employees, several entity types in one partition (§5,
// §7), against a private Azurite it starts — or, when
// TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is set, against that
// account.
//
//	go run ./examples/resolver
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/resolver/tour"
)

func main() { demo.Main("resolver example", tour.Tour) }
