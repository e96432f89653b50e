package fakegcs_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/gcsput/gcsput/fakegcs"
)

// TestClientMove: the official client's ObjectHandle.Move renames an object
// in one storage.objects.move call, keeping its bytes, hashes and metadata
// under a new generation, under preconditions on both sides.
func TestClientMove(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	ctx := context.Background()
	data := randBytes(300<<10, 7)
	src := upload(t, c, "bkt", "a/src", data, 256<<10)
	other, err := srv.PutObject("bkt", "a/taken", []byte("keep me"))
	if err != nil {
		t.Fatal(err)
	}
	bkt := c.Bucket("bkt")

	// The destination exists: ifGenerationMatch=0 refuses, nothing moves.
	_, err = bkt.Object("a/src").Move(ctx, storage.MoveObjectDestination{Object: "a/taken", Conditions: &storage.Conditions{DoesNotExist: true}})
	assertCode(t, "move onto an existing object under DoesNotExist", err, http.StatusPreconditionFailed)
	// The source is not the generation named: 412, nothing moves.
	_, err = bkt.Object("a/src").If(storage.Conditions{GenerationMatch: src.Generation + 1}).Move(ctx, storage.MoveObjectDestination{Object: "b/dst"})
	assertCode(t, "move of another generation", err, http.StatusPreconditionFailed)
	_, err = bkt.Object("a/src").Move(ctx, storage.MoveObjectDestination{Object: "a/src"})
	assertCode(t, "move onto itself", err, http.StatusBadRequest)
	_, err = bkt.Object("a/none").Move(ctx, storage.MoveObjectDestination{Object: "b/dst"})
	if !errors.Is(err, storage.ErrObjectNotExist) {
		t.Fatalf("move of a missing object: %v, want ErrObjectNotExist", err)
	}
	if got := bucketNames(t, srv); !equal(got, []string{"a/src", "a/taken"}) {
		t.Fatalf("after refused moves the bucket holds %q", got)
	}

	srv.ResetStats()
	got, err := bkt.Object("a/src").If(storage.Conditions{GenerationMatch: src.Generation}).
		Move(ctx, storage.MoveObjectDestination{Object: "b/dst", Conditions: &storage.Conditions{DoesNotExist: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "b/dst" || got.Generation <= src.Generation || got.Metageneration != 1 || got.CRC32C != src.CRC32C ||
		!bytes.Equal(got.MD5, src.MD5) || got.ContentType != "application/x-test" || got.Metadata["k"] != "v" {
		t.Fatalf("moved object: %+v, source was %+v", got, src)
	}
	if b := read(t, c, "bkt", "b/dst", 0, -1); !bytes.Equal(b, data) {
		t.Fatalf("moved object holds %d bytes, not the %d uploaded", len(b), len(data))
	}
	st := srv.Stats()
	if st.Requests["storage.objects.move"] != 1 || st.BytesRewritten != 0 || st.Requests["storage.objects.rewrite"]+st.Requests["storage.objects.copy"] != 0 {
		t.Fatalf("stats after one move: %v, %d bytes rewritten", st.Requests, st.BytesRewritten)
	}
	if got := bucketNames(t, srv); !equal(got, []string{"a/taken", "b/dst"}) {
		t.Fatalf("after the move the bucket holds %q", got)
	}

	// Replacing an existing destination under ifGenerationMatch of it.
	if _, err := bkt.Object("b/dst").Move(ctx, storage.MoveObjectDestination{Object: "a/taken",
		Conditions: &storage.Conditions{GenerationMatch: other.Generation}}); err != nil {
		t.Fatal(err)
	}
	if b := read(t, c, "bkt", "a/taken", 0, -1); !bytes.Equal(b, data) {
		t.Fatal("the replaced destination does not hold the moved bytes")
	}
}

// TestMoveRefusesRetainedObjects: an object under the bucket's retention
// policy can be neither moved away (its name would be deleted) nor replaced
// by a move.
func TestMoveRefusesRetainedObjects(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	ctx := context.Background()
	for _, n := range []string{"x", "y"} {
		if _, err := srv.PutObject("bkt", n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Bucket("bkt").Update(ctx, storage.BucketAttrsToUpdate{RetentionPolicy: &storage.RetentionPolicy{RetentionPeriod: 3600e9}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Bucket("bkt").Object("x").Move(ctx, storage.MoveObjectDestination{Object: "z"})
	assertCode(t, "move of a retained object", err, http.StatusForbidden)
	if got := bucketNames(t, srv); !equal(got, []string{"x", "y"}) {
		t.Fatalf("the bucket holds %q", got)
	}
}

func assertCode(t *testing.T, what string, err error, code int) {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != code {
		t.Fatalf("%s: %v, want HTTP %d", what, err, code)
	}
}

func bucketNames(t *testing.T, srv *fakegcs.Server) []string {
	t.Helper()
	n, err := srv.ObjectNames("bkt")
	if err != nil {
		t.Fatal(err)
	}
	return n
}
