package upload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
)

// removals runs Remove and returns what it told, one line each:
// "URL[#GEN]" for a removal, "folder URL" for a folder, "ERR text" for a
// failure.
func removals(t *testing.T, c *Client, urls []URL, o RemoveOptions) ([]string, error) {
	t.Helper()
	var got []string
	o.Removed = func(r Removal) {
		s := r.URL.String()
		switch {
		case r.Err != nil:
			s = "ERR " + r.Err.Error()
		case r.Folder:
			s = "folder " + s
		case r.Generation != 0:
			s = fmt.Sprintf("%s#%d", s, r.Generation)
		}
		got = append(got, s)
	}
	err := c.Remove(context.Background(), urls, o)
	return got, err
}

func putNames(t *testing.T, srv *fakegcs.Server, bucket string, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := srv.PutObject(bucket, n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
}

func wantNames(t *testing.T, srv *fakegcs.Server, bucket string, want ...string) {
	t.Helper()
	got, err := srv.ObjectNames(bucket)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("objects left: %q, want %q", got, want)
	}
}

// Remove without Recursive removes each object named, tells each, and goes
// on past one that is missing, which it names; a name under which objects
// exist as a folder is ErrFolderName, and nothing under it is removed.
func TestRemoveObjects(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	putNames(t, srv, testBucket, "a", "b", "dir/x")
	c := newClient(t, srv, nil)
	got, err := removals(t, c, []URL{{testBucket, "a"}, {testBucket, "missing"}, {testBucket, "dir"}, {testBucket, "b"}}, RemoveOptions{})
	want := []string{"gs://bkt/a", "ERR gs://bkt/missing: no such object",
		"ERR gs://bkt/dir: no such object, but objects exist under its name as a folder", "gs://bkt/b"}
	if !slices.Equal(got, want) {
		t.Fatalf("told %q\nwant %q", got, want)
	}
	var re *RemoveError
	if !errors.As(err, &re) || re.Failed != 2 || re.Total != 4 || err.Error() != "2 of 4 objects failed" {
		t.Fatalf("error %v, want 2 of 4 objects failed", err)
	}
	wantNames(t, srv, testBucket, "dir/x")
}

// DryRun reads each object and removes none; AllVersions tells every
// generation, oldest first.
func TestRemoveDryRunAndVersions(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	putNames(t, srv, testBucket, "a", "dir/x", "dir/y")
	c := newClient(t, srv, nil)
	got, err := removals(t, c, []URL{{testBucket, "a"}, {testBucket, "nope"}}, RemoveOptions{DryRun: true})
	if want := []string{"gs://bkt/a", "ERR gs://bkt/nope: no such object"}; !slices.Equal(got, want) {
		t.Fatalf("dry run told %q, want %q", got, want)
	}
	if err == nil {
		t.Fatal("dry run of a missing object: no error")
	}
	got, err = removals(t, c, []URL{{testBucket, "dir"}}, RemoveOptions{DryRun: true, Recursive: true})
	if want := []string{"gs://bkt/dir/x", "gs://bkt/dir/y"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("recursive dry run told %q, %v; want %q", got, err, want)
	}
	wantNames(t, srv, testBucket, "a", "dir/x", "dir/y")

	a, _ := srv.Attrs(testBucket, "a")
	got, err = removals(t, c, []URL{{testBucket, "a"}}, RemoveOptions{AllVersions: true})
	if want := []string{fmt.Sprintf("gs://bkt/a#%d", a.Generation)}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("all versions told %q, %v; want %q", got, err, want)
	}
	wantNames(t, srv, testBucket, "dir/x", "dir/y")
}

// IfGenerationMatch removes the object only at that generation: another
// is a 412, told with the object's name, and the object stays; 0 (only if
// absent) is refused.
func TestRemoveIfGenerationMatch(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	putNames(t, srv, testBucket, "a")
	c := newClient(t, srv, nil)
	a, _ := srv.Attrs(testBucket, "a")
	// A pointer to 0 means only if absent, as everywhere: it would remove
	// nothing, and is refused before any request.
	err := c.Remove(context.Background(), []URL{{testBucket, "a"}}, RemoveOptions{IfGenerationMatch: new(int64(0))})
	if want := "remove: bad option: IfGenerationMatch 0 would remove nothing (0 means only if absent): give the live generation"; err == nil || err.Error() != want {
		t.Fatalf("remove with IfGenerationMatch 0: %v, want %q", err, want)
	}
	if n := srv.Count("storage.objects.delete"); n != 0 {
		t.Fatalf("%d delete requests for IfGenerationMatch 0, want 0", n)
	}
	var told error
	err = c.Remove(context.Background(), []URL{{testBucket, "a"}}, RemoveOptions{IfGenerationMatch: new(a.Generation + 1), Removed: func(r Removal) { told = r.Err }})
	if err == nil || !isStatus(told, 412) || !strings.HasPrefix(told.Error(), "gs://bkt/a: ") {
		t.Fatalf("remove at another generation: told %v, %v; want a 412 naming gs://bkt/a", told, err)
	}
	wantNames(t, srv, testBucket, "a")
	if got, err := removals(t, c, []URL{{testBucket, "a"}}, RemoveOptions{IfGenerationMatch: &a.Generation}); err != nil || len(got) != 1 {
		t.Fatalf("remove at its generation: told %q, %v", got, err)
	}
	wantNames(t, srv, testBucket)
}

// Recursive reads every listing before the first delete: a listing that
// fails under the second prefix removes nothing under the first either.
func TestRemoveRecursiveListsFirst(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	putNames(t, srv, testBucket, "p/1", "p/2", "q/1")
	c := newClient(t, srv, nil)
	srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Skip: 1, Kind: fakegcs.KindStatus, Status: 403})
	got, err := removals(t, c, []URL{{testBucket, "p"}, {testBucket, "q/"}}, RemoveOptions{Recursive: true})
	if err == nil || len(got) != 0 {
		t.Fatalf("told %q, %v; want a listing error and nothing removed", got, err)
	}
	if want := "listing gs://bkt/q/ (nothing under it was deleted): "; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q, want it to start %q", err, want)
	}
	wantNames(t, srv, testBucket, "p/1", "p/2", "q/1")
	if _, err := removals(t, c, []URL{{testBucket, "empty/"}}, RemoveOptions{Recursive: true}); err == nil || err.Error() != "gs://bkt/empty/: no objects to remove" {
		t.Fatalf("empty prefix: %v", err)
	}
}

// Recursive removes the objects under a prefix and the ones matched, each
// under the generation listed: one replaced since the listing is a 412 and
// stays. Its folders go after the objects, deepest first, and only when
// every object went.
func TestRemoveRecursiveMatchedAndFolders(t *testing.T) {
	srv := hnsServer(t, fakegcs.Options{}, "a/b/o1", "a/o2", "c/o3")
	c := newClient(t, srv, nil)
	matched := &storage.ObjectAttrs{Bucket: hnsBucket, Name: "c/o3"}
	if a, err := srv.Attrs(hnsBucket, "c/o3"); err == nil {
		matched.Generation = a.Generation
	}
	got, err := removals(t, c, []URL{{hnsBucket, "a"}}, RemoveOptions{Recursive: true, matched: []*storage.ObjectAttrs{matched}})
	want := []string{"gs://hns/c/o3", "gs://hns/a/b/o1", "gs://hns/a/o2", "folder gs://hns/a/b/", "folder gs://hns/a/"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("told %q, %v\nwant %q", got, err, want)
	}
	if got := folderNames(t, c, "", true); !slices.Equal(got, []string{"c/"}) {
		t.Fatalf("folders left: %q, want [c/]", got)
	}

	putNames(t, srv, hnsBucket, "d/o4")
	stale := &storage.ObjectAttrs{Bucket: hnsBucket, Name: "d/o4", Generation: 1}
	got, err = removals(t, c, []URL{{hnsBucket, "c/"}}, RemoveOptions{Recursive: true, matched: []*storage.ObjectAttrs{stale}})
	var re *RemoveError
	if !errors.As(err, &re) || re.Folders || re.Failed != 1 || len(got) != 1 {
		t.Fatalf("stale generation: told %q, %v; want one object failed and no folder removed", got, err)
	}
	if got := folderNames(t, c, "", true); !slices.Equal(got, []string{"c/", "d/"}) {
		t.Fatalf("folders left: %q, want [c/ d/] (none removed after a failure)", got)
	}
}
