package main

import (
	"regexp"
	"strings"
)

// The spellings of gsutil rsync and gcloud storage rsync that sync takes besides its own:
// -r/-R/--recursive (accepted: sync always takes the whole tree), -d and
// --delete-unmatched-destination-objects (--delete), -n (--dry-run, as in gsutil rsync;
// cp's -n is gsutil cp's no-clobber) and -x REGEX (--exclude-regex).

// registerRsyncSpellings declares the gsutil and gcloud names on sync's flag set; f's
// own options (--delete, --dry-run) must be declared before.
func (f *syncFlags) registerRsyncSpellings(fs *flagSet) {
	fs.LongAlias("delete-unmatched-destination-objects", "delete")
	fs.Bool(&f.recursive, "recursive", "r", "accepted for gsutil's and gcloud's rsync -r: sync always takes the whole tree")
	fs.Alias("R", "recursive")
	fs.List(&f.excludeRE, "exclude-regex", "x", "REGEX",
		"leave paths whose relative path (a/b.txt) matches REGEX from its start alone, on both sides, as gsutil rsync -x: a Python-style regular expression in Go's RE2 syntax, e.g. '.*\\.tmp$' (repeatable)")
}

// compileExcludes compiles -x patterns as gsutil applies them: Python's re.match, which
// anchors at the start of the relative path but not at its end. RE2 has no lookaround
// and no backreferences; such a pattern is a usage error that says so.
func compileExcludes(patterns []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range patterns {
		re, err := regexp.Compile(`^(?:` + p + `)`)
		if err != nil {
			return nil, usagef("-x '%s': %v (gcsput reads gsutil's Python-style regular expressions in Go's RE2 syntax, which has no lookaround or backreferences)",
				p, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		out = append(out, re)
	}
	return out, nil
}

// checkGlobs refuses an --exclude or --include that is plainly a regular expression:
// gcloud storage rsync's --exclude takes one, gcsput's takes a glob, and a regex read as
// a glob matches nothing, so what the user meant to leave out would be copied.
func checkGlobs(flag string, globs []string) error {
	for _, g := range globs {
		if strings.HasPrefix(g, "^") || strings.HasSuffix(g, "$") || strings.Contains(g, `\.`) || strings.Contains(g, ".*\\") {
			return usagef("--%s '%s' looks like a regular expression (gcloud storage rsync's --%s takes one); gcsput's --%s takes a glob such as '*.tmp': for a regular expression use -x/--exclude-regex", flag, g, flag, flag)
		}
	}
	return nil
}

// keep reports whether sync looks at rel (a path under its root, "/"-separated): the
// --include/--exclude rules take it and no -x pattern matches it.
func (s *syncer) keep(rel string) bool {
	if ok, _ := s.rules.Match(rel); !ok {
		return false
	}
	for _, re := range s.excludeRE {
		if re.MatchString(rel) {
			return false
		}
	}
	return true
}
