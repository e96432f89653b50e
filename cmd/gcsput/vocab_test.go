package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// A gsutil or gcloud storage user's spellings, through the built binary (issue 25).

// rsync is sync, with gsutil's flags: -r accepted, -d deletes what the source lacks, -x
// leaves a regex's matches alone on both sides, -n is a dry run.
func TestE2ERsyncGsutilFlags(t *testing.T) {
	e := newE2E(t)
	a := e.write("dir/a.txt", 300)
	b := e.write("dir/sub/b.txt", 200)
	e.write("dir/skip.tmp", 50)
	e.srv.PutObject("bkt", "p/a.txt", []byte("old a"))
	e.srv.PutObject("bkt", "p/extra.txt", []byte("gone from the source"))
	e.srv.PutObject("bkt", "p/old.tmp", []byte("excluded: kept"))

	r := e.run(nil, "rsync", "-n", "-d", "dir", "gs://bkt/p")
	if r.code != 0 || !strings.Contains(r.stdout, "would copy") || !strings.Contains(r.stdout, "would delete") {
		t.Fatalf("rsync -n: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := e.object("p/a.txt"); string(got) != "old a" {
		t.Fatalf("rsync -n changed p/a.txt: %q", got)
	}

	e.must(nil, "rsync", "-r", "-d", "-x", `.*\.tmp$`, fastRetry, "dir", "gs://bkt/p")
	if !bytes.Equal(e.object("p/a.txt"), a) || !bytes.Equal(e.object("p/sub/b.txt"), b) {
		t.Error("rsync -r -d: the objects differ from the files")
	}
	names, _ := e.srv.ObjectNames("bkt")
	want := "p/a.txt p/old.tmp p/sub/b.txt"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("after rsync -r -d -x: objects %q, want %q (extra.txt deleted, skip.tmp not sent, old.tmp kept)", got, want)
	}
}

// gcloud storage rsync's flags: --recursive, --delete-unmatched-destination-objects,
// --exclude; and gcloud's regex --exclude is refused with the hint to use -x.
func TestE2ESyncGcloudFlags(t *testing.T) {
	e := newE2E(t)
	a := e.write("dir/a.txt", 100)
	e.write("dir/c.tmp", 10)
	e.srv.PutObject("bkt", "q/a.txt", []byte("stale"))
	e.srv.PutObject("bkt", "q/b.txt", []byte("gone from the source"))
	e.must(nil, "rsync", "--recursive", "--delete-unmatched-destination-objects", "--exclude", "*.tmp", fastRetry, "dir", "gs://bkt/q")
	names, _ := e.srv.ObjectNames("bkt")
	if got := strings.Join(names, " "); got != "q/a.txt" || !bytes.Equal(e.object("q/a.txt"), a) {
		t.Errorf("objects %q after a gcloud-style rsync, want q/a.txt with the file's bytes", got)
	}
	r := e.run(nil, "rsync", "--recursive", "--exclude", `.*\.tmp$`, "dir", "gs://bkt/q")
	if r.code != exitUsage || !strings.Contains(r.stderr, `--exclude '.*\\.tmp$': looks like a regular expression`) || !strings.Contains(r.stderr, "use -x/--exclude-regex") {
		t.Errorf("a regex --exclude: exit %d, stderr %q", r.code, r.stderr)
	}
	r = e.run(nil, "rsync", "--help")
	for _, s := range []string{"gcsput rsync [flags] SRC DST", "-n, --dry-run", "cp's -n is no-clobber", "-d, --delete, --delete-unmatched-destination-objects", "-x, --exclude-regex REGEX"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("rsync --help lacks %q", s)
		}
	}
}

// du -sh and du -s -h print one total as gsutil du -sh does; du -h each object.
func TestE2EDuHuman(t *testing.T) {
	e := newE2E(t)
	e.srv.PutObject("bkt", "p/a", bytes.Repeat([]byte("a"), 1536))
	e.srv.PutObject("bkt", "p/b", bytes.Repeat([]byte("b"), 100))
	for _, flags := range [][]string{{"-sh"}, {"-s", "-h"}} {
		r := e.must(nil, append(append([]string{"du"}, flags...), "gs://bkt/p/")...)
		if r.stdout != "1.6 KiB      gs://bkt/p/\n" {
			t.Errorf("du %v: %q", flags, r.stdout)
		}
	}
	if r := e.must(nil, "du", "-h", "gs://bkt/p/"); r.stdout != "1.5 KiB      gs://bkt/p/a\n100 B        gs://bkt/p/b\n" {
		t.Errorf("du -h: %q", r.stdout)
	}
}

// ls -lh writes sizes as gsutil ls -lh does, and the total with them.
func TestE2ELsLongHuman(t *testing.T) {
	e := newE2E(t)
	e.srv.PutObject("bkt", "p/a", bytes.Repeat([]byte("a"), 1536))
	e.srv.PutObject("bkt", "p/b", bytes.Repeat([]byte("b"), 100))
	r := e.must(nil, "ls", "-lh", "gs://bkt/p/")
	want := regexp.MustCompile(`^   1\.5 KiB  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  gs://bkt/p/a\n` +
		`     100 B  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  gs://bkt/p/b\n` +
		`TOTAL: 2 objects, 1636 bytes \(1\.6 KiB\)\n$`)
	if !want.MatchString(r.stdout) {
		t.Errorf("ls -lh:\n%s", r.stdout)
	}
}

// An unknown command or flag names the nearest one.
func TestE2EDidYouMean(t *testing.T) {
	e := newE2E(t)
	e.write("dir/a.txt", 10)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rsinc", "dir", "gs://bkt/p"}, "gcsput: unknown command \"rsinc\"; did you mean \"rsync\"?\n"},
		{[]string{"sync", "--delet", "dir", "gs://bkt/p"}, "gcsput sync: flag provided but not defined: --delet; did you mean --delete?\n"},
		{[]string{"rsync", "--dryrun", "dir", "gs://bkt/p"}, "gcsput rsync: flag provided but not defined: --dryrun; did you mean --dry-run?\n"},
		{[]string{"cp", "--recursiv", "dir", "gs://bkt/p"}, "gcsput cp: flag provided but not defined: --recursiv; did you mean --recursive?\n"},
		{[]string{"setmeta", "gs://bkt/p"}, `gsutil's setmeta is "gcsput meta set"`},
	} {
		r := e.run(nil, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if n := e.srv.Count("storage.objects.insert"); n != 0 {
		t.Errorf("%d uploads after usage errors", n)
	}
}
