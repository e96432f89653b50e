// Package flags is the plumbing of gcsput's gsutil-style command line: the values its
// options take, interspersed parsing with bundled short booleans, and the nearest name
// for a misspelt one. The command declares its options and prints their help; this
// package only reads arguments and never prints.
package flags

import (
	"flag"
	"strings"
)

// Parse parses args with fs the way users of gsutil and gcloud expect and returns the
// operands: parsing is interspersed, so flags may follow operands (gcloud allows
// `cp dir gs://b -r`); "--" ends the flags; short booleans may be bundled (-rn), as
// gsutil's getopt allows. Errors are fs's own (flag.ErrHelp for -h when fs has none).
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	args = ExpandBundles(fs, args)
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(operands, rest...), nil
		}
		if len(rest) == 0 {
			return operands, nil
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// ExpandBundles turns "-rn" into "-r -n" when every letter is a boolean short option of
// fs and "-rn" itself is not an option. Arguments after "--" are left alone.
func ExpandBundles(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if !IsBundle(fs, a) {
			out = append(out, a)
			continue
		}
		for _, c := range a[1:] {
			out = append(out, "-"+string(c))
		}
	}
	return out
}

// IsBundle reports whether a is bundled short booleans of fs, such as "-rn".
func IsBundle(fs *flag.FlagSet, a string) bool {
	if len(a) < 3 || a[0] != '-' || a[1] == '-' || strings.Contains(a, "=") || fs.Lookup(a[1:]) != nil {
		return false
	}
	for _, c := range a[1:] {
		fl := fs.Lookup(string(c))
		if fl == nil {
			return false
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
			return false
		}
	}
	return true
}

// LongDashes rewrites the flag package's "-chunk-size" to "--chunk-size" in its message
// for each of longs, since gcsput's help shows long options with two dashes.
func LongDashes(msg string, longs []string) string {
	for _, l := range longs {
		if len(l) > 1 {
			msg = strings.ReplaceAll(msg, "flag -"+l+":", "flag --"+l+":")
			msg = strings.ReplaceAll(msg, "argument: -"+l, "argument: --"+l)
		}
	}
	return msg
}

// Given reports whether the option named was on the command line, by any of its names
// (every name of an option shares its Value), even with an empty value:
// "--encryption-key=" is given, which is not the same as no flag.
func Given(fs *flag.FlagSet, name string) bool {
	fl := fs.Lookup(name)
	if fl == nil {
		return false
	}
	given := false
	fs.Visit(func(v *flag.Flag) { given = given || v.Value == fl.Value })
	return given
}
