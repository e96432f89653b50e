// Package interrupt turns the signals that stop a command into a cancelled context,
// so transfers stop starting new work and save what they have, and a second signal
// into a way out at once.
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Signals are the signals that stop a command cleanly, all alike: SIGINT (Ctrl-C), SIGTERM
// (kill, a batch engine's cancel, systemd's stop) and SIGHUP (the terminal closed, or a cron
// wrapper without nohup ended). Each would otherwise kill the process with no summary and
// without saving the download in flight.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// watched is Signals less those ignored when the process started: Notify would install a
// handler for an ignored SIGHUP or SIGINT, and undo what nohup (or a shell's background job)
// asked for.
func watched() []os.Signal {
	var out []os.Signal
	for _, s := range Signals {
		if !signal.Ignored(s) {
			out = append(out, s)
		}
	}
	return out
}

// Context returns a context cancelled with cause by the first of Signals; first is then
// called with that signal (after the cancel: what it writes may go nowhere, the terminal
// gone). The second signal calls second: a user pressing Ctrl-C twice wants out now. stop
// releases the signal handler and cancels the context; neither callback runs after it.
func Context(parent context.Context, cause error, first func(os.Signal), second func()) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sig := make(chan os.Signal, 2)
	if ws := watched(); len(ws) > 0 { // Notify of no signal would relay them all
		signal.Notify(sig, ws...)
	}
	done := make(chan struct{})
	go func() {
		var s os.Signal
		select {
		case s = <-sig:
		case <-done:
			return
		}
		cancel(cause)
		first(s)
		select {
		case <-sig:
			second()
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel(nil)
	}
}
