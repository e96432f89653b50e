package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// hnsServer is fakegcs with the hierarchical-namespace bucket "hns"
// holding objects and the empty folder empty/sub/ (made by the folders API).
func hnsServer(t *testing.T, objects ...string) *fakegcs.Server {
	t.Helper()
	srv := fakegcs.NewTest(t, fakegcs.Options{})
	if err := srv.CreateHNSBucket("hns"); err != nil {
		t.Fatal(err)
	}
	for _, o := range objects {
		if _, err := srv.PutObject("hns", o, []byte(o)); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Post(srv.URL()+"/storage/v1/b/hns/folders?recursive=true", "application/json", strings.NewReader(`{"name":"empty/sub/"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("folder insert: %s", resp.Status)
	}
	return srv
}

// ls of a hierarchical-namespace bucket shows its folders, empty ones too.
func TestLsShowsFolders(t *testing.T) {
	t.Parallel()
	srv := hnsServer(t, "dir/a", "top")
	r := runIn(context.Background(), false, "ls", "--endpoint", srv.URL(), "gs://hns")
	if want := "gs://hns/top\ngs://hns/dir/\ngs://hns/empty/\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("ls: exit %d, %q, want %q\n%s", r.code, r.stdout, want, r.stderr)
	}
	r = runIn(context.Background(), false, "ls", "--endpoint", srv.URL(), "gs://hns/empty")
	if want := "gs://hns/empty/sub/\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("ls of a folder holding an empty folder: exit %d, %q, want %q\n%s", r.code, r.stdout, want, r.stderr)
	}
}

// rm -r in a hierarchical-namespace bucket removes the objects, then the
// folders deepest first, and leaves nothing of the prefix behind.
func TestRmRemovesFolders(t *testing.T) {
	t.Parallel()
	srv := hnsServer(t, "dir/a", "dir/x/b", "keep/c")
	ep := []string{"--endpoint", srv.URL()}
	r := runIn(context.Background(), false, append([]string{"rm", "-r", "--dry-run", "gs://hns/dir"}, ep...)...)
	if want := "would remove gs://hns/dir/a\nwould remove gs://hns/dir/x/b\nwould remove gs://hns/dir/x/\nwould remove gs://hns/dir/\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("dry run: exit %d, %q, want %q\n%s", r.code, r.stdout, want, r.stderr)
	}
	r = runIn(context.Background(), false, append([]string{"rm", "-r", "gs://hns/dir"}, ep...)...)
	if want := "removed gs://hns/dir/a\nremoved gs://hns/dir/x/b\nremoved gs://hns/dir/x/\nremoved gs://hns/dir/\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("rm -r: exit %d, %q, want %q\n%s", r.code, r.stdout, want, r.stderr)
	}
	if n := srv.Count("storage.folders.delete"); n != 2 {
		t.Fatalf("%d folder deletes, want 2", n)
	}
	// A prefix with only empty folders is still something to remove.
	r = runIn(context.Background(), false, append([]string{"rm", "-r", "gs://hns/empty/"}, ep...)...)
	if want := "removed gs://hns/empty/sub/\nremoved gs://hns/empty/\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("rm -r of empty folders: exit %d, %q, want %q\n%s", r.code, r.stdout, want, r.stderr)
	}
	r = runIn(context.Background(), false, "ls", "--endpoint", srv.URL(), "gs://hns")
	if want := "gs://hns/keep/\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("ls after rm -r: %q, want %q\n%s", r.stdout, want, r.stderr)
	}
}

// mv -r of a folder of a hierarchical-namespace bucket to a new folder of
// the same bucket is one renameFolder; each object is reported moved.
func TestMvRenamesFolder(t *testing.T) {
	t.Parallel()
	srv := hnsServer(t, "src/a", "src/x/b")
	r := runIn(context.Background(), false, "mv", "-r", "--endpoint", srv.URL(), "gs://hns/src", "gs://hns/dst")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "gs://hns/dst/x/b") {
		t.Fatalf("mv -r: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n, m := srv.Count("storage.folders.rename"), srv.Count("storage.objects.move")+srv.Count("storage.objects.rewrite"); n != 1 || m != 0 {
		t.Fatalf("%d renameFolder calls and %d object moves, want 1 and 0", n, m)
	}
	if names, _ := srv.ObjectNames("hns"); strings.Join(names, " ") != "dst/a dst/x/b" {
		t.Fatalf("objects after mv -r: %q", names)
	}
}

// sync --delete into a hierarchical-namespace bucket leaves no folder it
// emptied behind, and says so.
func TestSyncDeleteLeavesNoEmptyFolder(t *testing.T) {
	t.Parallel()
	srv := hnsServer(t, "bk/keep", "bk/old/deep/x")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("bk/keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIn(context.Background(), false, "sync", "--delete", "--max-delete", "100%", "--endpoint", srv.URL(), dir, "gs://hns/bk")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "gs://hns/bk/old/deep/") || !strings.Contains(r.stdout+r.stderr, "gs://hns/bk/old/") {
		t.Fatalf("sync --delete: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// ls shows folders, empty ones too: bk/old/ is gone.
	r = runIn(context.Background(), false, "ls", "--endpoint", srv.URL(), "gs://hns/bk")
	if want := "gs://hns/bk/keep\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("ls after the sync: %q, want %q\n%s", r.stdout, want, r.stderr)
	}
}
