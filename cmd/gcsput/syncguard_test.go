package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/upload"
)

// A bad --max-delete is a usage error naming the flag, in the words of
// upload.ParseMaxDelete, before anything is read.
func TestMaxDeleteFlag(t *testing.T) {
	e := newE2E(t)
	e.write("src/a.txt", 10)
	for in, want := range map[string]string{
		"101%":  "gcsput sync: --max-delete 101%: a share of the destination is 0% to 100%, e.g. 25%\nRun 'gcsput sync --help' for usage.\n",
		"-1":    "gcsput sync: --max-delete -1: give a number of entries (e.g. 100) or a share of the destination (e.g. 25%)\nRun 'gcsput sync --help' for usage.\n",
		"12.5%": "gcsput sync: --max-delete 12.5%: a share of the destination is 0% to 100%, e.g. 25%\nRun 'gcsput sync --help' for usage.\n",
	} {
		r := e.run(nil, "sync", "--delete", "--max-delete", in, filepath.Join(e.dir, "src"), "gs://bkt/p")
		if r.code != exitUsage || r.stderr != want || len(e.srv.Log()) != 0 {
			t.Errorf("--max-delete %s: exit %d, stderr %q, %d requests; want exit 2, %q", in, r.code, r.stderr, len(e.srv.Log()), want)
		}
	}
}

// The guard's refusals in the command's words. Which counts the guard
// refuses is the library's (upload's TestDeleteGuardRefusal); these are its
// refusals as the CLI words them, with the flags that answer them.
func TestDeleteGuardMessage(t *testing.T) {
	src, dst := upload.LocalSide("/mnt/data"), upload.RemoteSide(upload.URL{Bucket: "b", Object: "backup"})
	for _, c := range []struct {
		name              string
		reason            upload.GuardReason
		source, dest, del int
		filtered          bool
		limit             string
		want              string
	}{
		{name: "empty source", reason: upload.GuardEmptySource, source: 0, dest: 3, del: 3,
			want: "refusing to sync --delete: the source /mnt/data holds no files, so all 3 objects of gs://b/backup would be deleted; " +
				"an unmounted volume or a mistyped prefix looks exactly like this. Nothing was changed. To empty gs://b/backup on purpose, run 'gcsput rm -r gs://b/backup'"},
		{name: "empty source, even with the limit off", reason: upload.GuardEmptySource, source: 0, dest: 1, del: 1, limit: "100%", want: "holds no files, so the one object of gs://b/backup would be deleted"},
		{name: "filters took nothing", reason: upload.GuardEmptySource, source: 0, dest: 2, del: 2, filtered: true, want: "holds no files that --include/--exclude take"},
		{name: "over the default", reason: upload.GuardOverLimit, source: 4, dest: 30, del: 20,
			want: "refusing to sync --delete: 20 of the 30 objects of gs://b/backup (67%) would be deleted, more than --max-delete allows " +
				"(by default 50% of the destination, or 10 entries if that is more). Nothing was changed. Check that /mnt/data is the source you mean " +
				"('--dry-run' lists the deletes); if they are meant, run again with '--max-delete 20' (or '--max-delete 100%')"},
		{name: "over a count", reason: upload.GuardOverLimit, source: 4, dest: 30, del: 3, limit: "2", want: "more than --max-delete allows (2)"},
		{name: "over a share", reason: upload.GuardOverLimit, source: 4, dest: 30, del: 7, limit: "20%", want: "7 of the 30 objects of gs://b/backup (24%) would be deleted, more than --max-delete allows (20%)"},
		{name: "just over half, shown rounded up", reason: upload.GuardOverLimit, source: 1, dest: 200, del: 101, limit: "50%", want: "101 of the 200 objects of gs://b/backup (51%) would be deleted"},
		{name: "no path shared, within the floor", reason: upload.GuardNoSharedPath, source: 10, dest: 1, del: 1,
			want: "refusing to sync --delete: the one object of gs://b/backup would be deleted: /mnt/data and gs://b/backup share no path, " +
				"as when one of them is mistyped. Nothing was changed. Check that /mnt/data is the source you mean ('--dry-run' lists the deletes); " +
				"if they are meant, run again with '--max-delete 1' (or '--max-delete 100%')"},
		{name: "no path shared, 10 of 10", reason: upload.GuardNoSharedPath, source: 1, dest: 10, del: 10, want: "all 10 objects of gs://b/backup would be deleted: /mnt/data and gs://b/backup share no path"},
	} {
		limit, err := upload.ParseMaxDelete(c.limit)
		if err != nil {
			t.Fatal(err)
		}
		e := &upload.DeleteGuardError{Reason: c.reason, Source: src, Dest: dst, SourceEntries: c.source, DestEntries: c.dest,
			Deletes: c.del, Filtered: c.filtered, Limit: limit}
		if got := guardMessage(e); !strings.Contains(got, c.want) {
			t.Errorf("%s: %s\nwant it to contain %q", c.name, got, c.want)
		}
	}
	down := &upload.DeleteGuardError{Reason: upload.GuardEmptySource, Source: upload.RemoteSide(upload.URL{Bucket: "b", Object: "typo"}),
		Dest: upload.LocalSide("./restore"), DestEntries: 2, Deletes: 2}
	if got := guardMessage(down); !strings.Contains(got, "the source gs://b/typo holds no objects, so all 2 files of ./restore would be deleted") ||
		!strings.HasSuffix(got, "To empty ./restore on purpose, run 'rm -r ./restore'") {
		t.Errorf("download: %v", got)
	}
}
