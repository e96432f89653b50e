package main

import (
	"errors"
	"strings"
	"time"

	"github.com/gcsput/gcsput/upload"
)

// sync's words: the library's refusals in the user's words, and the spellings
// of gsutil rsync and gcloud storage rsync that sync takes besides its own:
// -r/-R/--recursive (accepted: sync always takes the whole tree), -d and
// --delete-unmatched-destination-objects (--delete), -n (--dry-run, as in gsutil rsync;
// cp's -n is gsutil cp's no-clobber, and so is gcloud rsync's -n) and -x REGEX
// (--exclude-regex); gcloud's --checksums-only, --no-clobber (gsutil's -i),
// --skip-if-dest-has-newer-mtime (not -u: gcsput's -u is gsutil's -u PROJECT),
// --ignore-symlinks (gsutil's -e) and --no-ignore-symlinks.

// registerRsyncSpellings declares the gsutil and gcloud names on sync's flag set; f's
// own options (--delete, --dry-run) must be declared before.
func (f *syncFlags) registerRsyncSpellings(fs *flagSet) {
	fs.LongAlias("delete-unmatched-destination-objects", "delete")
	fs.Group("Sync")
	fs.Bool(&f.recursive, "recursive", "r", "accepted for rsync -r: sync takes the whole tree\n"+"accepted for gsutil's and gcloud's rsync -r: sync always takes the whole tree")
	fs.Alias("R", "recursive")
	fs.Group("Filters")
	fs.List(&f.excludeRE, "exclude-regex", "x", "REGEX",
		"leave alone paths matching a regular expression\n"+"leave paths whose relative path (a/b.txt) matches REGEX from its start alone, on both sides, as gsutil rsync -x: a Python-style regular expression in Go's RE2 syntax, e.g. '.*\\.tmp$' (repeatable)")
	fs.Group("Sync")
	fs.Bool(&f.checksums, "checksums-only", "", "accepted for gcloud rsync: sync compares CRC32Cs\n"+"accepted for gcloud's rsync: sync compares size and CRC32C already (not with --mtime)")
	fs.Group("Preconditions")
	fs.Bool(&f.noClobber, "no-clobber", "", "never replace an entry DST has, alike or not\n"+"never replace what DST holds: an entry it has is left alone, alike or not (gcloud's --no-clobber; not -n, which is --dry-run as in gsutil)")
	fs.Bool(&f.newer, "skip-if-dest-has-newer-mtime", "", "leave alone an entry newer in DST\n"+"leave alone an entry whose DST copy has a newer modification time than SRC's (gcloud's -u; gcsput's -u is gsutil's -u PROJECT, --billing-project)")
	fs.Alias("i", "no-clobber")
	fs.Group("Filters")
	fs.Bool(&f.ignoreLn, "ignore-symlinks", "", "skip every symlink of the source directory\n"+"skip every symlink in the source directory (default: a symlink to a file is copied with its target's content, as gsutil rsync does)")
	fs.Group("Destination metadata")
	fs.String(&f.custom, "custom-time", "", "TIME", "customTime of uploaded objects (RFC 3339)\n"+"set the customTime of every object an upload sync writes (RFC 3339, e.g. 2026-01-02T15:04:05Z), as gcloud's --custom-time; lifecycle rules read it")
	fs.Alias("e", "ignore-symlinks")
	fs.Group("Filters")
	fs.Bool(&f.followLn, "no-ignore-symlinks", "", "copy a symlink to a file as its target (the default)\n"+"copy a symlink to a file with its target's content: the default, spelt as gcloud spells it")
}

// checkNewerU answers gcloud rsync's -u typed out of habit: gcsput's -u is gsutil's
// -u PROJECT (--billing-project), so 'sync -u SRC DST' took SRC for a project and left one
// operand, which is what it says rather than only "takes a source and a destination".
func (f *syncFlags) checkNewerU(ops []string) error {
	p := f.remote.keys.billingProject
	if len(ops) != 1 || p == "" {
		return nil
	}
	return usagef("sync takes a source and a destination and got one: -u (--billing-project) took %s as its PROJECT; gcsput's -u is gsutil's -u PROJECT, not gcloud rsync's -u: for that, spell it --skip-if-dest-has-newer-mtime", shellQuote(p))
}

// checkRsyncFlags refuses gcloud's rsync flags given together where they contradict.
func (f *syncFlags) checkRsyncFlags() error {
	switch {
	case f.checksums && f.mtime:
		return usagef("--checksums-only and --mtime contradict: sync compares by CRC32C, or with --mtime by modification time; give one")
	case f.ignoreLn && f.followLn:
		return usagef("--ignore-symlinks and --no-ignore-symlinks contradict: give one (without either, a symlink to a file is copied with its target's content)")
	case f.custom != "":
		t, err := time.Parse(time.RFC3339Nano, f.custom)
		if err != nil {
			return usagef("--custom-time %s: give an RFC 3339 time, e.g. 2026-01-02T15:04:05Z", shellQuote(f.custom))
		}
		f.customAt = t
	}
	return nil
}

// syncFlagNames are sync's flags by the library's names for what they set
// (upload.OptionError's Option), and flagWords the same in a reason's advice.
var (
	syncFlagNames = map[string]string{"SyncOptions.Exclude": "--exclude", "SyncOptions.ExcludeRegexp": "-x",
		"SyncOptions.CustomTime": "--custom-time", "SyncOptions.MaxDelete": "--max-delete"}
	flagWords = strings.NewReplacer("Exclude takes", "--exclude takes", "use ExcludeRegexp", "use -x/--exclude-regex")
)

// syncUsage is the library's refusal of sync's operands or options (upload.CheckSync)
// as a usage error in the user's words: an option by its flag ("--exclude '^a': looks
// like ..."), a side by its path ("./site does not exist: ...").
func syncUsage(err error) error {
	var oe *upload.OptionError
	switch {
	case !errors.As(err, &oe):
		return usagef("%v", err)
	case syncFlagNames[oe.Option] != "":
		return usagef("%s %s: %s", syncFlagNames[oe.Option], shellQuote(oe.Value), flagWords.Replace(oe.Err.Error()))
	}
	return usagef("%s %v", oe.Value, oe.Err) // a side: "source" or "destination"
}
