package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/upload"
)

// Exit codes. They are decided in exitCode and nowhere else; scripts rely on them.
//
//	0    everything asked for was done (or --help was asked for)
//	1    some transfers or requests failed; each is named on stderr and in --json
//	2    usage error: bad flag, operand or input, or no credentials (none found, or a
//	     key file that cannot be read or is not a usable key), found before any transfer started; a
//	     batch refused before its first transfer (a bucket that does not exist,
//	     credentials that may not write or list there: preflight); and a sync --delete
//	     that its delete guard refused (an empty source, more deletes than --max-delete),
//	     also before anything changed
//	130  interrupted (SIGINT, SIGTERM or SIGHUP alike, see interrupt.Signals): unfinished
//	     transfers are saved for `gcsput resume`, the summary is printed
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// errInterrupted is the cause of the context cancelled by the first Ctrl-C.
var errInterrupted = errors.New("interrupted")

// usageError is bad input from the user: a flag, an operand, a file that does not exist.
// The message names the thing and, where there is one, the fix.
// cmd is the command it belongs to ("cp", "sessions ls"), filled in by dispatch.
// refused marks a refusal found by asking the server (refusef): the command's --help
// would not help, so it is not offered.
type usageError struct {
	cmd, msg string
	refused  bool
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// refusef is a batch refused before its first transfer by what the server said (preflight):
// a bucket that does not exist, credentials that may not write there. Like a usage error,
// it exits 2 and nothing was transferred.
func refusef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), refused: true}
}

// interruptedError says a command was interrupted with transfers unfinished; saved of
// them can be continued by 'gcsput resume', the rest start over when run again.
// cmd is the command interrupted ("cp", "sync"), filled in by dispatch: the hint names
// only flags that command takes.
type interruptedError struct {
	interrupted, saved, total int
	cmd                       string
}

func (e *interruptedError) Error() string {
	return fmt.Sprintf("%d of %d transfers interrupted", e.interrupted, e.total)
}

func (e *interruptedError) Unwrap() error { return errInterrupted }

// hint tells the user how to finish the job.
func (e *interruptedError) hint() string {
	var s []string
	if e.saved > 0 {
		s = append(s, fmt.Sprintf("%s saved: 'gcsput resume' continues from the server's offset", plural(e.saved, "unfinished transfer")))
	}
	if n := e.interrupted - e.saved; n > 0 {
		s = append(s, fmt.Sprintf("%s not started or not resumable: %s", plural(n, "transfer"), e.rerun()))
	}
	return strings.Join(s, "\n         ")
}

// rerun says how to send what an interrupted command did not: its own way of skipping
// what is already there (each command is tested to accept what this names).
func (e *interruptedError) rerun() string {
	switch e.cmd {
	case "cp":
		return "run the same command again\n         (with --skip-unchanged to skip what is already there)"
	case "sync":
		return "run the same command again (sync sends only what differs)"
	case "mv":
		return "run the same command again (what was moved is gone from the source; the rest moves)"
	case "resume":
		return "run the command that started them again"
	}
	return "run the same command again"
}

// failedError says some of many transfers failed; each was already reported.
type failedError struct {
	failed, total int
	noun          string // what failed, plural: "transfers" when empty
}

func (e *failedError) Error() string {
	noun := e.noun
	if noun == "" {
		noun = "transfers"
	}
	return fmt.Sprintf("%d of %d %s failed", e.failed, e.total, noun)
}

// badInput lists the library errors that mean the command cannot work as given, found
// before anything was transferred: a bad name or option, no credentials at all or a key
// that cannot be used.
var badInput = []error{upload.ErrBadName, upload.ErrBadOption, auth.ErrNoCredentials, auth.ErrBadCredentials}

// exitCode maps the outcome of a command to the process exit code. The interrupt wins over
// everything else: after Ctrl-C, failures are the consequence of the cancellation.
func exitCode(ctx context.Context, err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(context.Cause(ctx), errInterrupted), errors.Is(err, errInterrupted):
		return exitInterrupted
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	for _, target := range badInput {
		if errors.Is(err, target) {
			return exitUsage
		}
	}
	return exitFailed
}
