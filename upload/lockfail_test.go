package upload

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/internal/state"
)

// A state lock that cannot be made for a reason other than a live holder
// (here a directory where its file goes, which refuses even root, as a
// read-only or full state directory would) does not throw the partial file
// away: the download resumes from its record, and says it had no lock.
func TestDownloadResumesWhenLockFails(t *testing.T) {
	t.Parallel()
	srv, st, dir, content, partial := interruptedGzip(t)
	dst := filepath.Join(dir, "big")
	key := state.Key(state.KindDownload, "gs://"+testBucket+"/big", dst, "")
	if err := os.MkdirAll(filepath.Join(st, key+".lock", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv, func(o *Options) { o.StateDir = st })
	r, err := c.Download(context.Background(), URL{testBucket, "big"}, dst, DownloadOptions{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusResumed || r.ResumedFrom != int64(len(partial)) {
		t.Errorf("%s from %d, want resumed from the partial's %d bytes", r.Status, r.ResumedFrom, len(partial))
	}
	if !strings.Contains(r.Note, "resumed without the state lock") || !strings.Contains(r.Note, key+".lock") {
		t.Errorf("note %q does not say the lock failed, naming it", r.Note)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, content) {
		t.Errorf("the file has %d bytes, want the %d of the content", len(got), len(content))
	}
}
