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

	"github.com/gcsput/gcsput/internal/interrupt"
)

func main() {
	// A closed stdout or stderr (the reader of '| tee log' gone with its terminal) must
	// not kill gcsput by SIGPIPE before it saves and summarizes: a write there fails with
	// EPIPE instead, and output is best effort.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := interruptible(context.Background(), os.Stderr, func() { os.Exit(exitInterrupted) })
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// interruptible returns a context cancelled with cause errInterrupted by the first of
// interrupt.Signals (SIGINT, SIGTERM, SIGHUP alike), so transfers stop starting new work
// and leave their sessions saved; it says so on stderr. The second signal calls quit at
// once. stop releases the signal handler.
func interruptible(parent context.Context, stderr io.Writer, quit func()) (context.Context, func()) {
	return interrupt.Context(parent, errInterrupted, func(s os.Signal) {
		fmt.Fprintf(stderr, "\ngcsput: %s: stopping and saving unfinished transfers (%s again to quit at once)\n", signalName(s), againHint(s))
	}, func() {
		fmt.Fprintln(stderr, "gcsput: quitting at once")
		quit()
	})
}

// signalName says which signal stopped gcsput, as the user would recognise it.
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "interrupted"
	case syscall.SIGHUP:
		return "hangup (SIGHUP: the terminal closed?)"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	}
	return s.String()
}

// againHint is what the user sends to quit at once after s.
func againHint(s os.Signal) string {
	if s == os.Interrupt {
		return "Ctrl-C"
	}
	return "a second signal"
}
