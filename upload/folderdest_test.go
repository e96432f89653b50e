package upload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// TestUploadFileToFolder: a destination object ending in "/" (or a bucket
// alone) is a folder, as in the CLI: the file's base name is appended, never
// an object named "dir/".
func TestUploadFileToFolder(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	data := randBytes(1000, 3)
	src := writeTemp(t, t.TempDir(), "report.csv", data)
	for _, tc := range []struct{ dst, want string }{
		{"gs://bkt/dir/", "dir/report.csv"},
		{"gs://bkt", "report.csv"},
	} {
		dst, err := ParseURL(tc.dst)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.dst, err)
		}
		if r.Object != tc.want || r.Dest != "gs://bkt/"+tc.want {
			t.Errorf("%s: result object %q dest %q, want %q", tc.dst, r.Object, r.Dest, tc.want)
		}
		wantObject(t, srv, tc.want, data)
	}
	if _, _, err := srv.Object(testBucket, "dir/"); err == nil {
		t.Errorf(`an object "dir/" was made`)
	}
}

// TestDownloadToFolder: a local destination ending in "/" is a folder, made
// if missing, and the object's base name is appended, as in the CLI; an
// object whose base name is no file name is refused (ErrUnsafePath).
func TestDownloadToFolder(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(1000, 4)
	if _, err := srv.PutObject(testBucket, "a/report.csv", data); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv, nil)
	out := filepath.Join(t.TempDir(), "out-dir") + string(filepath.Separator)
	r, err := c.Download(context.Background(), URL{Bucket: testBucket, Object: "a/report.csv"}, out, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(out, "report.csv")
	if r.Dest != want {
		t.Errorf("result dest %q, want %q", r.Dest, want)
	}
	if got, err := os.ReadFile(want); err != nil || string(got) != string(data) {
		t.Errorf("%s: %d bytes, %v; want the object's %d", want, len(got), err, len(data))
	}
	// Through a batch too.
	out2 := filepath.Join(t.TempDir(), "o2") + "/"
	if _, err := c.DownloadObjects(context.Background(), []Item{{Local: out2, Remote: URL{Bucket: testBucket, Object: "a/report.csv"}}}, DownloadOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(out2, "report.csv")); err != nil || string(got) != string(data) {
		t.Errorf("DownloadObjects into %s: %d bytes, %v", out2, len(got), err)
	}
	if _, err := srv.PutObject(testBucket, "a/..", data); err != nil {
		t.Fatal(err)
	}
	_, err = c.Download(context.Background(), URL{Bucket: testBucket, Object: "a/.."}, out, DownloadOptions{})
	if !errors.Is(err, ErrUnsafePath) {
		t.Errorf(`object "a/.." into %s: %v, want ErrUnsafePath`, out, err)
	}
}
