package fakegcs_test

import (
	"context"
	"maps"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// TestInsertCounts: every way storage.objects.insert creates an object counts
// once per object made; refused and unfinished uploads, and objects made any
// other way, count nothing.
func TestInsertCounts(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt", "other"}})
	media := "/upload/storage/v1/b/bkt/o?uploadType=media&name="
	for _, name := range []string{"twice", "twice", "once"} {
		if r := do(t, srv, "POST", media+name, []byte("x")); r.status != 200 {
			t.Fatalf("media %s: %d %s", name, r.status, r.body)
		}
	}
	// Refused by its precondition: no object made, nothing counted.
	if r := do(t, srv, "POST", media+"once&ifGenerationMatch=0", []byte("x")); r.status != 412 {
		t.Fatalf("precondition: %d", r.status)
	}
	uri := initiate(t, srv, "resumable")
	runTrace(t, srv, uri, []byte("abc"), []step{{cr: "bytes 0-2/3", to: 3, status: 200}})
	initiate(t, srv, "unfinished")
	upload(t, newClient(t, srv), "bkt", "multipart", []byte("m"), 0)
	if _, err := srv.PutObject("bkt", "put", []byte("p")); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv)
	if _, err := c.Bucket("bkt").Object("copy").CopierFrom(c.Bucket("bkt").Object("put")).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := srv.DeleteObject("bkt", "once"); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"twice": 2, "once": 1, "resumable": 1, "multipart": 1}
	if got := srv.InsertCounts("bkt"); !maps.Equal(got, want) {
		t.Errorf("InsertCounts(bkt) = %v, want %v", got, want)
	}
	if got := srv.InsertCounts("other"); got == nil || len(got) != 0 {
		t.Errorf("InsertCounts(other) = %#v, want an empty map", got)
	}
	srv.ResetStats()
	if got := srv.InsertCounts("bkt"); got == nil || len(got) != 0 {
		t.Errorf("after ResetStats: %v", got)
	}
}
