package main

import (
	"context"
	"strings"
	"testing"
)

// gsutil's and gcloud's flags that gcsput has no use for get a sentence saying what to use
// instead, as -m does, not a bare "flag provided but not defined". Exit 2, nothing run.
func TestGsutilHabitsGetHints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-h", "Cache-Control: no-cache", "cp", "f", "gs://b/"},
			"gcsput: -h before the command is gsutil's header option: gcsput takes it after the command, on cp and meta set: gcsput cp -h 'Cache-Control: no-cache' f gs://b/"},
		{[]string{"-h", "Content-Type:text/plain", "ls", "gs://b/"},
			"gcsput: -h before the command is gsutil's header option: gcsput takes it after the command, on cp and meta set only"},
		{[]string{"cp", "-c", "f", "gs://b/"},
			"gcsput cp: -c is gsutil's continue-on-error: gcsput always goes on past a failed file, names each failure and exits 1; drop the flag"},
		{[]string{"cp", "--continue-on-error", "f", "gs://b/"},
			"gcsput cp: --continue-on-error is gsutil's continue-on-error: gcsput always goes on past a failed file, names each failure and exits 1; drop the flag"},
		{[]string{"mv", "-c", "f", "gs://b/"},
			"gcsput mv: -c is gsutil's continue-on-error: gcsput always goes on past a failed file, names each failure and exits 1; drop the flag"},
		{[]string{"rsync", "-C", "d", "gs://b/"},
			"gcsput rsync: -C is gsutil's continue-on-error: gcsput always goes on past a failed file, names each failure and exits 1 (with --delete, any failure withholds the deletes); drop the flag"},
		{[]string{"sync", "--continue-on-error", "d", "gs://b/"},
			"gcsput sync: --continue-on-error is gsutil's continue-on-error: gcsput always goes on past a failed file, names each failure and exits 1 (with --delete, any failure withholds the deletes); drop the flag"},
		{[]string{"rsync", "-c", "d", "gs://b/"},
			"gcsput rsync: -c is gsutil's compare-by-checksum: gcsput sync compares size and CRC32C already (--mtime compares times instead); drop the flag"},
		{[]string{"rm", "-f", "gs://b/o"},
			"gcsput rm: -f is gsutil's continue-on-error: gcsput always goes on past a failed object, names each failure and exits 1; drop the flag"},
		{[]string{"rm", "--continue-on-error", "gs://b/o"},
			"gcsput rm: --continue-on-error is gsutil's continue-on-error: gcsput always goes on past a failed object, names each failure and exits 1; drop the flag"},
		{[]string{"ls", "-L", "gs://b/o"},
			"gcsput ls: -L is gsutil's full listing: use 'gcsput stat gs://BUCKET/OBJECT' for an object's metadata, or 'gcsput ls -l' for sizes and times"},
		{[]string{"ls", "--full", "gs://b/o"},
			"gcsput ls: --full is gsutil's full listing: use 'gcsput stat gs://BUCKET/OBJECT'"},
		{[]string{"du", "-c", "gs://b/x/", "gs://b/y/"},
			"gcsput du: -c is gsutil's grand total: gcsput du -s prints one total per operand; for one total, give their common prefix (gcsput du -s gs://BUCKET/PREFIX)"},
		{[]string{"du", "--total", "gs://b/x/"},
			"gcsput du: --total is gsutil's grand total: gcsput du -s prints one total per operand"},
	} {
		r := runIn(context.Background(), false, tc.args...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("gcsput %q: exit %d, stderr:\n%s\nwant exit %d, stderr starting\n%s", tc.args, r.code, r.stderr, exitUsage, tc.want)
		}
	}
}
