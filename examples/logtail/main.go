// Command logtail runs the log tail step of the tour: a user's login
// attempts, newest first, read with one request (design guide §6.7),
// against a private Azurite it starts — or, when TABLEKIT_CONNECTION_STRING
// (or TABLEKIT_ACCOUNT_URL) is set, against that account.
//
//	go run ./examples/logtail
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/logtail/tour"
)

func main() { demo.Main("logtail example", tour.Tour) }
