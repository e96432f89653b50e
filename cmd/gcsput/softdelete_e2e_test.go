package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// rm in a soft-delete bucket says once, on stderr, until when the deleted
// objects can be restored; ls --soft-deleted lists them as URL#GENERATION;
// restore brings back one by name (the generation deleted last), one by
// generation, and with a wildcard and -a every generation, oldest first.
func TestSoftDeleteRmLsRestoreE2E(t *testing.T) {
	e := newE2E(t)
	if err := e.srv.SetSoftDelete("bkt", 7*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	a1, _ := e.srv.PutObject("bkt", "docs/a.txt", []byte("a one"))
	e.srv.PutObject("bkt", "docs/b.txt", []byte("b"))
	r := e.must(nil, "rm", fastRetry, "gs://bkt/docs/a.txt", "gs://bkt/docs/b.txt")
	if r.stdout != "removed gs://bkt/docs/a.txt\nremoved gs://bkt/docs/b.txt\n" {
		t.Errorf("rm stdout %q", r.stdout)
	}
	note := regexp.MustCompile(`^gcsput: gs://bkt keeps deleted objects for 7 days \(soft delete\): they can be restored until (\S+) with 'gcsput restore gs://bkt/OBJECT' \('gcsput ls --soft-deleted gs://bkt/' lists them\)\n$`)
	m := note.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("rm stderr %q; want the soft delete note once", r.stderr)
	}
	if until, err := time.Parse(time.RFC3339, m[1]); err != nil || until.Before(time.Now().Add(7*24*time.Hour-time.Hour)) {
		t.Errorf("restorable until %q (%v); want a week from now", m[1], err)
	}
	a2, _ := e.srv.PutObject("bkt", "docs/a.txt", []byte("a two"))
	e.must(nil, "rm", fastRetry, "gs://bkt/docs/a.txt")

	r = e.must(nil, "ls", fastRetry, "--soft-deleted", "-r", "gs://bkt/")
	gens, _ := e.srv.Generations("bkt", "docs/b.txt")
	want := fmt.Sprintf("gs://bkt/docs/a.txt#%d\ngs://bkt/docs/a.txt#%d\ngs://bkt/docs/b.txt#%d\n", a1.Generation, a2.Generation, gens[0].Generation)
	if r.stdout != want {
		t.Errorf("ls --soft-deleted:\n%s\nwant:\n%s", r.stdout, want)
	}
	if r = e.must(nil, "ls", fastRetry, "-r", "gs://bkt/"); r.stdout != "" {
		t.Errorf("plain ls shows %q", r.stdout)
	}

	// By name: the generation deleted last ("a two").
	r = e.must(nil, "restore", fastRetry, "gs://bkt/docs/a.txt")
	if !strings.HasPrefix(r.stdout, "restored gs://bkt/docs/a.txt#") || string(e.object("docs/a.txt")) != "a two" {
		t.Errorf("restore by name: %q, content %q", r.stdout, e.object("docs/a.txt"))
	}
	// By generation: "a one" replaces it.
	e.must(nil, "restore", fastRetry, fmt.Sprintf("gs://bkt/docs/a.txt#%d", a1.Generation))
	if got := string(e.object("docs/a.txt")); got != "a one" {
		t.Errorf("restore by generation: %q", got)
	}
	// A wildcard matches soft-deleted names; b.txt comes back.
	r = e.must(nil, "restore", fastRetry, "gs://bkt/docs/b*")
	if !strings.HasPrefix(r.stdout, "restored gs://bkt/docs/b.txt#") || string(e.object("docs/b.txt")) != "b" {
		t.Errorf("restore wildcard: %q", r.stdout)
	}
	// Nothing soft-deleted under the name: exit 1, said.
	if r = e.run(nil, "restore", fastRetry, "gs://bkt/nothing"); r.code != 1 || !strings.Contains(r.stderr, "gs://bkt/nothing: no soft-deleted generation") {
		t.Errorf("restore of nothing: exit %d, %q", r.code, r.stderr)
	}
	// A generation with -a is a usage error.
	if r = e.run(nil, "restore", "-a", "gs://bkt/docs/a.txt#1"); r.code != 2 {
		t.Errorf("restore -a URL#GEN: exit %d, %q", r.code, r.stderr)
	}
}

// Without soft delete, rm says nothing more.
func TestRmWithoutSoftDeleteSaysNothingMoreE2E(t *testing.T) {
	e := newE2E(t)
	e.srv.PutObject("bkt", "x", []byte("x"))
	if r := e.must(nil, "rm", fastRetry, "gs://bkt/x"); r.stderr != "" {
		t.Errorf("rm stderr %q", r.stderr)
	}
}

// ls -a lists noncurrent generations in order; stat and cat read one by
// URL#GENERATION.
func TestVersionsLsStatCatE2E(t *testing.T) {
	e := newE2E(t)
	if err := e.srv.SetVersioning("bkt", true); err != nil {
		t.Fatal(err)
	}
	g1, _ := e.srv.PutObject("bkt", "v.txt", []byte("version one"))
	g2, _ := e.srv.PutObject("bkt", "v.txt", []byte("version two"))
	r := e.must(nil, "ls", fastRetry, "-a", "gs://bkt/")
	if want := fmt.Sprintf("gs://bkt/v.txt#%d\ngs://bkt/v.txt#%d\n", g1.Generation, g2.Generation); r.stdout != want {
		t.Errorf("ls -a:\n%s\nwant:\n%s", r.stdout, want)
	}
	old := fmt.Sprintf("gs://bkt/v.txt#%d", g1.Generation)
	if r = e.must(nil, "cat", fastRetry, old); r.stdout != "version one" {
		t.Errorf("cat %s: %q", old, r.stdout)
	}
	if r = e.must(nil, "cat", fastRetry, "gs://bkt/v.txt"); r.stdout != "version two" {
		t.Errorf("cat live: %q", r.stdout)
	}
	r = e.must(nil, "stat", fastRetry, "--json", old)
	if !strings.Contains(r.stdout, fmt.Sprintf(`"generation":%d`, g1.Generation)) || !strings.Contains(r.stdout, `"time_deleted"`) {
		t.Errorf("stat %s: %s", old, r.stdout)
	}
	if r = e.run(nil, "stat", fastRetry, "gs://bkt/v.txt#12345"); r.code != 1 || !strings.Contains(r.stderr, "gs://bkt/v.txt: no such object") {
		t.Errorf("stat of a generation that does not exist: exit %d, %q", r.code, r.stderr)
	}
	if r = e.run(nil, "cat", "-r", "0-1", old); r.code != 2 {
		t.Errorf("cat -r of a generation: exit %d", r.code)
	}
}

// sync --delete and mv (for the source) say once per bucket, on stderr,
// until when what they deleted in a soft-delete bucket can be restored.
func TestSoftDeleteSyncMvNoteE2E(t *testing.T) {
	e := newE2E(t)
	if err := e.srv.SetSoftDelete("bkt", 10*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	e.write("src/keep.txt", 10)
	e.srv.PutObject("bkt", "dst/keep.txt", []byte("old"))
	e.srv.PutObject("bkt", "dst/gone1.txt", []byte("1"))
	r := e.must(nil, "sync", fastRetry, "--delete", "--max-delete", "5", "src", "gs://bkt/dst")
	const lead = "gs://bkt keeps deleted objects for 10 days (soft delete): they can be restored until "
	if n := strings.Count(r.stderr, lead); n != 1 {
		t.Errorf("sync --delete stderr %q; want the soft delete note once", r.stderr)
	}
	if r = e.must(nil, "ls", fastRetry, "--soft-deleted", "-r", "gs://bkt/dst/"); !strings.Contains(r.stdout, "gs://bkt/dst/gone1.txt#") {
		t.Errorf("soft-deleted after sync: %q", r.stdout)
	}
	e.srv.PutObject("bkt", "m/a", []byte("a"))
	e.srv.PutObject("bkt", "m/b", []byte("b"))
	r = e.must(nil, "mv", fastRetry, "gs://bkt/m/a", "gs://bkt/m/b", "gs://bkt/moved/")
	if n := strings.Count(r.stderr, lead); n != 1 {
		t.Errorf("mv stderr %q; want the soft delete note once", r.stderr)
	}
}

// cp -A copies every generation in order; -A with a local side is a usage
// error.
func TestCpAllVersionsE2E(t *testing.T) {
	e := newE2E(t)
	if err := e.srv.SetVersioning("bkt", true); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1", "v2", "v3"} {
		e.srv.PutObject("bkt", "h.txt", []byte(v))
	}
	e.must(nil, "cp", fastRetry, "-A", "gs://bkt/h.txt", "gs://bkt/copy.txt")
	gens, _ := e.srv.Generations("bkt", "copy.txt")
	var got []string
	for _, g := range gens {
		got = append(got, e.must(nil, "cat", fastRetry, fmt.Sprintf("gs://bkt/copy.txt#%d", g.Generation)).stdout)
	}
	if strings.Join(got, ",") != "v1,v2,v3" {
		t.Errorf("copy's generations %q; want v1,v2,v3", got)
	}
	if r := e.run(nil, "cp", "-A", "gs://bkt/h.txt", "local.txt"); r.code != 2 || !strings.Contains(r.stderr, "-A copies every generation between gs:// locations") {
		t.Errorf("cp -A to a local file: exit %d, %q", r.code, r.stderr)
	}
}
