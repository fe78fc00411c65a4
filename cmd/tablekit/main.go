package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		stop() // the first signal: finish what is in flight, save the position, print how to resume
		<-sigs
		fmt.Fprintln(os.Stderr, "tablekit: second interrupt: stopping at once (resume from the last token printed or saved)")
		os.Exit(exitFailed)
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
