package upload

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// A saved resumable session was started without a precondition; the rerun asks
// IfGenerationMatch 0 (only if absent) and meanwhile the object exists. The old
// session carries no condition: resuming it would replace the object the caller
// said must not be replaced. The rerun must start over under its own condition
// and fail, leaving the object as it was.
func TestResumedUploadKeepsNewIfGenerationMatchZero(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	state := filepath.Join(t.TempDir(), "state")
	data := randBytes(9<<20, 29)
	src := writeTemp(t, t.TempDir(), "f", data)
	dst := URL{Bucket: testBucket, Object: "taken"}
	c, ctx := stoppingClient(t, srv, state, 1<<20)
	if _, err := c.UploadFile(ctx, src, dst, UploadOptions{}); err == nil {
		t.Fatal("the first upload was not stopped")
	}
	if _, _, err := srv.Object(testBucket, "taken"); err == nil {
		t.Fatal("the stopped upload wrote the object")
	}
	if _, err := srv.PutObject(testBucket, "taken", []byte("old")); err != nil {
		t.Fatal(err)
	}
	c2 := newClient(t, srv, func(o *Options) { o.StateDir = state })
	r, err := c2.UploadFile(context.Background(), src, dst, UploadOptions{IfGenerationMatch: new(int64)})
	got, _, _ := srv.Object(testBucket, "taken")
	if !errors.Is(err, resumable.ErrPreconditionFailed) || string(got) != "old" || r.Status != StatusFailed || !strings.Contains(r.Note, "other preconditions") ||
		!strings.Contains(err.Error(), "not written: the object exists (IfGenerationMatch 0: only if absent)") {
		t.Errorf("rerun with IfGenerationMatch 0 over an existing object: %v (status %s, note %q), object %d bytes %q",
			err, r.Status, r.Note+fmt.Sprintf(" resumedFrom=%d attempts=%d", r.ResumedFrom, r.Attempts), len(got), got[:min(len(got), 8)])
	}
}
