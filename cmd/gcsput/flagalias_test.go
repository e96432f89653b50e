package main

import (
	"strings"
	"testing"
)

// A short alias of an option that had no short name is shown as "-e, --ignore-symlinks",
// not "-, -e, --ignore-symlinks" (sync's -e and -i, gsutil rsync's spellings).
func TestHelpShortAliasOfLongOnlyFlag(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "sync", "--help")
	for _, want := range []string{"\n  -e, --ignore-symlinks", "\n  -i, --no-clobber"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("sync --help lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "  -, -") {
		t.Errorf("sync --help shows an empty short name (\"-, -\"):\n%s", r.stdout)
	}
}
