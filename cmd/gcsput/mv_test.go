package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// mv's tests: each direction moves the bytes and removes the source; under a fault at
// each step (copy, verify, delete) the source stays, so both exist or exactly one, never
// neither.

// hooked puts a front on e's server that calls before (once) ahead of the first request
// it matches, and makes it the server gcsput talks to: a test acts "between two steps" of
// a move (another process writing the source) deterministically, with no timing.
func (e *e2e) hooked(match func(r *http.Request) bool, before func()) {
	e.t.Helper()
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if match(r) {
			once.Do(before)
		}
		e.srv.ServeHTTP(w, r)
	}))
	e.t.Cleanup(ts.Close)
	e.front = ts.Listener.Addr().String()
}

// metadataGet matches the JSON API's metadata read of name, in any bucket
// (not a download).
func metadataGet(name string) func(r *http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodGet && r.URL.Query().Get("alt") != "media" &&
			strings.HasSuffix(r.URL.EscapedPath(), "/o/"+name)
	}
}

// deleteOf matches the delete of bkt/name.
func deleteOf(name string) func(r *http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(r.URL.EscapedPath(), "/b/bkt/o/"+name)
	}
}

// has reports whether the object bkt/name exists.
func (e *e2e) has(name string) bool {
	_, err := e.srv.Attrs("bkt", name)
	return err == nil
}

// localHas reports whether the local file rel exists.
func (e *e2e) localHas(rel string) bool {
	_, err := os.Stat(filepath.Join(e.dir, rel))
	return err == nil
}

// neverNeither fails unless the source or the destination (or both) still exists.
func neverNeither(t *testing.T, src, dst bool, what string) {
	t.Helper()
	if !src && !dst {
		t.Fatalf("%s: neither the source nor the destination exists", what)
	}
}

func TestE2EMvEachDirection(t *testing.T) {
	e := newE2E(t)
	up := e.write("up.bin", 300<<10)
	r := e.must(nil, "mv", fastRetry, "up.bin", "gs://bkt/a/up.bin")
	if !bytes.Equal(e.object("a/up.bin"), up) || e.localHas("up.bin") {
		t.Fatalf("local -> gs: object equal %v, local source still there %v", bytes.Equal(e.object("a/up.bin"), up), e.localHas("up.bin"))
	}
	if !strings.Contains(r.stdout, "moved") || !strings.Contains(r.stderr, "1 file: 1 moved, 0 failed") {
		t.Fatalf("local -> gs output:\n%s\n%s", r.stdout, r.stderr)
	}
	e.must(nil, "mv", fastRetry, "gs://bkt/a/up.bin", "gs://bkt/b/across.bin")
	if !bytes.Equal(e.object("b/across.bin"), up) || e.has("a/up.bin") {
		t.Fatalf("gs -> gs: destination equal %v, source still there %v", bytes.Equal(e.object("b/across.bin"), up), e.has("a/up.bin"))
	}
	e.must(nil, "mv", fastRetry, "gs://bkt/b/across.bin", "down/")
	got, err := os.ReadFile(filepath.Join(e.dir, "down", "across.bin"))
	if err != nil || !bytes.Equal(got, up) || e.has("b/across.bin") {
		t.Fatalf("gs -> local: %v, equal %v, source still there %v", err, bytes.Equal(got, up), e.has("b/across.bin"))
	}
}

func TestE2EMvPrefix(t *testing.T) {
	e := newE2E(t)
	want := map[string][]byte{}
	for _, rel := range []string{"tree/a.txt", "tree/sub/b.bin", "tree/sub/deeper/c.bin"} {
		want[strings.TrimPrefix(rel, "tree/")] = e.write(rel, 1000+len(rel)*4099)
	}
	r := e.must(nil, "mv", fastRetry, "--json", "-r", "tree", "gs://bkt/up/")
	files, sum := jsonLines(t, r.stdout)
	if sum.Moved != 3 || sum.Failed != 0 || sum.Files != 3 {
		t.Fatalf("summary %+v", sum)
	}
	for dst, rec := range files {
		if rec.Op != "move" || rec.Status != "moved" || rec.CRC32C == "" {
			t.Errorf("%s: %+v", dst, rec)
		}
	}
	if e.localHas("tree") {
		t.Fatal("the moved directory is still there")
	}
	e.must(nil, "mv", fastRetry, "-r", "gs://bkt/up/tree", "gs://bkt/other/")
	e.must(nil, "mv", fastRetry, "-r", "gs://bkt/other/tree/", "back")
	for rel, b := range want {
		got, err := os.ReadFile(filepath.Join(e.dir, "back", filepath.FromSlash(rel)))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("back/%s: %v, equal %v", rel, err, bytes.Equal(got, b))
		}
	}
	if names, _ := e.srv.ObjectNames("bkt"); len(names) != 0 {
		t.Fatalf("objects left after moving everything back: %v", names)
	}
}

// mvFault is one fault at one step of one direction of a move, and what must remain.
type mvFault struct {
	name   string
	dir    string // "up", "down" or "across"
	faults []fakegcs.Fault
	hook   func(e *e2e) // arms e.hooked, or nil
	// what must exist afterwards, and words the failure must say
	src, dst bool
	says     []string
}

func TestE2EMvFaultsAtEachStep(t *testing.T) {
	get := func(name string) fakegcs.Fault {
		return fakegcs.Fault{Op: "storage.objects.get", Object: name, Kind: fakegcs.KindStatus, Status: 503, Times: -1}
	}
	del := func(status int) fakegcs.Fault {
		return fakegcs.Fault{Op: "storage.objects.delete", Object: "src.bin", Kind: fakegcs.KindStatus, Status: status, Times: -1}
	}
	overwriteIn := func(bucket, name string, match func(name string) func(*http.Request) bool) func(e *e2e) {
		return func(e *e2e) {
			e.hooked(match(name), func() {
				if _, err := e.srv.PutObject(bucket, name, []byte("written by someone else")); err != nil {
					t.Error(err)
				}
			})
		}
	}
	overwrite := func(name string, match func(name string) func(*http.Request) bool) func(e *e2e) {
		return overwriteIn("bkt", name, match)
	}
	cases := []mvFault{
		{name: "up copy fails", dir: "up", src: true,
			faults: []fakegcs.Fault{{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 503, Times: -1}},
			says:   []string{"src.bin -> gs://bkt/dst.bin", "503"}},
		{name: "up verify fails", dir: "up", src: true, dst: true, faults: []fakegcs.Fault{get("dst.bin")},
			says: []string{"verifying gs://bkt/dst.bin", "the source was kept"}},
		{name: "up verify mismatch", dir: "up", src: true, dst: true, hook: overwrite("dst.bin", metadataGet),
			says: []string{"gs://bkt/dst.bin was replaced after the copy", "the source was kept"}},
		{name: "down copy fails", dir: "down", src: true, faults: []fakegcs.Fault{get("src.bin")},
			says: []string{"gs://bkt/src.bin -> ", "503"}},
		{name: "down verify mismatch", dir: "down", src: true,
			faults: []fakegcs.Fault{{Op: "storage.objects.get", Object: "src.bin", Kind: fakegcs.KindCorrupt, Times: -1}},
			says:   []string{"checksum"}},
		{name: "down delete 503", dir: "down", src: true, dst: true, faults: []fakegcs.Fault{del(503)},
			says: []string{"deleting gs://bkt/src.bin", "503", "the source was kept"}},
		{name: "down delete 412", dir: "down", src: true, dst: true, faults: []fakegcs.Fault{del(412)},
			says: []string{"gs://bkt/src.bin changed since it was copied", "the source was kept"}},
		{name: "across copy fails", dir: "across", src: true,
			faults: []fakegcs.Fault{{Op: "storage.objects.rewrite", Kind: fakegcs.KindStatus, Status: 503, Times: -1}},
			says:   []string{"copying gs://bkt/src.bin to gs://dst/dst.bin", "503"}},
		{name: "across verify fails", dir: "across", src: true, dst: true, faults: []fakegcs.Fault{get("dst.bin")},
			says: []string{"verifying gs://dst/dst.bin", "the source was kept"}},
		{name: "across verify mismatch", dir: "across", src: true, dst: true, hook: overwriteIn("dst", "dst.bin", metadataGet),
			says: []string{"gs://dst/dst.bin was replaced after the copy", "the source was kept"}},
		{name: "across delete 503", dir: "across", src: true, dst: true, faults: []fakegcs.Fault{del(503)},
			says: []string{"deleting gs://bkt/src.bin", "503", "the source was kept"}},
		{name: "across delete 412", dir: "across", src: true, dst: true, faults: []fakegcs.Fault{del(412)},
			says: []string{"gs://bkt/src.bin changed since it was copied", "the source was kept"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runMvFault(t, c) })
	}
}

// runMvFault sets the source up, arms the case's faults and runs the move.
func runMvFault(t *testing.T, c mvFault) {
	e := newE2E(t)
	data := e.write("src.bin", 200<<10)
	args := []string{"mv", fastRetry}
	srcHas, dstHas := func() bool { return e.localHas("src.bin") }, func() bool { return e.has("dst.bin") }
	switch c.dir {
	case "up":
		args = append(args, "src.bin", "gs://bkt/dst.bin")
	case "down":
		args = append(args, "gs://bkt/src.bin", "dst.bin")
		srcHas, dstHas = func() bool { return e.has("src.bin") }, func() bool { return e.localHas("dst.bin") }
	case "across": // two buckets: inside one, a move is one objects.move call (TestE2EMvInBucketIsOneCall)
		if err := e.srv.CreateBucket("dst"); err != nil {
			t.Fatal(err)
		}
		args = append(args, "gs://bkt/src.bin", "gs://dst/dst.bin")
		srcHas = func() bool { return e.has("src.bin") }
		dstHas = func() bool { _, err := e.srv.Attrs("dst", "dst.bin"); return err == nil }
	}
	if c.dir != "up" {
		if _, err := e.srv.PutObject("bkt", "src.bin", data); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range c.faults {
		e.srv.Inject(f)
	}
	if c.hook != nil {
		c.hook(e)
	}
	r := e.run(nil, args...)
	t.Logf("%s", r.stderr)
	src, dst := srcHas(), dstHas()
	neverNeither(t, src, dst, c.name)
	if r.code != exitFailed || src != c.src || dst != c.dst {
		t.Fatalf("exit %d (want 1), source there %v (want %v), destination there %v (want %v)\n%s", r.code, src, c.src, dst, c.dst, r.stderr)
	}
	for _, w := range append(c.says, "gcsput: failed: ", "1 file: 1 failed") {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
		}
	}
}
