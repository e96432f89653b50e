package upload

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// UploadOptions.IfGenerationMatch is a *int64 as CopyOptions' is: nil is no condition,
// a pointer to 0 only if absent (an existing object fails the upload and is kept; a free
// name is written), N only over generation N. Both upload paths (one request, resumable).
func TestUploadIfGenerationMatchZeroIsOnlyIfAbsent(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	dir := t.TempDir()
	for _, size := range []int{100, 9 << 20} {
		src := filepath.Join(dir, "f")
		if err := os.WriteFile(src, randBytes(size, uint64(size)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.PutObject(testBucket, "taken", []byte("old")); err != nil {
			t.Fatal(err)
		}
		zero := new(int64)
		r, err := c.UploadFile(context.Background(), src, URL{Bucket: testBucket, Object: "taken"}, UploadOptions{IfGenerationMatch: zero})
		if got, _, _ := srv.Object(testBucket, "taken"); !errors.Is(err, resumable.ErrPreconditionFailed) || string(got) != "old" ||
			!strings.Contains(err.Error(), "not written: the object exists (IfGenerationMatch 0: only if absent)") || r.Status != StatusFailed {
			t.Errorf("%d bytes over an existing object: %v (status %s), object %q", size, err, r.Status, got[:min(len(got), 8)])
		}
		free := URL{Bucket: testBucket, Object: "free-" + strconv.Itoa(size)}
		if r, err := c.UploadFile(context.Background(), src, free, UploadOptions{IfGenerationMatch: zero}); err != nil || r.Status != StatusUploaded {
			t.Errorf("%d bytes into a free name: %v (%+v)", size, err, r)
		}
	}
}

// A record saved when IfGenerationMatch was an int64 (0 for none, so never written when
// 0) decodes the same: a generation stays that generation, its absence no condition.
func TestOldRecordIfGenerationMatchDecodes(t *testing.T) {
	for raw, want := range map[string]*int64{`{"if_generation_match":42}`: new(int64(42)), `{"if_absent":true}`: nil, `{}`: nil} {
		var o UploadOptions
		if err := decodeOptions(json.RawMessage(raw), &o); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if (o.IfGenerationMatch == nil) != (want == nil) || want != nil && *o.IfGenerationMatch != *want {
			t.Errorf("%s: IfGenerationMatch %v, want %v", raw, o.IfGenerationMatch, want)
		}
	}
	if b, _ := json.Marshal(UploadOptions{IfGenerationMatch: new(int64)}); !strings.Contains(string(b), `"if_generation_match":0`) {
		t.Errorf("only-if-absent is not kept in a record: %s", b)
	}
}
