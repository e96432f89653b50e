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
	// A closed stdout or stderr (the reader of '| tee log' gone with its terminal) must
	// not kill gcsput by SIGPIPE before it saves and summarizes: a write there fails with
	// EPIPE instead, and output is best effort.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := interruptible(context.Background(), os.Stderr, func() { os.Exit(exitInterrupted) })
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// stopSignals are the signals that stop gcsput cleanly, all alike: SIGINT (Ctrl-C), SIGTERM
// (kill, a batch engine's cancel, systemd's stop) and SIGHUP (the terminal closed, or a cron
// wrapper without nohup ended). Each would otherwise kill the process with no summary and
// without saving the download in flight; every one exits with exitInterrupted.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// watched is stopSignals less those ignored when gcsput started: Notify would install a
// handler for an ignored SIGHUP or SIGINT, and undo what nohup (or a shell's background job)
// asked for.
func watched() []os.Signal {
	var out []os.Signal
	for _, s := range stopSignals {
		if !signal.Ignored(s) {
			out = append(out, s)
		}
	}
	return out
}

// interruptible returns a context cancelled with cause errInterrupted by the first of
// stopSignals, so transfers stop starting new work and leave their sessions saved. The
// second signal calls quit at once: a user pressing Ctrl-C twice wants out now. stop
// releases the signal handler.
func interruptible(parent context.Context, stderr io.Writer, quit func()) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sig := make(chan os.Signal, 2)
	if ws := watched(); len(ws) > 0 { // Notify of no signal would relay them all
		signal.Notify(sig, ws...)
	}
	done := make(chan struct{})
	go func() {
		var first os.Signal
		select {
		case first = <-sig:
		case <-done:
			return
		}
		cancel(errInterrupted) // first: stderr may be gone with the terminal
		fmt.Fprintf(stderr, "\ngcsput: %s: stopping and saving unfinished transfers (%s again to quit at once)\n", signalName(first), againHint(first))
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
