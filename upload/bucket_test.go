package upload

import (
	"context"
	"errors"
	"slices"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
)

// TestTestPermissions: TestPermissions answers which permissions the credentials hold, in one request, and
// a bucket that does not exist as storage.ErrBucketNotExist, not retried.
func TestTestPermissions(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	ctx := context.Background()
	perms := []string{"storage.objects.create", "storage.objects.list"}
	got, err := c.TestPermissions(ctx, "bkt", perms...)
	if err != nil || !slices.Equal(got, perms) {
		t.Errorf("bkt: %v, %v; want %v", got, err, perms)
	}
	_, err = c.TestPermissions(ctx, "nobkt", perms...)
	if !errors.Is(err, storage.ErrBucketNotExist) {
		t.Errorf("nobkt: %v, want storage.ErrBucketNotExist", err)
	}
	if n := srv.Count("storage.buckets.testIamPermissions"); n != 2 {
		t.Errorf("%d requests, want 2 (a missing bucket is not retried)", n)
	}
}
