package upload

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"
)

// CheckSync names the option or side it refuses in an *OptionError, with
// the value as given and a reason that reads after either name, so the
// gcsput command prints it with its flag instead of checking again in its
// own words. A download's destination that is a file is refused before any
// request, as a source that is a file is.
func TestCheckSyncOptionError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeTemp(t, dir, "notes.txt", []byte("x"))
	missing := filepath.Join(dir, "nope")
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		src, dst      Side
		o             SyncOptions
		option, value string
		why           string
	}{
		{"missing source", LocalSide(missing), prefixB, SyncOptions{}, "source", missing,
			"does not exist: the source of an upload sync is a directory (a typo, or a volume not mounted?)"},
		{"file source", LocalSide(file), prefixB, SyncOptions{}, "source", file,
			"is a file: sync mirrors a directory; to copy one file use 'gcsput cp " + file + " gs://...'"},
		{"file destination", prefixB, LocalSide(file), SyncOptions{}, "destination", file,
			"is a file: the destination of a download sync is a directory"},
		{"regexp as a glob", LocalSide(dir), prefixB, SyncOptions{Exclude: []string{`.*\.tmp$`}}, "SyncOptions.Exclude", `.*\.tmp$`,
			"looks like a regular expression (gcloud storage rsync's --exclude takes one); Exclude takes a glob such as '*.tmp': for a regular expression use ExcludeRegexp"},
		{"lookahead", LocalSide(dir), prefixB, SyncOptions{ExcludeRegexp: []string{"a(?=b)"}}, "SyncOptions.ExcludeRegexp", "a(?=b)",
			"invalid or unsupported Perl syntax: `(?=` (gcsput reads gsutil's Python-style regular expressions in Go's RE2 syntax, which has no lookaround or backreferences)"},
		{"custom time down", prefixB, LocalSide(dir), SyncOptions{CustomTime: at}, "SyncOptions.CustomTime", "2026-01-02T15:04:05Z",
			"sets the customTime of the objects an upload sync (a directory to gs://) writes; this sync writes none (a copy between buckets keeps the source's)"},
		{"max delete", LocalSide(dir), prefixB, SyncOptions{MaxDelete: MaxDeletePercent(101)}, "SyncOptions.MaxDelete", "101%",
			"give a count of 0 or more, or a share of 0% to 100%"},
	} {
		err := CheckSync(tc.src, tc.dst, tc.o)
		var oe *OptionError
		if !errors.As(err, &oe) || !errors.Is(err, ErrBadOption) {
			t.Errorf("%s: %v, want an *OptionError matching ErrBadOption", tc.name, err)
			continue
		}
		if oe.Option != tc.option || oe.Value != tc.value || oe.Err.Error() != tc.why {
			t.Errorf("%s: Option %q, Value %q, Err %q;\nwant %q, %q, %q", tc.name, oe.Option, oe.Value, oe.Err, tc.option, tc.value, tc.why)
		}
	}
	if err := CheckSync(LocalSide(missing), prefixB, SyncOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing source: %v does not match fs.ErrNotExist", err)
	}
	if err := CheckSync(prefixB, LocalSide(missing), SyncOptions{}); err != nil {
		t.Errorf("a download into a directory not made yet: %v", err)
	}
}
