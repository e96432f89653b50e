package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// seedDocs puts the objects the wildcard tests match against; each holds its
// own name.
func (e *e2e) seedDocs() {
	e.t.Helper()
	for _, n := range []string{"docs/a.txt", "docs/ab.txt", "docs/b.txt", "docs/c.md", "docs/old/d.txt", "docs/old/e.md", "logs/x.txt"} {
		if _, err := e.srv.PutObject("bkt", n, []byte(n+"\n")); err != nil {
			e.t.Fatal(err)
		}
	}
}

// names lists the bucket's objects.
func (e *e2e) names() []string {
	e.t.Helper()
	n, err := e.srv.ObjectNames("bkt")
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// wantOut runs gcsput, wants exit 0 and exactly this stdout.
func (e *e2e) wantOut(want string, args ...string) {
	e.t.Helper()
	r := e.run(nil, args...)
	if r.code != 0 || r.stdout != want {
		e.t.Errorf("gcsput %s: exit %d\nstdout %q\n  want %q\nstderr %s", strings.Join(args, " "), r.code, r.stdout, want, r.stderr)
	}
}

func TestWildcardLs(t *testing.T) {
	e := newE2E(t)
	e.seedDocs()
	e.srv.ResetStats()
	e.wantOut("gs://bkt/docs/a.txt\ngs://bkt/docs/ab.txt\ngs://bkt/docs/b.txt\n", "ls", "gs://bkt/docs/*.txt")
	if n := e.srv.Stats().GlobLists; n != 1 {
		t.Errorf("ls docs/*.txt: %d listings with matchGlob, want 1", n)
	}
	e.wantOut("gs://bkt/docs/a.txt\ngs://bkt/docs/b.txt\n", "ls", "gs://bkt/docs/?.txt")
	e.wantOut("gs://bkt/docs/a.txt\ngs://bkt/docs/b.txt\n", "ls", "gs://bkt/docs/[ab].txt")
	e.wantOut("gs://bkt/docs/c.md\ngs://bkt/docs/old/\n", "ls", "gs://bkt/docs/[!ab]*")
	// gsutil's **: every .txt under docs/ at any depth; and under any top folder.
	e.wantOut("gs://bkt/docs/a.txt\ngs://bkt/docs/ab.txt\ngs://bkt/docs/b.txt\ngs://bkt/docs/old/d.txt\n", "ls", "gs://bkt/docs/**.txt")
	e.wantOut("gs://bkt/docs/old/d.txt\n", "ls", "gs://bkt/**/d.txt")
	e.wantOut("gs://bkt/docs/a.txt\ngs://bkt/docs/b.txt\ngs://bkt/logs/x.txt\n", "ls", "gs://bkt/*/?.txt")
	// A folder the last segment matches is shown once; with -r, what it holds.
	e.wantOut("gs://bkt/docs/c.md\ngs://bkt/docs/old/\n", "ls", "gs://bkt/docs/[co]*")
	e.wantOut("gs://bkt/docs/c.md\ngs://bkt/docs/old/d.txt\ngs://bkt/docs/old/e.md\n", "ls", "-r", "gs://bkt/docs/[co]*")
	if st := e.srv.Stats(); st.GlobLists != 9 {
		t.Errorf("%d of %d listings used matchGlob, want 9", st.GlobLists, st.Requests["storage.objects.list"])
	}
}

func TestWildcardCatStat(t *testing.T) {
	e := newE2E(t)
	e.seedDocs()
	// Many matches are written in name order.
	e.wantOut("docs/a.txt\ndocs/ab.txt\ndocs/b.txt\n", "cat", "gs://bkt/docs/*.txt")
	e.wantOut("docs/a.txt\ndocs/old/d.txt\n", "cat", "gs://bkt/docs/**/[ad].txt")
	r := e.must(nil, "stat", "--json", "gs://bkt/docs/?.md", "gs://bkt/docs/old/*")
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		names = append(names, strings.SplitN(strings.SplitN(line, `"url":"`, 2)[1], `"`, 2)[0])
	}
	if got := strings.Join(names, " "); got != "gs://bkt/docs/c.md gs://bkt/docs/old/d.txt gs://bkt/docs/old/e.md" {
		t.Errorf("stat matched %s", got)
	}
}

func TestWildcardDu(t *testing.T) {
	e := newE2E(t)
	e.seedDocs()
	e.wantOut("11           gs://bkt/docs/a.txt\n12           gs://bkt/docs/ab.txt\n", "du", "gs://bkt/docs/a*")
	// A matched folder counts whole.
	e.wantOut("10           gs://bkt/docs/c.md\n15           gs://bkt/docs/old/d.txt\n14           gs://bkt/docs/old/e.md\n", "du", "gs://bkt/docs/[co]*")
	e.wantOut("39           gs://bkt/docs/[co]*\n", "du", "-s", "gs://bkt/docs/[co]*")
}

func TestWildcardRm(t *testing.T) {
	e := newE2E(t)
	e.seedDocs()
	e.wantOut("removed gs://bkt/docs/a.txt\nremoved gs://bkt/docs/b.txt\n", "rm", "gs://bkt/docs/?.txt")
	e.wantOut("would remove gs://bkt/docs/old/d.txt\nwould remove gs://bkt/docs/old/e.md\n", "rm", "-r", "--dry-run", "gs://bkt/docs/o*")
	e.wantOut("removed gs://bkt/docs/c.md\nremoved gs://bkt/docs/old/d.txt\nremoved gs://bkt/docs/old/e.md\n", "rm", "-r", "gs://bkt/docs/[co]*")
	if got := strings.Join(e.names(), " "); got != "docs/ab.txt logs/x.txt" {
		t.Errorf("left: %s", got)
	}
}

func TestWildcardCpDownload(t *testing.T) {
	e := newE2E(t)
	e.seedDocs()
	e.must(nil, "cp", "gs://bkt/docs/*.txt", "out")
	e.must(nil, "cp", "gs://bkt/docs/**.md", "md/")
	// With -r a matched folder comes whole, under its own name.
	e.must(nil, "cp", "-r", "gs://bkt/docs/[co]*", "rec/")
	for rel, want := range map[string]string{
		"out/a.txt": "docs/a.txt\n", "out/ab.txt": "docs/ab.txt\n", "out/b.txt": "docs/b.txt\n",
		"md/c.md": "docs/c.md\n", "md/e.md": "docs/old/e.md\n",
		"rec/c.md": "docs/c.md\n", "rec/old/d.txt": "docs/old/d.txt\n", "rec/old/e.md": "docs/old/e.md\n",
	} {
		if b, err := os.ReadFile(filepath.Join(e.dir, rel)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", rel, b, err, want)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(e.dir, "out")); len(ents) != 3 {
		t.Errorf("out/ holds %d entries, want the 3 matches", len(ents))
	}
	r := e.run(nil, "cp", "gs://bkt/docs/*.txt", "-")
	if r.code != 2 || !strings.Contains(r.stderr, "'gcsput cat gs://bkt/docs/*.txt' writes every match") {
		t.Errorf("cp wildcard to stdout: exit %d, %s", r.code, r.stderr)
	}
}

func TestWildcardCpUploadQuoted(t *testing.T) {
	e := newE2E(t)
	for _, n := range []string{"src/a.txt", "src/b.txt", "src/c.md", "src/sub/d.txt"} {
		e.write(n, 100+len(n))
	}
	// The quotes keep the shell from expanding: gcsput does.
	e.must(nil, "cp", "src/*.txt", "gs://bkt/up")
	e.must(nil, "cp", "src/**.txt", "gs://bkt/all/")
	e.must(nil, "cp", "-r", "src/s*", "gs://bkt/rec/")
	want := "all/a.txt all/b.txt all/d.txt rec/sub/d.txt up/a.txt up/b.txt"
	if got := strings.Join(e.names(), " "); got != want {
		t.Errorf("objects:\n got %s\nwant %s", got, want)
	}
	r := e.must(nil, "cp", "src/*", "gs://bkt/top/")
	if !strings.Contains(r.stderr, "omitting directory src/sub (matched by src/*): add -r") {
		t.Errorf("a matched directory without -r: %s", r.stderr)
	}
	// Two matches that would land on one object are refused before anything is sent.
	e.write("src/sub/a.txt", 7)
	r = e.run(nil, "cp", "src/**a.txt", "gs://bkt/clash/")
	if r.code != 2 || !strings.Contains(r.stderr, "src/a.txt and src/sub/a.txt would both be copied to gs://bkt/clash/a.txt") {
		t.Errorf("collision: exit %d, %s", r.code, r.stderr)
	}
	for _, n := range e.names() {
		if strings.HasPrefix(n, "clash/") {
			t.Errorf("%s was uploaded", n)
		}
	}
}

// A pattern that matches nothing is an error naming it, before anything is done.
func TestWildcardNoMatch(t *testing.T) {
	e := newE2E(t)
	e.seedDocs()
	e.write("src/a.txt", 10)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"ls", "gs://bkt/docs/*.pdf"}, 1, "gcsput: no objects match gs://bkt/docs/*.pdf\n"},
		{[]string{"cp", "gs://bkt/docs/*.pdf", "out/"}, 1, "gcsput: no objects match gs://bkt/docs/*.pdf\n"},
		{[]string{"stat", "gs://bkt/docs/a.txt", "gs://bkt/docs/?.pdf"}, 1, "gcsput: no objects match gs://bkt/docs/?.pdf\n"},
		{[]string{"cat", "gs://bkt/docs/[xyz].txt"}, 1, "gcsput: no objects match gs://bkt/docs/[xyz].txt\n"},
		{[]string{"du", "gs://bkt/nope/**"}, 1, "gcsput: no objects match gs://bkt/nope/**\n"},
		{[]string{"rm", "gs://bkt/docs/a.txt", "gs://bkt/docs/*.pdf"}, 1, "gcsput: no objects match gs://bkt/docs/*.pdf\n"},
		// Buckets are named, not matched.
		{[]string{"ls", "gs://bk*/docs/a.txt"}, 2, `gcsput ls: bad bucket name "bk*": wildcards in bucket names are not supported: name the bucket`},
		// A local pattern fails as a missing local file does: a usage error.
		{[]string{"cp", "src/*.pdf", "gs://bkt/up/"}, 2, "gcsput cp: no files match src/*.pdf\n"},
	} {
		r := e.run(nil, tc.args...)
		if r.code != tc.code || !strings.HasPrefix(r.stderr, tc.msg) || r.stdout != "" {
			t.Errorf("gcsput %s: exit %d, stdout %q, stderr %q; want exit %d, %q",
				strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.code, tc.msg)
		}
	}
	// rm deleted nothing: docs/a.txt was named with a pattern that matched nothing.
	if _, _, err := e.srv.Object("bkt", "docs/a.txt"); err != nil {
		t.Errorf("rm deleted docs/a.txt although another operand matched nothing: %v", err)
	}
}

// mv takes wildcards as cp does: every match moves, into a directory or a
// folder, and what does not match stays where it was.
func TestWildcardMv(t *testing.T) {
	e := newE2E(t)
	e.seedDocs()
	e.must(nil, "mv", "gs://bkt/docs/?.txt", "out")
	for _, n := range []string{"a.txt", "b.txt"} {
		got, err := os.ReadFile(filepath.Join(e.dir, "out", n))
		if err != nil || string(got) != "docs/"+n+"\n" {
			t.Errorf("out/%s: %q, %v", n, got, err)
		}
	}
	e.must(nil, "mv", "gs://bkt/docs/**.md", "gs://bkt/notes")
	want := "docs/ab.txt docs/old/d.txt logs/x.txt notes/c.md notes/e.md"
	if got := strings.Join(e.names(), " "); got != want {
		t.Errorf("after the moves the bucket holds %s\nwant %s", got, want)
	}
	if r := e.run(nil, "mv", "gs://bkt/docs/*.pdf", "out"); r.code != exitFailed || !strings.Contains(r.stderr, "no objects match gs://bkt/docs/*.pdf") {
		t.Errorf("mv of a pattern that matches nothing: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Wildcard matches that would land on one local path are refused, as cp's help says,
// before anything is sent: exit 2 naming both, no file written, no media served. Three
// shapes: two objects of one base name under "**", the same name matched by two patterns,
// and (with -r) an object and a folder of one name.
func TestWildcardCpDownloadCollisionRefused(t *testing.T) {
	e := newE2E(t)
	e.seedDocs()
	for _, n := range []string{"docs/old/a.txt", "logs/b.txt", "logs/old"} {
		if _, err := e.srv.PutObject("bkt", n, []byte(n+"\n")); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gs://bkt/docs/**a.txt", "out/"},
			"gs://bkt/docs/a.txt and gs://bkt/docs/old/a.txt would both be downloaded to " + filepath.Join("out", "a.txt")},
		{[]string{"gs://bkt/docs/*.txt", "gs://bkt/logs/*.txt", "out/"},
			"gs://bkt/docs/b.txt and gs://bkt/logs/b.txt would both be downloaded to " + filepath.Join("out", "b.txt")},
		{[]string{"-r", "gs://bkt/docs/ol*", "gs://bkt/logs/ol*", "out/"},
			"gs://bkt/docs/old/ and gs://bkt/logs/old would both be downloaded to " + filepath.Join("out", "old")},
	} {
		if err := os.RemoveAll(filepath.Join(e.dir, "out")); err != nil {
			t.Fatal(err)
		}
		e.srv.ResetStats()
		r := e.run(nil, append([]string{"cp"}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("cp %s: exit %d, stderr:\n%s\nwant exit 2 and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
		for _, q := range e.srv.Log() {
			if q.Phase == fakegcs.PhaseMedia {
				t.Errorf("cp %s: fakegcs served media: %s %s", strings.Join(tc.args, " "), q.Method, q.Path)
			}
		}
		if ents, err := os.ReadDir(filepath.Join(e.dir, "out")); len(ents) != 0 || !os.IsNotExist(err) {
			t.Errorf("cp %s: out/ holds %d entries (%v), want no out/ at all", strings.Join(tc.args, " "), len(ents), err)
		}
	}
}

// A gs:// wildcard copied between gs:// locations gives the objects it matches, as cp's
// help says, each into the destination folder under its base name ("**" flattens; with
// -r a matched folder comes whole under its own name). It was taken for one object's
// name: "copy: gs://bkt/docs/**.md: no such object", exit 1, nothing copied. Two
// matches that would land on one object are refused before anything is copied.
func TestWildcardCpBetweenBuckets(t *testing.T) {
	e := newE2E(t)
	e.seedDocs()
	e.must(nil, "cp", "gs://bkt/docs/**.md", "gs://bkt/notes")
	e.must(nil, "cp", "-r", "gs://bkt/docs/o*", "gs://bkt/logs/?.txt", "gs://bkt/rec/")
	want := "docs/a.txt docs/ab.txt docs/b.txt docs/c.md docs/old/d.txt docs/old/e.md logs/x.txt " +
		"notes/c.md notes/e.md rec/old/d.txt rec/old/e.md rec/x.txt"
	if got := strings.Join(e.names(), " "); got != want {
		t.Errorf("after the copies the bucket holds %s\nwant %s", got, want)
	}
	if data, _, err := e.srv.Object("bkt", "notes/e.md"); err != nil || string(data) != "docs/old/e.md\n" {
		t.Errorf("notes/e.md: %q, %v", data, err)
	}
	r := e.run(nil, "cp", "gs://bkt/docs/**a.txt", "gs://bkt/docs/old/d.txt", "gs://bkt/logs/*", "gs://bkt/flat/")
	if r.code != 0 {
		t.Errorf("cp of distinct matches: exit %d, %s", r.code, r.stderr)
	}
	if _, err := e.srv.PutObject("bkt", "docs/old/a.txt", []byte("old a\n")); err != nil {
		t.Fatal(err)
	}
	r = e.run(nil, "cp", "gs://bkt/docs/**a.txt", "gs://bkt/twice/")
	if msg := "gs://bkt/docs/a.txt and gs://bkt/docs/old/a.txt would both be copied to gs://bkt/twice/a.txt"; r.code != 2 || !strings.Contains(r.stderr, msg) {
		t.Errorf("cp of two matches onto one object: exit %d, stderr:\n%s\nwant exit 2 and %q", r.code, r.stderr, msg)
	}
	if got := strings.Join(e.names(), " "); strings.Contains(got, "twice/") {
		t.Errorf("a refused copy wrote %s", got)
	}
}
