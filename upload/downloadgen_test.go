package upload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// DownloadOptions.Generation asks for one generation: Download writes that
// one (it used to write the live one, silently), and the calls over many
// objects, where one generation cannot fit every object, refuse it
// (ErrBadOption) before any request, as a move does.
func TestDownloadGeneration(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	if err := srv.SetVersioning(testBucket, true); err != nil {
		t.Fatal(err)
	}
	old, err := srv.PutObject(testBucket, "v", []byte("old bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.PutObject(testBucket, "v", []byte("live")); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv, nil)
	ctx := context.Background()
	u := URL{testBucket, "v"}
	dir := t.TempDir()
	f := filepath.Join(dir, "v")
	r, err := c.Download(ctx, u, f, DownloadOptions{Generation: old.Generation})
	if err != nil || r.Generation != old.Generation || r.Size != 9 {
		t.Fatalf("Download of generation %d: %v, %+v", old.Generation, err, r)
	}
	if got, err := os.ReadFile(f); err != nil || string(got) != "old bytes" {
		t.Fatalf("the file holds %q (%v), want the old generation's bytes", got, err)
	}

	const want = "upload: bad option: DownloadOptions.Generation names one object's generation: use Download or DownloadWriter, one object at a time"
	batch := DownloadOptions{Generation: old.Generation}
	if _, err := c.DownloadObjects(ctx, []Item{{Local: filepath.Join(dir, "x"), Remote: u}}, batch); !errors.Is(err, ErrBadOption) || err.Error() != want {
		t.Errorf("DownloadObjects: %v", err)
	}
	if _, err := c.DownloadPrefix(ctx, URL{testBucket, ""}, filepath.Join(dir, "p"), batch); !errors.Is(err, ErrBadOption) || err.Error() != want {
		t.Errorf("DownloadPrefix: %v", err)
	}
	r, err = c.Move(ctx, RemoteSide(u), LocalSide(filepath.Join(dir, "m")), MoveOptions{Download: batch})
	if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "a move reads the live generation") || r.Status != StatusFailed {
		t.Errorf("Move: %v", err)
	}
	if got, _, err := srv.Object(testBucket, "v"); err != nil || string(got) != "live" {
		t.Errorf("after the refused move the object holds %q (%v), want the live bytes", got, err)
	}
}
