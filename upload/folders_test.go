package upload

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

const hnsBucket = "hns"

func hnsServer(t *testing.T, opts fakegcs.Options, objects ...string) *fakegcs.Server {
	t.Helper()
	srv := newServer(t, opts)
	if err := srv.CreateHNSBucket(hnsBucket); err != nil {
		t.Fatal(err)
	}
	for _, o := range objects {
		if _, err := srv.PutObject(hnsBucket, o, []byte(o)); err != nil {
			t.Fatal(err)
		}
	}
	return srv
}

func folderNames(t *testing.T, c *Client, prefix string, recursive bool) []string {
	t.Helper()
	var names []string
	for f, err := range c.Folders(context.Background(), hnsBucket, prefix, recursive) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, f.Name)
	}
	return names
}

// TestFoldersListAndDelete: Folders lists an HNS bucket's folders (all, or
// one level); DeleteFolder refuses a folder with anything under it
// (ErrFolderNotEmpty) and deletes an empty one; HierarchicalNamespace tells
// the buckets apart.
func TestFoldersListAndDelete(t *testing.T) {
	srv := hnsServer(t, fakegcs.Options{}, "a/b/o1", "a/o2", "c/o3")
	c := newClient(t, srv, nil)
	ctx := context.Background()
	if on, err := c.HierarchicalNamespace(ctx, hnsBucket); err != nil || !on {
		t.Fatalf("HierarchicalNamespace(hns) = %v, %v", on, err)
	}
	if on, err := c.HierarchicalNamespace(ctx, testBucket); err != nil || on {
		t.Fatalf("HierarchicalNamespace(bkt) = %v, %v", on, err)
	}
	if got, want := folderNames(t, c, "", true), []string{"a/", "a/b/", "c/"}; !slices.Equal(got, want) {
		t.Fatalf("folders: %q, want %q", got, want)
	}
	if got, want := folderNames(t, c, "", false), []string{"a/", "c/"}; !slices.Equal(got, want) {
		t.Fatalf("top folders: %q, want %q", got, want)
	}
	err := c.DeleteFolder(ctx, URL{hnsBucket, "a/b/"})
	if !errors.Is(err, ErrFolderNotEmpty) {
		t.Fatalf("delete of a folder holding an object: %v, want ErrFolderNotEmpty", err)
	}
	if n := srv.Count("storage.folders.delete"); n != 1 {
		t.Fatalf("%d deletes of a non-empty folder, want 1 (never retried)", n)
	}
	if err := srv.DeleteObject(hnsBucket, "c/o3"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteFolder(ctx, URL{hnsBucket, "c"}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteFolder(ctx, URL{hnsBucket, "c/"}); !errors.Is(err, ErrFolderNotFound) {
		t.Fatalf("delete of a missing folder: %v, want ErrFolderNotFound", err)
	}
	if got, want := folderNames(t, c, "", true), []string{"a/", "a/b/"}; !slices.Equal(got, want) {
		t.Fatalf("folders after the delete: %q, want %q", got, want)
	}
}

// TestRenameFolderPolls: RenameFolder is one renameFolder call and polls
// its operation to done, retrying a poll that failed (503).
func TestRenameFolderPolls(t *testing.T) {
	srv := hnsServer(t, fakegcs.Options{Faults: []fakegcs.Fault{
		{Op: "storage.operations.get", Kind: fakegcs.KindStatus, Status: 503},
	}}, "src/x/o1", "src/o2", "keep/o3")
	c := newClient(t, srv, nil)
	if err := c.RenameFolder(context.Background(), URL{hnsBucket, "src/"}, URL{hnsBucket, "dst/"}); err != nil {
		t.Fatal(err)
	}
	if r, g := srv.Count("storage.folders.rename"), srv.Count("storage.operations.get"); r != 1 || g != 2 {
		t.Fatalf("%d renames and %d polls, want 1 and 2 (one 503)", r, g)
	}
	names, _ := srv.ObjectNames(hnsBucket)
	if want := []string{"dst/o2", "dst/x/o1", "keep/o3"}; !slices.Equal(names, want) {
		t.Fatalf("objects after the rename: %q, want %q", names, want)
	}
	if got, want := folderNames(t, c, "", true), []string{"dst/", "dst/x/", "keep/"}; !slices.Equal(got, want) {
		t.Fatalf("folders after the rename: %q, want %q", got, want)
	}
}

// TestRenameFolderAnswerLost: the renameFolder answer is lost; the retry
// finds the source gone and the destination there, and the rename is done.
func TestRenameFolderAnswerLost(t *testing.T) {
	srv := hnsServer(t, fakegcs.Options{Faults: []fakegcs.Fault{
		{Op: "storage.folders.rename", Kind: fakegcs.KindDropResponse},
	}}, "src/o")
	c := newClient(t, srv, nil)
	if err := c.RenameFolder(context.Background(), URL{hnsBucket, "src/"}, URL{hnsBucket, "dst/"}); err != nil {
		t.Fatal(err)
	}
	if n := srv.Count("storage.folders.rename"); n != 2 {
		t.Fatalf("%d rename calls, want 2", n)
	}
	wantNames, _ := srv.ObjectNames(hnsBucket)
	if !slices.Equal(wantNames, []string{"dst/o"}) {
		t.Fatalf("objects: %q", wantNames)
	}
	err := c.RenameFolder(context.Background(), URL{hnsBucket, "dst/"}, URL{testBucket, "x/"})
	if !errors.Is(err, ErrBadOption) {
		t.Fatalf("rename across buckets: %v, want ErrBadOption", err)
	}
}

// TestMovePrefixRenamesFolder: MovePrefix of a folder of an HNS bucket to
// a new folder of the same bucket is one renameFolder (no objects.move,
// no rewrite), each object reported moved; a destination folder that
// exists makes it move object by object, as in a flat bucket.
func TestMovePrefixRenamesFolder(t *testing.T) {
	srv := hnsServer(t, fakegcs.Options{}, "src/a", "src/x/b", "taken/c")
	var mu sync.Mutex
	moved := map[string]Status{}
	c := newClient(t, srv, func(o *Options) {
		o.OnResult = func(r *Result) { mu.Lock(); moved[r.Dest] = r.Status; mu.Unlock() }
	})
	ctx := context.Background()
	if _, err := c.MovePrefix(ctx, URL{hnsBucket, "src"}, sideOf("gs://hns/dst/"), MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if r, m := srv.Count("storage.folders.rename"), srv.Count("storage.objects.move")+srv.Count("storage.objects.rewrite"); r != 1 || m != 0 {
		t.Fatalf("%d renames and %d object moves, want 1 and 0", r, m)
	}
	mu.Lock()
	if len(moved) != 2 || moved["gs://hns/dst/a"] != StatusMoved || moved["gs://hns/dst/x/b"] != StatusMoved {
		t.Fatalf("results: %v", moved)
	}
	mu.Unlock()
	if names, _ := srv.ObjectNames(hnsBucket); !slices.Equal(names, []string{"dst/a", "dst/x/b", "taken/c"}) {
		t.Fatalf("objects: %q", names)
	}
	// Onto an existing folder: one move per object.
	if _, err := c.MovePrefix(ctx, URL{hnsBucket, "dst"}, sideOf("gs://hns/taken/"), MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if r, m := srv.Count("storage.folders.rename"), srv.Count("storage.objects.move"); r != 2 || m != 2 {
		t.Fatalf("%d renames (one refused) and %d object moves, want 2 and 2", r, m)
	}
	if names, _ := srv.ObjectNames(hnsBucket); !slices.Equal(names, []string{"taken/a", "taken/c", "taken/x/b"}) {
		t.Fatalf("objects: %q", names)
	}
}

// TestSyncDeletePrunesFolders: a sync with Delete into an HNS bucket
// deletes the folders its deletes left empty, deepest first, and no other:
// not the destination's own folder, not a folder that still holds an object.
func TestSyncDeletePrunesFolders(t *testing.T) {
	srv := hnsServer(t, fakegcs.Options{}, "bk/keep.txt", "bk/gone/deep/x", "bk/gone/y", "bk/half/z", "bk/half/stay", "other/w")
	dir := t.TempDir()
	writeTemp(t, dir, "keep.txt", []byte("bk/keep.txt"))
	writeTemp(t, dir, "half/stay", []byte("bk/half/stay"))
	c := newClient(t, srv, nil)
	rep, err := c.Sync(context.Background(), LocalSide(dir), RemoteSide(URL{hnsBucket, "bk"}),
		SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)})
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := srv.ObjectNames(hnsBucket); !slices.Equal(names, []string{"bk/half/stay", "bk/keep.txt", "other/w"}) {
		t.Fatalf("objects after the sync: %q", names)
	}
	if got, want := folderNames(t, c, "", true), []string{"bk/", "bk/half/", "other/"}; !slices.Equal(got, want) {
		t.Fatalf("folders after the sync: %q, want %q", got, want)
	}
	if rep.Deleted != 5 { // 3 objects, gone/deep/ and gone/
		t.Fatalf("report: %+v, want 5 deleted", rep)
	}
}
