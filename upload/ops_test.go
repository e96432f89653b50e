package upload_test

// The acceptance's test program: what 'gcsput cp' with several operands and
// wildcards, 'gcsput mv -r' with several operands, and 'gcsput sync' do, each
// in one call of the exported API, against an in-process fakegcs.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/upload"
)

// opsClient is a Client of a fakegcs with the buckets "src" and "dst".
func opsClient(t *testing.T) (*fakegcs.Server, *upload.Client) {
	t.Helper()
	srv, err := fakegcs.New(fakegcs.Options{Buckets: []string{"src", "dst"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := upload.New(context.Background(), upload.Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true}, NoState: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, c
}

// tree writes files (path relative to dir -> content) under dir.
func tree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// objects is every object of bucket as "name=content", in name order.
func objects(t *testing.T, srv *fakegcs.Server, bucket string) []string {
	t.Helper()
	names, err := srv.ObjectNames(bucket)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		data, _, err := srv.Object(bucket, n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n+"="+string(data))
	}
	slices.Sort(out)
	return out
}

func statuses(rs []*upload.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Status)+" "+r.Dest)
	}
	slices.Sort(out)
	return out
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// cp 'DIR/*.log' DIR/c.txt gs://dst/in, then cp 'gs://dst/in/*.log' OUT,
// then cp -r 'gs://src/logs/**.log' gs://src/keep gs://dst/copied.
func TestCopyAllSeveralOperandsAndWildcards(t *testing.T) {
	srv, c := opsClient(t)
	ctx := context.Background()
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a.log": "alpha", "b.log": "bravo", "c.txt": "charlie", "sub/d.log": "delta"})

	// A quoted local wildcard and a file: the destination is a folder.
	results, err := c.CopyAll(ctx, []string{filepath.Join(dir, "*.log"), filepath.Join(dir, "c.txt")}, "gs://dst/in", upload.CopyAllOptions{})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "upload results", statuses(results), []string{"uploaded gs://dst/in/a.log", "uploaded gs://dst/in/b.log", "uploaded gs://dst/in/c.txt"})
	same(t, "gs://dst after the upload", objects(t, srv, "dst"), []string{"in/a.log=alpha", "in/b.log=bravo", "in/c.txt=charlie"})

	// A gs:// wildcard downloaded into a directory that does not exist yet.
	out := filepath.Join(t.TempDir(), "out")
	results, err = c.CopyAll(ctx, []string{"gs://dst/in/*.log"}, out, upload.CopyAllOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("download: %d results, want 2: %q", len(results), statuses(results))
	}
	for name, want := range map[string]string{"a.log": "alpha", "b.log": "bravo"} {
		if got, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "c.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("c.txt was downloaded though *.log does not match it (stat: %v)", err)
	}

	// Server-side copies: a "**" wildcard flattens, a folder (Recursive) keeps its name.
	srv.PutObject("src", "logs/x.log", []byte("x-ray"))
	srv.PutObject("src", "logs/deep/y.log", []byte("yankee"))
	srv.PutObject("src", "logs/z.txt", []byte("zulu"))
	srv.PutObject("src", "keep/k1", []byte("kilo"))
	results, err = c.CopyAll(ctx, []string{"gs://src/logs/**.log", "gs://src/keep"}, "gs://dst/copied", upload.CopyAllOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "copy results", statuses(results), []string{"copied gs://dst/copied/keep/k1", "copied gs://dst/copied/x.log", "copied gs://dst/copied/y.log"})
	same(t, "gs://dst after the copy", objects(t, srv, "dst"), []string{
		"copied/keep/k1=kilo", "copied/x.log=x-ray", "copied/y.log=yankee",
		"in/a.log=alpha", "in/b.log=bravo", "in/c.txt=charlie"})
}

// What CopyAll refuses, it refuses before anything is sent.
func TestCopyAllRefusesBeforeSending(t *testing.T) {
	srv, c := opsClient(t)
	ctx := context.Background()
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a.txt": "a", "sub/a.txt": "a too"})
	for _, tt := range []struct {
		srcs []string
		dst  string
		o    upload.CopyAllOptions
		is   error
		msg  string
	}{
		{[]string{filepath.Join(dir, "a.txt"), filepath.Join(dir, "sub", "a.txt")}, "gs://dst/x/", upload.CopyAllOptions{},
			upload.ErrBadOperand, "would both be copied to gs://dst/x/a.txt"},
		{[]string{filepath.Join(dir, "sub")}, "gs://dst/", upload.CopyAllOptions{},
			upload.ErrBadOperand, "is a directory: add -r"},
		{[]string{filepath.Join(dir, "missing")}, "gs://dst/", upload.CopyAllOptions{},
			upload.ErrBadOperand, "missing: no such file or directory"},
		{[]string{filepath.Join(dir, "a.txt"), filepath.Join(dir, "sub")}, "gs://nobucket/x/", upload.CopyAllOptions{Recursive: true},
			upload.ErrRefused, "gs://nobucket: bucket does not exist"},
	} {
		_, err := c.CopyAll(ctx, tt.srcs, tt.dst, tt.o)
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("CopyAll(%q, %s) = %v; want %v saying %q", tt.srcs, tt.dst, err, tt.is, tt.msg)
		}
	}
	same(t, "gs://dst", objects(t, srv, "dst"), nil)
}

// mv -r DIR1 DIR2 FILE gs://dst/moved/, then mv -r of a prefix and an object
// to another folder: everything arrives, and every source is gone.
func TestMoveAllRecursiveSeveralOperands(t *testing.T) {
	srv, c := opsClient(t)
	ctx := context.Background()
	dir := t.TempDir()
	tree(t, dir, map[string]string{"one/a": "A", "one/deep/b": "B", "two/c": "C", "f.txt": "F"})

	srcs := []string{filepath.Join(dir, "one"), filepath.Join(dir, "two"), filepath.Join(dir, "f.txt")}
	results, err := c.MoveAll(ctx, srcs, "gs://dst/moved/", upload.MoveAllOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 4 {
		t.Errorf("%d results, want 4: %q", len(results), statuses(results))
	}
	same(t, "gs://dst after mv up", objects(t, srv, "dst"), []string{
		"moved/f.txt=F", "moved/one/a=A", "moved/one/deep/b=B", "moved/two/c=C"})
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Errorf("%s still holds %d entries after the move (first %s)", dir, len(left), left[0].Name())
	}

	results, err = c.MoveAll(ctx, []string{"gs://dst/moved/one", "gs://dst/moved/f.txt"}, "gs://src/again/", upload.MoveAllOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "mv across results", statuses(results), []string{"moved gs://src/again/f.txt", "moved gs://src/again/one/a", "moved gs://src/again/one/deep/b"})
	same(t, "gs://src after mv across", objects(t, srv, "src"), []string{"again/f.txt=F", "again/one/a=A", "again/one/deep/b=B"})
	same(t, "gs://dst after mv across", objects(t, srv, "dst"), []string{"moved/two/c=C"})

	// Two sources onto one destination: refused, nothing moved.
	srv.PutObject("dst", "x/a", []byte("another a"))
	_, err = c.MoveAll(ctx, []string{"gs://src/again/one/a", "gs://dst/x/a"}, "gs://dst/y/", upload.MoveAllOptions{})
	if !errors.Is(err, upload.ErrBadOperand) || !strings.Contains(err.Error(), "both move to gs://dst/y/a") {
		t.Errorf("two moves onto one object: %v, want ErrBadOperand saying both move to gs://dst/y/a", err)
	}
	same(t, "gs://src after the refused move", objects(t, srv, "src"), []string{"again/f.txt=F", "again/one/a=A", "again/one/deep/b=B"})
	same(t, "gs://dst after the refused move", objects(t, srv, "dst"), []string{"moved/two/c=C", "x/a=another a"})
}

// sync DIR gs://dst/mirror in one call: the prefix then mirrors the directory.
func TestSyncOneCall(t *testing.T) {
	srv, c := opsClient(t)
	ctx := context.Background()
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a": "new a", "sub/b": "b"})
	srv.PutObject("dst", "mirror/a", []byte("old a"))
	srv.PutObject("dst", "mirror/gone", []byte("not in the directory"))
	dst, err := upload.ParseSide("gs://dst/mirror")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Sync(ctx, upload.LocalSide(dir), dst, upload.SyncOptions{Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Copied != 2 || rep.Deleted != 1 {
		t.Errorf("copied %d, deleted %d; want 2 and 1", rep.Copied, rep.Deleted)
	}
	same(t, "gs://dst after sync", objects(t, srv, "dst"), []string{"mirror/a=new a", "mirror/sub/b=b"})
}

// A file CopyAll stores gzipped (GzipExtensions) goes up as a compressed
// copy in a scratch directory; its progress, like its result, names the
// user's file, which is what a progress bar shows. It named the copy
// (".../gcsput-gzip/4f1c….gz").
func TestCopyAllGzipProgressNamesTheFile(t *testing.T) {
	srv, err := fakegcs.New(fakegcs.Options{Buckets: []string{"dst"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var mu sync.Mutex
	seen := map[string]bool{}
	c, err := upload.New(context.Background(), upload.Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true},
		StateDir: t.TempDir(), Progress: func(p upload.Progress) {
			mu.Lock()
			seen[p.Source] = true
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	dir := t.TempDir()
	tree(t, dir, map[string]string{"page.html": strings.Repeat("<p>gzip me</p>\n", 100), "plain.txt": "as is"})
	page, plain := filepath.Join(dir, "page.html"), filepath.Join(dir, "plain.txt")
	results, err := c.CopyAll(context.Background(), []string{page, plain}, "gs://dst/site/", upload.CopyAllOptions{GzipExtensions: []string{"html"}})
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, r := range results {
		sources = append(sources, r.Source)
	}
	slices.Sort(sources)
	same(t, "result sources", sources, []string{page, plain})
	mu.Lock()
	defer mu.Unlock()
	var shown []string
	for s := range seen {
		shown = append(shown, s)
	}
	slices.Sort(shown)
	same(t, "progress sources", shown, []string{page, plain})
	if _, attrs, err := srv.Object("dst", "site/page.html"); err != nil || attrs.ContentEncoding != "gzip" {
		t.Errorf("site/page.html: %+v, %v; want it stored with Content-Encoding gzip", attrs, err)
	}
}
