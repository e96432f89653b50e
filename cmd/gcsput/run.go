package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/gcsput/gcsput/upload"
)

// app is one invocation of gcsput: its streams. Tests build one directly to capture the
// output or pretend stderr is a terminal; run builds the real one. (The environment,
// STORAGE_EMULATOR_HOST and the credentials variables, is read by the auth package.)
type app struct {
	stdin  io.Reader
	stdout io.Writer // machine output: results, listings, --json
	stderr io.Writer // people's output: progress, retries, warnings, errors

	// jsonOut is set when the command was given --json: an error that no record
	// describes (setup failed: no credentials, a 401) then also goes to stdout as one
	// {"type":"error"} record, so a script reading stdout sees why it is empty.
	jsonOut bool

	// IsTerminal says whether w is a terminal; progress bars are drawn only on terminals
	// unless --progress=always.
	isTerminal func(w io.Writer) bool
}

// run is gcsput as a function: main is os.Exit(run(...)). It never calls os.Exit itself.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, isTerminal: isTerminal}
	return a.run(ctx, args)
}

func (a *app) run(ctx context.Context, args []string) int {
	err := a.dispatch(ctx, args)
	code := exitCode(ctx, err)
	a.report(err, code)
	return code
}

// dispatch finds the command named by the first one or two words and runs it.
func (a *app) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		a.printMainHelp(a.stderr)
		return usagef("no command given")
	}
	if hint := gsutilHeaderHint(args); hint != "" {
		return usagef("%s", hint)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		return a.help(args[1:])
	case "-version", "--version", "version":
		return a.version(args[1:])
	}
	if len(subcommands(args[0])) > 0 && (len(args) == 1 || isHelpFlag(args[1])) {
		// A group alone is a usage error; a group with --help is a question.
		if len(args) == 1 {
			a.printGroupHelp(a.stderr, args[0])
			return usagef("%q needs a subcommand: %s", args[0], strings.Join(subcommands(args[0]), ", "))
		}
		a.printGroupHelp(a.stdout, args[0])
		return nil
	}
	if hint := gsutilFlagHint("", args[0]); hint != "" {
		return usagef("%s", hint)
	}
	globals, args := hoistGlobals(args)
	if len(args) == 0 {
		return usagef("no command given after %s", strings.Join(globals, " "))
	}
	cmd, rest, err := findCommand(args)
	if err != nil {
		return err
	}
	rest = append(globals, rest...)
	fs := newFlagSet("gcsput " + cmd.name)
	body := cmd.setup(a, fs)
	operands, err := fs.Parse(rest)
	if errors.Is(err, flag.ErrHelp) {
		a.printCommandHelp(a.stdout, cmd, fs)
		return err
	}
	if err == nil {
		if f := fs.fs.Lookup("json"); f != nil && f.Value.String() == "true" {
			a.jsonOut = true
		}
		err = body(ctx, operands)
	}
	if errors.Is(err, upload.ErrUserProjectMissing) {
		err = requesterPaysError(err, 1)
	}
	var ie *interruptedError
	if errors.As(err, &ie) {
		ie.cmd = cmd.name
	}
	var ue *usageError
	if errors.As(err, &ue) && ue.cmd == "" {
		ue.cmd = cmd.name
		if slices.Contains(cmd.aliases, args[0]) {
			ue.cmd = args[0] // named as the user named it: "gcsput rsync: ..."
		}
	}
	return err
}

// findCommand resolves "cp", "rsync" or "sessions ls" and returns the remaining arguments.
func findCommand(args []string) (*command, []string, error) {
	for _, c := range commands() {
		for _, name := range append([]string{c.name}, c.aliases...) {
			words := strings.Fields(name)
			if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == name {
				return c, args[len(words):], nil
			}
		}
	}
	if sub := subcommands(args[0]); len(sub) > 0 {
		if len(args) == 1 {
			return nil, nil, usagef("%q needs a subcommand: %s", args[0], strings.Join(sub, ", "))
		}
		return nil, nil, usagef("unknown command %q; %q has: %s", args[0]+" "+args[1], args[0], strings.Join(sub, ", "))
	}
	if hint := commandSuggestion(args[0]); hint != "" {
		return nil, nil, usagef("unknown command %q; %s", args[0], hint)
	}
	return nil, nil, usagef("unknown command %q; run 'gcsput help' for the list", args[0])
}

// subcommands lists the second words of the commands whose first word is group.
func subcommands(group string) []string {
	var out []string
	for _, c := range commands() {
		if w := strings.Fields(c.name); len(w) == 2 && w[0] == group {
			out = append(out, w[1])
		}
	}
	return out
}

// errorRecord is the --json record of a command that failed as a whole.
type errorRecord struct {
	Type  string `json:"type"` // always "error"
	Error string `json:"error"`
	Exit  int    `json:"exit"`
}

// report prints the final error, if any, on stderr with a hint that fits the exit code.
func (a *app) report(err error, code int) {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return
	}
	var fe *failedError
	var ie *interruptedError
	if a.jsonOut && !errors.As(err, &fe) && !errors.As(err, &ie) {
		printJSON(a.stdout, errorRecord{Type: "error", Error: redact(err.Error()), Exit: code})
	}
	if errors.As(err, &fe) && fe.total == 1 && code == exitFailed {
		return // the one failure was reported as it happened
	}
	switch code {
	case exitUsage:
		var ue *usageError
		if errors.As(err, &ue) && ue.refused {
			fmt.Fprintf(a.stderr, "gcsput: %s\n", escapeText(err.Error()))
		} else if errors.As(err, &ue) && ue.cmd != "" {
			fmt.Fprintf(a.stderr, "gcsput %s: %s\nRun 'gcsput %s --help' for usage.\n", ue.cmd, escapeText(err.Error()), ue.cmd)
		} else {
			fmt.Fprintf(a.stderr, "gcsput: %s\nRun 'gcsput help' for usage.\n", escapeText(err.Error()))
		}
	case exitInterrupted:
		var ie *interruptedError
		if errors.As(err, &ie) && ie.hint() != "" {
			fmt.Fprintf(a.stderr, "gcsput: interrupted; %s\n", ie.hint())
		} else {
			fmt.Fprintf(a.stderr, "gcsput: interrupted\n")
		}
	default:
		fmt.Fprintf(a.stderr, "gcsput: %s\n", escapeText(err.Error()))
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
