package upload_test

// Regression tests of the adversarial pass over issue 33's first round: what
// the user asked of a destination travels whole through every path.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/upload"
)

// --if-generation-match names one object's generation: a wildcard that
// matches several sources (gs:// or local) is refused before anything is
// written, as two operands are, instead of the one generation being the
// precondition of every copy (which would overwrite the destination whose
// generation it happens to be).
func TestCopyAllIfGenerationMatchRefusesWildcardOfSeveral(t *testing.T) {
	srv, c := opsClient(t)
	ctx := context.Background()
	srv.PutObject("src", "d/a.txt", []byte("new a"))
	srv.PutObject("src", "d/b.txt", []byte("new b"))
	old, err := srv.PutObject("dst", "w/a.txt", []byte("old a"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a.txt": "local a", "b.txt": "local b"})
	gen := old.Generation
	for _, src := range []string{"gs://src/d/*.txt", filepath.Join(dir, "*.txt")} {
		_, err := c.CopyAll(ctx, []string{src}, "gs://dst/w/", upload.CopyAllOptions{IfGenerationMatch: &gen})
		if !errors.Is(err, upload.ErrBadOperand) || !strings.Contains(err.Error(), "--if-generation-match applies to one file or object, and "+src+" matches 2 sources") {
			t.Errorf("CopyAll(%s, IfGenerationMatch %d) = %v; want an ErrBadOperand naming --if-generation-match and the pattern", src, gen, err)
		}
		same(t, "gs://dst after "+src, objects(t, srv, "dst"), []string{"w/a.txt=old a"})
	}
}

// A share of a move cannot know what the other shares kept ('gcsput mv'
// refuses --shard): MoveAll on a Client with Options.Shard is refused before
// anything moves, whichever the direction (it used to move a share of an
// upload but every object of a download or a copy).
func TestMoveAllRefusesShardedClient(t *testing.T) {
	srv, err := fakegcs.New(fakegcs.Options{Buckets: []string{"src", "dst"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := upload.New(context.Background(), upload.Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true}, NoState: true, Shard: "1/2"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	srv.PutObject("src", "p/a", []byte("a"))
	srv.PutObject("src", "p/b", []byte("b"))
	dir := t.TempDir()
	tree(t, dir, map[string]string{"up/x": "x", "up/y": "y"})
	for _, tt := range []struct {
		srcs []string
		dst  string
	}{
		{[]string{filepath.Join(dir, "up")}, "gs://dst/up/"},
		{[]string{"gs://src/p/"}, "gs://dst/q/"},
		{[]string{"gs://src/p/*"}, filepath.Join(dir, "down")},
	} {
		_, err := c.MoveAll(ctx, tt.srcs, tt.dst, upload.MoveAllOptions{Recursive: true})
		if !errors.Is(err, upload.ErrBadOperand) || !strings.Contains(err.Error(), "Shard") {
			t.Errorf("MoveAll(%q, %s) on a sharded Client = %v; want an ErrBadOperand naming Shard", tt.srcs, tt.dst, err)
		}
	}
	same(t, "gs://src", objects(t, srv, "src"), []string{"p/a=a", "p/b=b"})
	same(t, "gs://dst", objects(t, srv, "dst"), nil)
}

// RemoveOptions.IfGenerationMatch is one object's condition: with
// Recursive, AllVersions or several URLs it is refused, and nothing is
// removed, instead of being dropped (Recursive and AllVersions removed
// everything unconditionally), as 'gcsput rm' refuses it.
func TestRemoveIfGenerationMatchIsNeverDropped(t *testing.T) {
	srv, c := opsClient(t)
	ctx := context.Background()
	srv.PutObject("src", "p/a", []byte("a"))
	srv.PutObject("src", "p/b", []byte("b"))
	for _, tt := range []struct {
		name string
		urls []upload.URL
		o    upload.RemoveOptions
	}{
		{"Recursive", []upload.URL{{Bucket: "src", Object: "p"}}, upload.RemoveOptions{Recursive: true, IfGenerationMatch: new(int64(12345))}},
		{"AllVersions", []upload.URL{{Bucket: "src", Object: "p/a"}}, upload.RemoveOptions{AllVersions: true, IfGenerationMatch: new(int64(12345))}},
		{"two URLs", []upload.URL{{Bucket: "src", Object: "p/a"}, {Bucket: "src", Object: "p/b"}}, upload.RemoveOptions{IfGenerationMatch: new(int64(12345))}},
	} {
		err := c.Remove(ctx, tt.urls, tt.o)
		if !errors.Is(err, upload.ErrBadOption) || !strings.Contains(err.Error(), "IfGenerationMatch") {
			t.Errorf("%s: Remove = %v; want an ErrBadOption naming IfGenerationMatch", tt.name, err)
		}
	}
	same(t, "gs://src", objects(t, srv, "src"), []string{"p/a=a", "p/b=b"})
}

// A KMS key asked of the objects CopyAll writes is not dropped: a copy
// between gs:// locations, which takes only StorageClass and Holds of
// Attrs, refuses Attrs.KMSKeyName before anything is sent (the copy used to
// be written without it, under the bucket's default encryption).
func TestCopyAllRemoteRefusesKMSKeyItWouldDrop(t *testing.T) {
	srv, c := opsClient(t)
	srv.PutObject("src", "a", []byte("a"))
	o := upload.CopyAllOptions{Attrs: upload.Attrs{KMSKeyName: "projects/p/locations/l/keyRings/r/cryptoKeys/k"}}
	_, err := c.CopyAll(context.Background(), []string{"gs://src/a"}, "gs://dst/a", o)
	if !errors.Is(err, upload.ErrBadOperand) || !strings.Contains(err.Error(), "KMSKeyName") {
		t.Errorf("CopyAll gs:// -> gs:// with Attrs.KMSKeyName = %v; want an ErrBadOperand naming KMSKeyName", err)
	}
	same(t, "gs://dst", objects(t, srv, "dst"), nil)
}

// Objects named like the files gcsput keeps beside a download
// (".NAME.gcsput-partial") are skipped by a wildcard's download or move, as
// by a prefix's, and kept: they used to be written at that name, the
// partial-file path of NAME, which then failed as a collision with it.
func TestWildcardDownloadSkipsReservedNames(t *testing.T) {
	srv, c := opsClient(t)
	ctx := context.Background()
	for _, p := range []string{"p", "m"} {
		srv.PutObject("src", p+"/ok.txt", []byte("ok"))
		srv.PutObject("src", p+"/.ok.txt.gcsput-partial", []byte("not a partial file"))
	}
	out := t.TempDir()
	results, err := c.CopyAll(ctx, []string{"gs://src/p/*"}, out+"/", upload.CopyAllOptions{})
	if err != nil {
		t.Errorf("CopyAll: %v", err)
	}
	moved := t.TempDir()
	mresults, err := c.MoveAll(ctx, []string{"gs://src/m/*"}, moved+"/", upload.MoveAllOptions{})
	if err != nil {
		t.Errorf("MoveAll: %v", err)
	}
	for what, rs := range map[string][]*upload.Result{"copy": results, "move": mresults} {
		var notes []string
		for _, r := range rs {
			notes = append(notes, string(r.Status)+" "+filepath.Base(r.Dest)+" "+r.Note)
		}
		slices.Sort(notes)
		ok := "downloaded"
		if what == "move" {
			ok = "moved"
		}
		want := []string{
			"skipped .ok.txt.gcsput-partial a name gcsput reserves for its own files beside a download: not downloaded" + map[string]string{"copy": "", "move": " (kept)"}[what],
			ok + " ok.txt "}
		slices.Sort(want)
		same(t, what+" results", notes, want)
	}
	for _, dir := range []string{out, moved} {
		if got, err := os.ReadFile(filepath.Join(dir, "ok.txt")); err != nil || string(got) != "ok" {
			t.Errorf("%s/ok.txt: %q, %v", dir, got, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, ".ok.txt.gcsput-partial")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s/.ok.txt.gcsput-partial was written (%v)", dir, err)
		}
	}
	same(t, "gs://src", objects(t, srv, "src"), []string{"m/.ok.txt.gcsput-partial=not a partial file", "p/.ok.txt.gcsput-partial=not a partial file", "p/ok.txt=ok"})
}
