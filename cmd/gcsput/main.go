// Command gcsput uploads and downloads Google Cloud Storage objects with resumable,
// verified transfers that survive flaky networks and killed processes.
//
// Run 'gcsput help' for the commands, or 'gcsput demo' to watch an upload survive injected
// faults against an embedded fake GCS server.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := interruptible(context.Background(), os.Stderr, func() { os.Exit(exitInterrupted) })
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// interruptible returns a context cancelled with cause errInterrupted by the first SIGINT or
// SIGTERM, so transfers stop starting new work and leave their sessions saved. The second
// signal calls quit at once: a user pressing Ctrl-C twice wants out now. stop releases the
// signal handler.
func interruptible(parent context.Context, stderr io.Writer, quit func()) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
		case <-done:
			return
		}
		fmt.Fprintln(stderr, "\ngcsput: interrupted: stopping and saving unfinished transfers (Ctrl-C again to quit at once)")
		cancel(errInterrupted)
		select {
		case <-sig:
			fmt.Fprintln(stderr, "gcsput: quitting at once")
			quit()
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel(nil)
	}
}
