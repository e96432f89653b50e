package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	cliflags "github.com/gcsput/gcsput/internal/cli/flags"
)

// flagSet wraps [flag.FlagSet] the way users of gsutil and gcloud expect:
//
//   - every option has a long name (--parallel) and may have a short one (-j); Go's flag
//     package already accepts one or two dashes for either;
//   - parsing is interspersed, so flags may follow operands (gcloud allows
//     `cp dir gs://b -r`); "--" ends the flags;
//   - short booleans may be bundled (-rn), as gsutil's getopt allows.
//
// The wrapped set never prints anything itself: errors come back to run, which decides the
// exit code, and --help prints our own usage.
type flagSet struct {
	fs    *flag.FlagSet
	specs []flagSpec // in declaration order, for the usage text
	group string     // the heading of the options declared next (Group)
}

// flagSpec describes one option for the usage text.
type flagSpec struct {
	long, short string
	aliases     []string // other long names (LongAlias)
	arg         string   // placeholder for the value ("N", "SIZE"); "" for booleans
	usage       string   // one line for --help; then, after a newline, the whole description (docs/flags.md)
	group       string   // the heading --help lists it under ("Transfer", "Retries")
}

// helpGroups are the headings of --help, in the order it prints them: what the command does
// first, then what it writes, then how it runs. Every option belongs to one of them
// (TestHelpListsEveryFlagUnderAGroup).
var helpGroups = []string{
	"Transfer", "Sync", "Listing", "Deletion", "Restore", "Metadata", "Filters", "Preconditions",
	"Destination metadata", "Retention and holds", "Encryption", "Performance", "Retries", "State", "Output", "Connection",
}

// Group makes the options declared next belong under the heading name in --help, until the
// next Group. It returns the heading it replaces, so a shared register method can give its
// options their own headings and leave the caller's as it found it:
//
//	defer fs.Group(fs.Group("Retries"))
func (f *flagSet) Group(name string) (previous string) {
	previous, f.group = f.group, name
	return previous
}

func newFlagSet(name string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{fs: fs}
}

func (f *flagSet) add(v flag.Value, long, short, arg, usage string) {
	f.fs.Var(v, long, usage)
	if short != "" {
		f.fs.Var(v, short, usage)
	}
	f.specs = append(f.specs, flagSpec{long: long, short: short, arg: arg, usage: usage, group: f.group})
}

// Alias makes -name another short form of the option long, e.g. -R for --recursive.
func (f *flagSet) Alias(name, long string) {
	fl := f.fs.Lookup(long)
	f.fs.Var(fl.Value, name, fl.Usage)
	for i := range f.specs {
		switch {
		case f.specs[i].long != long:
		case f.specs[i].short == "": // a long-only option: -name is its short form
			f.specs[i].short = name
		default:
			f.specs[i].short += ", -" + name
		}
	}
}

// LongAlias makes --name another long form of the option long, e.g. gcloud's
// --delete-unmatched-destination-objects for --delete; the usage text shows both.
func (f *flagSet) LongAlias(name, long string) {
	fl := f.fs.Lookup(long)
	f.fs.Var(fl.Value, name, fl.Usage)
	for i := range f.specs {
		if f.specs[i].long == long {
			f.specs[i].aliases = append(f.specs[i].aliases, name)
		}
	}
}

// Bool defines a boolean option.
func (f *flagSet) Bool(p *bool, long, short, usage string) {
	f.add((*cliflags.Bool)(p), long, short, "", usage)
}

// String defines a string option; arg names the value in the usage text.
func (f *flagSet) String(p *string, long, short, arg, usage string) {
	f.add((*cliflags.String)(p), long, short, arg, usage)
}

// Int defines an integer option.
func (f *flagSet) Int(p *int, long, short, arg, usage string) {
	f.add((*cliflags.Int)(p), long, short, arg, usage)
}

// Generation defines an optional generation number: *p stays nil unless the option is
// given, so "--if-generation-match 0" (only if absent, as in the JSON API) is told
// from no option.
func (f *flagSet) Generation(p **int64, long, short, arg, usage string) {
	f.add(cliflags.Generation{P: p}, long, short, arg, usage)
}

// Duration defines a duration option (Go syntax: 90s, 10m, 1h30m).
func (f *flagSet) Duration(p *time.Duration, long, short, arg, usage string) {
	f.add((*cliflags.Duration)(p), long, short, arg, usage)
}

// List defines a repeatable string option.
func (f *flagSet) List(p *[]string, long, short, arg, usage string) {
	f.add((*cliflags.List)(p), long, short, arg, usage)
}

// Given reports whether the option long was on the command line, by any of its names,
// even with an empty value: "--encryption-key=" is given, which is not the same as no flag.
func (f *flagSet) Given(long string) bool { return cliflags.Given(f.fs, long) }

// Parse parses args and returns the operands. Errors are usage errors.
func (f *flagSet) Parse(args []string) ([]string, error) {
	operands, err := cliflags.Parse(f.fs, args)
	if err != nil && err != flag.ErrHelp {
		longs := make([]string, len(f.specs))
		for i, sp := range f.specs {
			longs[i] = sp.long
		}
		return nil, usagef("%s", f.unknownAsGiven(cliflags.LongDashes(err.Error(), longs), args))
	}
	return operands, err
}

// unknownAsGiven spells an unknown flag as the user typed it (the flag package reports
// "--storage-class" as "-storage-class") and adds the nearest defined flag, if one is
// near: "flag provided but not defined: --delet; did you mean --delete?". gsutil's -m,
// -o and the other flags gcsput has no use for get their hint instead (gsutilhint.go).
func (f *flagSet) unknownAsGiven(msg string, args []string) string {
	name, ok := strings.CutPrefix(msg, "flag provided but not defined: -")
	if !ok {
		return msg
	}
	spelled := "-" + name
	if len(name) > 1 {
		spelled = "--" + name // long names as our help shows them: --continue-on-error
	}
	if hint := gsutilFlagHint(strings.TrimPrefix(f.fs.Name(), "gcsput "), spelled); hint != "" {
		return hint
	}
	for _, a := range args {
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
			msg = "flag provided but not defined: --" + name
			break
		}
	}
	return msg + f.flagSuggestion(name)
}

// names is the option's names as --help shows them: "-r, -R, --recursive", "    --chunk-size SIZE".
func (s flagSpec) names() string {
	names := "--" + s.long
	for _, a := range s.aliases {
		names += ", --" + a
	}
	if s.short != "" {
		names = "-" + s.short + ", " + names
	} else {
		names = "    " + names
	}
	if s.arg != "" {
		names += " " + s.arg
	}
	return names
}

// summary is the usage's first line, the one --help prints.
func (s flagSpec) summary() string {
	first, _, _ := strings.Cut(s.usage, "\n")
	return first
}

// description is the whole usage, for docs/flags.md: the text after the first line when
// there is one (it says everything the first line does, and more), else the first line.
func (s flagSpec) description() string {
	first, rest, ok := strings.Cut(s.usage, "\n")
	if ok {
		return rest
	}
	return first
}

// namesWidth is the widest names column --help aligns to; longer names push their line out,
// and names longer by more than 8 have a line of their own.
const namesWidth = 32

// printOptions writes the options under their group headings, in the order of helpGroups,
// one line each: names, then the usage's first line. Options with no group come last,
// under "Other flags" (a test fails on them).
func (f *flagSet) printOptions(w io.Writer) {
	width := 0
	for _, s := range f.specs {
		if n := len(s.names()); n > width && n <= namesWidth {
			width = n
		}
	}
	for _, g := range append(append([]string(nil), helpGroups...), "") {
		heading := g
		if g == "" {
			heading = "Other flags"
		}
		printed := false
		for _, s := range f.specs {
			if s.group != g && !(g == "" && !slices.Contains(helpGroups, s.group)) {
				continue
			}
			if !printed {
				fmt.Fprintf(w, "\n%s:\n", heading)
				printed = true
			}
			if n := s.names(); len(n) > width+8 { // sync's -d, --delete, --delete-unmatched-...
				fmt.Fprintf(w, "  %s\n  %-*s  %s\n", n, width, "", s.summary())
			} else {
				fmt.Fprintf(w, "  %-*s  %s\n", width, n, s.summary())
			}
		}
	}
}

// boolValue is the value of a boolean option, for options of their own kind (triBool).
type boolValue = cliflags.Bool
