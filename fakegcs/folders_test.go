package fakegcs_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	raw "google.golang.org/api/storage/v1"

	"github.com/gcsput/gcsput/fakegcs"
)

// newRawService points google-api-go-client's storage/v1 (which has the
// JSON folders API the official storage client lacks) at srv.
func newRawService(t testing.TB, srv *fakegcs.Server) *raw.Service {
	t.Helper()
	svc, err := raw.NewService(context.Background(), option.WithEndpoint(srv.Endpoint()),
		option.WithoutAuthentication(), option.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// insertHNSBucket creates an HNS bucket as GCS requires it: with uniform
// bucket-level access.
func insertHNSBucket(t testing.TB, svc *raw.Service, name string) {
	t.Helper()
	_, err := svc.Buckets.Insert("p", &raw.Bucket{Name: name,
		HierarchicalNamespace: &raw.BucketHierarchicalNamespace{Enabled: true},
		IamConfiguration: &raw.BucketIamConfiguration{
			UniformBucketLevelAccess: &raw.BucketIamConfigurationUniformBucketLevelAccess{Enabled: true}},
	}).Do()
	if err != nil {
		t.Fatal(err)
	}
}

func folderList(t testing.TB, call *raw.FoldersListCall) []string {
	t.Helper()
	var names []string
	err := call.Pages(context.Background(), func(fs *raw.Folders) error {
		for _, f := range fs.Items {
			names = append(names, f.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestFoldersAPI: google-api-go-client's Folders calls against an HNS
// bucket: insert (parents required unless recursive), get, list with
// prefix, delimiter and pages, delete refused while a folder holds
// anything, and folders created by an object write.
func TestFoldersAPI(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"flat"}})
	svc := newRawService(t, srv)
	c := newClient(t, srv)
	ctx := context.Background()

	_, err := svc.Buckets.Insert("p", &raw.Bucket{Name: "nouniform",
		HierarchicalNamespace: &raw.BucketHierarchicalNamespace{Enabled: true}}).Do()
	assertCode(t, "an HNS bucket without uniform bucket-level access", err, http.StatusBadRequest)
	insertHNSBucket(t, svc, "hns")
	if b, err := svc.Buckets.Get("hns").Do(); err != nil || b.HierarchicalNamespace == nil || !b.HierarchicalNamespace.Enabled {
		t.Fatalf("the HNS bucket reads back as %+v, %v", b, err)
	}
	_, err = svc.Folders.Insert("flat", &raw.Folder{Name: "a/"}).Do()
	assertCode(t, "a folder in a flat bucket", err, http.StatusBadRequest)

	_, err = svc.Folders.Insert("hns", &raw.Folder{Name: "a/b/"}).Do()
	assertCode(t, "a folder whose parent is missing", err, http.StatusNotFound)
	f, err := svc.Folders.Insert("hns", &raw.Folder{Name: "a/b/"}).Recursive(true).Do()
	if err != nil || f.Name != "a/b/" || f.Bucket != "hns" || f.Kind != "storage#folder" || f.Metageneration != 1 {
		t.Fatalf("recursive insert: %+v, %v", f, err)
	}
	_, err = svc.Folders.Insert("hns", &raw.Folder{Name: "a/b/"}).Do()
	assertCode(t, "a folder that exists", err, http.StatusConflict)
	if _, err := svc.Folders.Get("hns", "a/").Do(); err != nil {
		t.Fatalf("the parent made by recursive: %v", err)
	}
	// An object write creates the folders above it.
	upload(t, c, "hns", "x/y/z/obj", []byte("data"), 0)
	if got, want := folderList(t, svc.Folders.List("hns")), []string{"a/", "a/b/", "x/", "x/y/", "x/y/z/"}; !slices.Equal(got, want) {
		t.Fatalf("folders: %q, want %q", got, want)
	}
	if got, want := folderList(t, svc.Folders.List("hns").Prefix("x/").Delimiter("/")), []string{"x/", "x/y/"}; !slices.Equal(got, want) {
		t.Fatalf("folders at x/ with delimiter: %q, want %q", got, want)
	}
	if got, want := folderList(t, svc.Folders.List("hns").PageSize(2)), []string{"a/", "a/b/", "x/", "x/y/", "x/y/z/"}; !slices.Equal(got, want) {
		t.Fatalf("folders in pages of 2: %q, want %q", got, want)
	}
	_, err = svc.Folders.List("hns").Prefix("x").Do()
	assertCode(t, "a folder prefix without '/'", err, http.StatusBadRequest)

	err = svc.Folders.Delete("hns", "x/y/z/").Do()
	assertCode(t, "delete of a folder holding an object", err, http.StatusConflict)
	err = svc.Folders.Delete("hns", "a/").Do()
	assertCode(t, "delete of a folder holding a folder", err, http.StatusConflict)
	if err := c.Bucket("hns").Object("x/y/z/obj").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Folders.Get("hns", "x/y/z/").Do(); err != nil {
		t.Fatalf("a folder outlives its last object: %v", err)
	}
	err = svc.Folders.Delete("hns", "x/y/z/").IfMetagenerationMatch(2).Do()
	assertCode(t, "delete under a wrong metageneration", err, http.StatusPreconditionFailed)
	if err := svc.Folders.Delete("hns", "x/y/z/").IfMetagenerationMatch(1).Do(); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Folders.Get("hns", "x/y/z/").Do()
	assertCode(t, "get of a deleted folder", err, http.StatusNotFound)
}

// TestFoldersAsPrefixes: with includeFoldersAsPrefixes an empty folder is a
// prefix of an objects listing; without it only objects make prefixes.
func TestFoldersAsPrefixes(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{})
	svc := newRawService(t, srv)
	c := newClient(t, srv)
	insertHNSBucket(t, svc, "hns")
	if _, err := svc.Folders.Insert("hns", &raw.Folder{Name: "d/empty/"}).Recursive(true).Do(); err != nil {
		t.Fatal(err)
	}
	upload(t, c, "hns", "d/full/o", []byte("1"), 0)
	upload(t, c, "hns", "d/top", []byte("2"), 0)
	list := func(folders bool) (prefixes, names []string) {
		it := c.Bucket("hns").Objects(context.Background(), &storage.Query{Prefix: "d/", Delimiter: "/", IncludeFoldersAsPrefixes: folders})
		for {
			a, err := it.Next()
			if err == iterator.Done {
				return prefixes, names
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Prefix != "" {
				prefixes = append(prefixes, a.Prefix)
			} else {
				names = append(names, a.Name)
			}
		}
	}
	if p, n := list(true); !slices.Equal(p, []string{"d/empty/", "d/full/"}) || !slices.Equal(n, []string{"d/top"}) {
		t.Fatalf("with folders: prefixes %q, objects %q", p, n)
	}
	if p, n := list(false); !slices.Equal(p, []string{"d/full/"}) || !slices.Equal(n, []string{"d/top"}) {
		t.Fatalf("without folders: prefixes %q, objects %q", p, n)
	}
	_, err := svc.Objects.List("hns").IncludeFoldersAsPrefixes(true).Do()
	assertCode(t, "includeFoldersAsPrefixes without a delimiter", err, http.StatusBadRequest)
}

// TestRenameFolder: renameFolder moves a folder, its folders and its
// objects in one call and answers with an operation that is done once
// polled at operations.get, its response the destination folder.
func TestRenameFolder(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{})
	svc := newRawService(t, srv)
	c := newClient(t, srv)
	insertHNSBucket(t, svc, "hns")
	upload(t, c, "hns", "src/a/o1", []byte("one"), 0)
	upload(t, c, "hns", "src/o2", []byte("two"), 0)
	upload(t, c, "hns", "srcx/o3", []byte("three"), 0)
	if _, err := svc.Folders.Insert("hns", &raw.Folder{Name: "src/empty/"}).Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Folders.Insert("hns", &raw.Folder{Name: "taken/"}).Do(); err != nil {
		t.Fatal(err)
	}
	_, err := svc.Folders.Rename("hns", "src/", "taken/").Do()
	assertCode(t, "rename onto an existing folder", err, http.StatusConflict)
	_, err = svc.Folders.Rename("hns", "src/", "src/a/b/").Do()
	assertCode(t, "rename into itself", err, http.StatusBadRequest)
	_, err = svc.Folders.Rename("hns", "src/", "no/parent/").Do()
	assertCode(t, "rename under a missing parent", err, http.StatusNotFound)
	_, err = svc.Folders.Rename("hns", "none/", "dst/").Do()
	assertCode(t, "rename of a missing folder", err, http.StatusNotFound)

	srv.ResetStats()
	op, err := svc.Folders.Rename("hns", "src/", "dst/").Do()
	if err != nil {
		t.Fatal(err)
	}
	if op.Done || op.Kind != "storage#operation" || op.Name == "" {
		t.Fatalf("renameFolder answered %+v, want an operation not yet done", op)
	}
	id := op.Name[len("projects/_/buckets/hns/operations/"):]
	got, err := svc.Operations.Get("hns", id).Do()
	if err != nil {
		t.Fatal(err)
	}
	var f raw.Folder
	if !got.Done || got.Error != nil || json.Unmarshal(got.Response, &f) != nil || f.Name != "dst/" {
		t.Fatalf("polled operation: %+v (response %s)", got, got.Response)
	}
	if st := srv.Stats(); st.Requests["storage.folders.rename"] != 1 || st.Requests["storage.operations.get"] != 1 {
		t.Fatalf("stats after one rename: %v", st.Requests)
	}
	if got, want := func() []string {
		n, err := srv.ObjectNames("hns")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}(), []string{"dst/a/o1", "dst/o2", "srcx/o3"}; !slices.Equal(got, want) {
		t.Fatalf("objects after the rename: %q, want %q", got, want)
	}
	if got, want := folderList(t, svc.Folders.List("hns")), []string{"dst/", "dst/a/", "dst/empty/", "srcx/", "taken/"}; !slices.Equal(got, want) {
		t.Fatalf("folders after the rename: %q, want %q", got, want)
	}
	if b := read(t, c, "hns", "dst/a/o1", 0, -1); string(b) != "one" {
		t.Fatalf("dst/a/o1 holds %q", b)
	}
	_, err = svc.Operations.Get("hns", "999").Do()
	assertCode(t, "an unknown operation", err, http.StatusNotFound)
}
