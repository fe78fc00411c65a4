// Command backup runs the backup step of the tour: a table of orders
// exported, restored, moved through CSV and migrated from v1 to v2,
// against a private Azurite it starts — or, when
// TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is set, against that
// account.
//
//	go run ./examples/backup
package main

import (
	"github.com/tablekit/tablekit/examples/backup/tour"
	"github.com/tablekit/tablekit/examples/demo"
)

func main() { demo.Main("backup example", tour.Tour) }
