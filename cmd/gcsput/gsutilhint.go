package main

import (
	"fmt"
	"strings"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/internal/escape"
)

// Flags of gsutil and gcloud storage that gcsput has no use for, typed out of habit, are
// answered with what gcsput does instead (docs/gsutil.md has the same answers), not with a
// bare "flag provided but not defined". Each is a usage error: nothing runs.

// continueOnError is the answer to gsutil's continue-on-error flags: gcsput always goes on.
const continueOnError = "is gsutil's continue-on-error: gcsput always goes on past a failed %s, names each failure and exits 1%s; drop the flag"

// gsutilFlagHint answers the flag arg given to the command cmd ("" before any command),
// with what gcsput does instead; "" for a flag with no answer here.
func gsutilFlagHint(cmd, arg string) string {
	switch name := strings.TrimLeft(arg, "-"); {
	case name == "m":
		return fmt.Sprintf("-m is gsutil's: gcsput always transfers in parallel; set how many files at once with -j N (default %d)", auth.DefaultParallelism)
	case name == "o" || strings.HasPrefix(name, "o") && strings.Contains(name, ":"):
		return "-o is gsutil's boto option: gcsput takes flags instead (--chunk-size, -j, --retry, --state-dir; see 'gcsput cp --help')"
	}
	var what string
	switch cmd + " " + arg {
	case "cp -c", "cp --continue-on-error", "mv -c", "mv --continue-on-error":
		what = fmt.Sprintf(continueOnError, "file", "")
	case "sync -C", "sync --continue-on-error":
		what = fmt.Sprintf(continueOnError, "file", " (with --delete, any failure withholds the deletes)")
	case "sync -c":
		what = "is gsutil's compare-by-checksum: gcsput sync compares size and CRC32C already (--mtime compares times instead); drop the flag"
	case "cp --preserve-symlinks", "mv --preserve-symlinks":
		what = "is gcloud's: gcsput stores no link as a link; it uploads a symlink to a file with the target's content (gsutil's way and gcloud cp's default), so a download gives a file everyone can read; drop the flag"
	case "rm -f", "rm --continue-on-error":
		what = fmt.Sprintf(continueOnError, "object", "")
	case "ls -L", "ls --full":
		what = "is gsutil's full listing: use 'gcsput stat gs://BUCKET/OBJECT' for an object's metadata, or 'gcsput ls -l' for sizes and times"
	case "du -c", "du --total":
		what = "is gsutil's grand total: gcsput du -s prints one total per operand; for one total, give their common prefix (gcsput du -s gs://BUCKET/PREFIX)"
	default:
		return ""
	}
	return arg + " " + what
}

// gsutilHeaderHint answers gsutil's global "-h 'Header: value'" before the command
// ('gsutil -h "Cache-Control: no-cache" cp ...'): gcsput's -h there is help, and its
// header flag follows the command. A colon tells a header from a command name, so
// 'gcsput -h cp' stays help for cp. "" when args are not that.
func gsutilHeaderHint(args []string) string {
	if len(args) < 2 || args[0] != "-h" || !strings.Contains(args[1], ":") {
		return ""
	}
	const lead = "-h before the command is gsutil's header option: gcsput takes it after the command, on cp and meta set"
	rest := args[2:]
	switch {
	case len(rest) > 0 && rest[0] == "cp":
		return fmt.Sprintf("%s: gcsput cp -h %s %s", lead, shellQuote(args[1]), strings.Join(shellQuoteAll(rest[1:]), " "))
	case len(rest) > 1 && rest[0] == "meta" && rest[1] == "set":
		return fmt.Sprintf("%s: gcsput meta set -h %s %s", lead, shellQuote(args[1]), strings.Join(shellQuoteAll(rest[2:]), " "))
	}
	return lead + " only"
}

// shellQuote quotes a word for a POSIX shell where it needs quoting, so a command line
// in a hint can be pasted as it is.
var shellQuote, shellQuoteAll = escape.Shell, escape.ShellAll
