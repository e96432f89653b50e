package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// command is one gcsput command. setup declares its flags on fs and returns the body, which
// runs with the operands once the flags are parsed.
type command struct {
	name    string   // "cp", "sessions ls"
	aliases []string // other names of the command: "rsync" for sync, as gsutil and gcloud spell it
	args    string   // operand synopsis: "[flags] SRC... DST"
	summary string   // one line for 'gcsput help'
	// --help prints the usage line, help (one or two sentences), the flags under their
	// groups, examples, then "See " + see: the long prose is in docs/, not in --help.
	help     string // what the command does, in one or two sentences
	examples string // a few command lines, one a line, with "# comments"
	see      string // the docs that say the rest: "docs/copy.md for destination names"
	setup    func(a *app, fs *flagSet) func(ctx context.Context, operands []string) error
}

// commands is the table every lookup, the main help and the tests go through.
func commands() []*command {
	return []*command{
		cpCommand, mvCommand, syncCommand, catCommand, rmCommand, restoreCommand, statCommand, metaSetCommand, lsCommand, duCommand,
		sessionsLsCommand, sessionsCancelCommand, sessionsGcCommand, resumeCommand,
		reportCommand, demoCommand,
	}
}

const mainHelp = `gcsput: resumable, verifiable uploads and downloads for Google Cloud Storage.

Usage:
  gcsput COMMAND [flags] [operands]

Commands:
%s
  help [COMMAND]     show help for a command
  version            print the version

Every command takes --help; docs/commands.md and docs/flags.md give each in full.
Flags may come before or after operands; "--" ends them.
gsutil's and gcloud storage's spellings work where gcsput has the feature (rsync, -r, -d,
-n, -x, du -sh, ls -lh); an unknown command or flag names the nearest one.

Examples:
  gcsput cp -r ./photos gs://my-bucket/photos/         # upload a directory
  tar cz ./db | gcsput cp - gs://my-bucket/db.tgz      # upload a stream
  gcsput cp -r gs://my-bucket/photos/ ./restore/       # download a prefix
  gcsput resume                                        # finish uploads cut short
  gcsput demo                                          # see it survive faults, no bucket needed

Environment:
  STORAGE_EMULATOR_HOST           use an emulator (e.g. localhost:4443 or http://127.0.0.1:4443)
                                  without credentials, as Google's own clients do
  GOOGLE_APPLICATION_CREDENTIALS  key file for Application Default Credentials

Exit codes:
  0    all done
  1    some transfers failed (each is named on stderr, and in --json)
  2    usage error: bad flag, operand or input, or no credentials (none found, or a
       key file that cannot be read or is not a usable key); a batch refused before its first
       transfer (a bucket that does not exist, credentials that may not write or list
       there); a sync --delete refused by its guard; nothing was transferred
  130  interrupted by SIGINT (Ctrl-C), SIGTERM or SIGHUP (a closed terminal), alike:
       transfers in flight are saved, the summary is printed (and the --json summary
       line), 'gcsput resume' finishes them; files not yet started are sent by running
       the same command again. A second signal quits at once (also 130). A signal that
       was ignored when gcsput started (nohup) stays ignored. SIGPIPE is ignored:
       output whose reader is gone (| tee closed with the terminal) never kills
       gcsput before it saves ('cat ... | head' exits 1, "broken pipe", not 141).
`

func (a *app) printMainHelp(w io.Writer) {
	var b strings.Builder
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-18s %s\n", strings.Join(append([]string{c.name}, c.aliases...), ", "), c.summary)
	}
	fmt.Fprintf(w, mainHelp, strings.TrimRight(b.String(), "\n"))
}

func (a *app) printCommandHelp(w io.Writer, c *command, fs *flagSet) {
	fmt.Fprintf(w, "Usage: gcsput %s %s\n", c.name, c.args)
	for _, alias := range c.aliases {
		fmt.Fprintf(w, "       gcsput %s %s\n", alias, c.args)
	}
	fmt.Fprintf(w, "\n%s\n", wrap(c.help, helpWidth))
	fs.printOptions(w)
	if ex := strings.Trim(c.examples, "\n"); ex != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", ex)
	}
	if c.see != "" {
		fmt.Fprintf(w, "\n%s\n", wrap("See "+c.see, helpWidth))
	}
}

// helpWidth is the width --help wraps its prose to.
const helpWidth = 92

// wrap refills text to lines of at most width characters (a longer word has its own line).
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		switch {
		case n == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// help prints the main help or one command's help on stdout: asked-for help is output.
func (a *app) help(args []string) error {
	if len(args) == 0 {
		a.printMainHelp(a.stdout)
		return nil
	}
	if len(args) == 1 && len(subcommands(args[0])) > 0 {
		a.printGroupHelp(a.stdout, args[0])
		return nil
	}
	c, rest, err := findCommand(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("help takes one command, got extra %q", strings.Join(rest, " "))
	}
	fs := newFlagSet("gcsput " + c.name)
	c.setup(a, fs)
	a.printCommandHelp(a.stdout, c, fs)
	return nil
}

// printGroupHelp lists the commands of a group ("sessions", "meta").
func (a *app) printGroupHelp(w io.Writer, group string) {
	fmt.Fprintf(w, "Usage: gcsput %s COMMAND [flags] [operands]\n\nCommands:\n", group)
	for _, c := range commands() {
		if g, _, ok := strings.Cut(c.name, " "); ok && g == group {
			fmt.Fprintf(w, "  %-18s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintf(w, "\nRun 'gcsput %s COMMAND --help' for a command's flags.\n", group)
}

// isHelpFlag reports whether arg asks for help.
func isHelpFlag(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// version prints the module version and the VCS revision the binary was built from.
func (a *app) version(args []string) error {
	if len(args) == 1 && isHelpFlag(args[0]) {
		fmt.Fprintln(a.stdout, "Usage: gcsput version\n\nPrints gcsput's version and the revision it was built from.")
		return nil
	}
	if len(args) > 0 {
		return usagef("version takes no operands")
	}
	v, rev := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = " " + s.Value
			}
		}
	}
	fmt.Fprintf(a.stdout, "gcsput %s%s\n", v, rev)
	return nil
}
