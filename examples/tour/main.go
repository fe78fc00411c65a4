// Command tour starts a private Azurite through the integration package and
// shows where its services listen. It is a placeholder for the full tour of
// tablekit's patterns.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tablekit/tablekit/integration"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := integration.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tour:", err)
		os.Exit(1)
	}
	defer env.Close()
	if env.Live {
		fmt.Println("Using the live account from the environment.")
	} else {
		fmt.Printf("Azurite (pid %d) answered in %v.\n", env.PID(), env.StartupDuration.Round(time.Millisecond))
	}
	fmt.Println("table:", env.TableEndpoint)
	fmt.Println("queue:", env.QueueEndpoint)
	fmt.Println("blob: ", env.BlobEndpoint)
}
