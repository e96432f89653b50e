package upload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// An edit in place between a kill and the rerun, with size and mtime put
// back (dd conv=notrunc; touch -r), still changes the status change time:
// the rerun starts over and the object is the new content, never a mix.
func TestResumeNoticesEditWithRestoredMtime(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	state := t.TempDir()
	data := randBytes(2<<20, 11)
	src := writeTemp(t, t.TempDir(), "f.bin", data)
	fi, _ := os.Stat(src)
	interrupt(t, srv, state, src, "f.bin", 512<<10)

	f, _ := os.OpenFile(src, os.O_WRONLY, 0)
	f.WriteAt(bytes.Repeat([]byte("EDIT"), 1024), 100) // inside the part the server already has
	f.Close()
	if err := os.Chtimes(src, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	edited, _ := os.ReadFile(src)
	if now, _ := os.Stat(src); now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		t.Fatal("size and mtime were not restored")
	}

	c := newClient(t, srv, func(o *Options) { o.StateDir = state; o.SmallFileThreshold = -1 })
	r, err := c.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "f.bin", edited)
	want := "source changed since the saved session (file was modified (status change time changed)): started over"
	if r.Status != StatusRestarted || r.Note != want || r.ResumedFrom != 0 {
		t.Errorf("result %s %q from %d; want restarted %q", r.Status, r.Note, r.ResumedFrom, want)
	}
}

// A file that changes during its upload is caught before the final request:
// the session is cancelled, the object is not created (or, when it existed,
// not replaced), and the error says "changed while being uploaded". A
// truncated file says the same, not "unexpected EOF".
func TestSourceChangedDuringUploadIsNotFinalized(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(path string)
	}{
		{"rewritten", func(p string) {
			f, _ := os.OpenFile(p, os.O_WRONLY, 0)
			f.WriteAt([]byte("changed"), 10)
			f.Close()
		}},
		{"truncated", func(p string) { os.Truncate(p, 700<<10) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{})
			old := []byte("the good object")
			srv.PutObject(testBucket, "f.bin", old)
			src := writeTemp(t, t.TempDir(), "f.bin", randBytes(1<<20+5, 12))
			edited := false
			c := newClient(t, srv, func(o *Options) {
				o.SmallFileThreshold = -1
				o.OnEvent = func(e resumable.Event) {
					if e.Kind == resumable.EventChunk && e.Persisted >= 512<<10 && !edited {
						edited = true
						tc.edit(src)
					}
				}
			})
			r, err := c.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{})
			if err == nil || !strings.Contains(err.Error(), src+" changed while being uploaded (") ||
				!strings.Contains(err.Error(), "nothing was written to gs://bkt/f.bin") || r.Status != StatusFailed {
				t.Fatalf("%s: %v", r.Status, err)
			}
			if strings.Contains(err.Error(), "EOF") {
				t.Errorf("error mentions EOF: %v", err)
			}
			wantObject(t, srv, "f.bin", old)
			st, _ := srv.LastSession(testBucket, "f.bin")
			if st.State != "cancelled" {
				t.Errorf("session %s, want cancelled", st.State)
			}
			if recs, _ := c.store.List(); len(recs) != 0 {
				t.Errorf("records left: %+v", recs)
			}
			if r.Saved || errors.Is(err, context.Canceled) {
				t.Errorf("result %+v", r)
			}
		})
	}
}
