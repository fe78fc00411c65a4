// Command large runs the large-entities step of the tour: an employee
// with a 5 MiB photo, more than an entity of the Table service may hold,
// kept in a blob that the entity references by name, size and SHA-256
// (design guide §6.11), against a private Azurite it starts — or, when
// TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is set, against
// that account.
//
//	go run ./examples/large
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/large/tour"
)

func main() { demo.Main("large example", tour.Tour) }
