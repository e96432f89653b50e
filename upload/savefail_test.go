package upload

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// matching counts the warnings that contain s.
func (w *warnings) matching(s string) int {
	n := 0
	for _, m := range w.all() {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

// TestStateSaveFailureIsReported: with a state directory that cannot be written (here it is
// gone after New, as a full disk would refuse), transfers go on, each Result says its
// state was not saved (SaveErr, Saved false), and the first failure is one warning.
func TestStateSaveFailureIsReported(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	var warned warnings
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, srv, func(o *Options) {
		o.SmallFileThreshold = -1
		o.Warn = warned.add
		o.OnEvent = func(e resumable.Event) {
			if e.Object == "cut.bin" && e.Kind == resumable.EventChunk {
				cancel()
			}
		}
	})
	gone := filepath.Join(t.TempDir(), "unmounted")
	c.store.Dir = gone
	dir := t.TempDir()
	data := randBytes(1<<20, 21)
	for _, name := range []string{"a.bin", "b.bin"} {
		r, err := c.UploadFile(context.Background(), writeTemp(t, dir, name, data), URL{testBucket, name}, UploadOptions{})
		if err != nil {
			t.Fatalf("%s: %v (a failed save must not fail the upload)", name, err)
		}
		wantObject(t, srv, name, data)
		wantNotSaved(t, r)
	}
	r, _ := c.UploadFile(ctx, writeTemp(t, dir, "cut.bin", data), URL{testBucket, "cut.bin"}, UploadOptions{})
	if r.Status != StatusInterrupted {
		t.Fatalf("cut.bin: %s, want interrupted", r.Status)
	}
	wantNotSaved(t, r)
	if n := warned.matching("cannot save transfer state in the state directory " + gone); n != 1 || len(warned.all()) != 1 {
		t.Errorf("warnings %q: want exactly one about the state directory", warned.all())
	}
}

// TestStateSaveFailureOfDownload: a download interrupted with its state unsaved says so.
func TestStateSaveFailureOfDownload(t *testing.T) {
	// The body stalls after 1 MiB until the client gives up: the cancel always lands mid-way.
	srv := newServer(t, fakegcs.Options{Faults: []fakegcs.Fault{{Op: "storage.objects.get", Phase: fakegcs.PhaseMedia,
		Kind: fakegcs.KindStall, AfterBytes: 1 << 20, Delay: time.Hour}}})
	srv.PutObject(testBucket, "o", randBytes(2<<20, 22))
	var warned warnings
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, srv, func(o *Options) {
		o.Warn = warned.add
		o.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventProgress {
				cancel()
			}
		}
	})
	c.store.Dir = filepath.Join(t.TempDir(), "unmounted")
	r, _ := c.Download(ctx, URL{testBucket, "o"}, filepath.Join(t.TempDir(), "o"), DownloadOptions{})
	if r.Status != StatusInterrupted {
		t.Fatalf("download: %s (%v), want interrupted", r.Status, r.Err)
	}
	wantNotSaved(t, r)
	if warned.matching("cannot save transfer state") != 1 {
		t.Errorf("warnings %q", warned.all())
	}
}

// wantNotSaved fails unless r reports that its state could not be saved, with the cause.
func wantNotSaved(t *testing.T, r *Result) {
	t.Helper()
	if r.Saved || !errors.Is(r.SaveErr, ErrNotSaved) || !errors.Is(r.SaveErr, fs.ErrNotExist) || !strings.Contains(r.SaveErr.Error(), r.Dest) {
		t.Errorf("%s: Saved %v, SaveErr %v; want not saved, matching ErrNotSaved and naming the cause", r.Dest, r.Saved, r.SaveErr)
	}
}
