package resumable

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"hash/crc32"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"google.golang.org/api/googleapi"
)

// memAt is an in-memory io.WriterAt and io.ReaderAt.
type memAt struct{ b []byte }

func (m *memAt) WriteAt(p []byte, off int64) (int, error) {
	if need := int(off) + len(p); need > len(m.b) {
		m.b = append(m.b, make([]byte, need-len(m.b))...)
	}
	return copy(m.b[off:], p), nil
}

func TestDownloadAtContinuesPartialFile(t *testing.T) {
	e := newEnv(t, kib256)
	data := testData(1<<20 + 3)
	attrs, err := e.srv.PutObject("bkt", "o", data)
	if err != nil {
		t.Fatal(err)
	}
	// A previous process wrote the first 400000 bytes to the file.
	path := filepath.Join(t.TempDir(), "part")
	if err := os.WriteFile(path, data[:400000], 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := e.c.DownloadAt(context.Background(),
		DownloadSpec{Bucket: "bkt", Object: "o", Generation: attrs.Generation, Offset: 400000}, f)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, data) || !res.Verified || res.Size != int64(len(data)) {
		t.Fatalf("file has %d bytes, result %+v", len(got), res)
	}
	if log := e.srv.Log(); len(log) != 1 || log[0].Range != "bytes=400000-" || log[0].BytesOut != int64(len(data)-400000) {
		t.Fatalf("requests %+v", log)
	}

	// A damaged prefix is caught by the whole-object CRC32C.
	f.WriteAt([]byte{data[10] ^ 1}, 10)
	_, err = e.c.DownloadAt(context.Background(),
		DownloadSpec{Bucket: "bkt", Object: "o", Generation: attrs.Generation, Offset: 400000}, f)
	if !errors.Is(err, ErrChecksumMismatch) {
		t.Fatalf("damaged prefix: %v", err)
	}

	// Offset at the very end: 416, then the checksum from the metadata.
	f.WriteAt(data[10:11], 10)
	res, err = e.c.DownloadAt(context.Background(),
		DownloadSpec{Bucket: "bkt", Object: "o", Generation: attrs.Generation, Offset: int64(len(data))}, f)
	if err != nil || !res.Verified {
		t.Fatalf("offset at the end: %+v, %v", res, err)
	}

	_, err = e.c.DownloadAt(context.Background(), DownloadSpec{Bucket: "bkt", Object: "o", Offset: 5}, f)
	if err == nil || !strings.Contains(err.Error(), "needs a non-negative Offset and the Generation") {
		t.Fatalf("offset without generation: %v", err)
	}
}

// TestDownloadPinsGeneration replaces the object while a download is
// broken: the resumed request names the first generation, so it fails
// instead of splicing two objects.
func TestDownloadPinsGeneration(t *testing.T) {
	e := newEnv(t, kib256)
	data := testData(1 << 20)
	if _, err := e.srv.PutObject("bkt", "o", data); err != nil {
		t.Fatal(err)
	}
	e.srv.Inject(withAfter(getFault(fakegcs.KindTruncate, 0), 500000))
	e.hook = func(ev Event) {
		if ev.Kind == EventStarted {
			if _, err := e.srv.PutObject("bkt", "o", testData(1<<20+1)); err != nil {
				t.Error(err)
			}
		}
	}
	var buf bytes.Buffer
	_, err := e.c.Download(context.Background(), DownloadSpec{Bucket: "bkt", Object: "o"}, &buf)
	var g *googleapi.Error
	if !errors.As(err, &g) || g.Code != http.StatusNotFound {
		t.Fatalf("error %v; want a 404 for the replaced generation", err)
	}
	if buf.Len() > 500000 || !bytes.Equal(buf.Bytes(), data[:buf.Len()]) {
		t.Fatalf("destination holds %d bytes not from the first generation", buf.Len())
	}
}

func TestDownloadEmptyObject(t *testing.T) {
	e := newEnv(t, kib256)
	if _, err := e.srv.PutObject("bkt", "empty", nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	res, err := e.c.Download(context.Background(), DownloadSpec{Bucket: "bkt", Object: "empty"}, &buf)
	if err != nil || buf.Len() != 0 || !res.Verified || res.Size != 0 || res.Hashes.CRC32C != 0 {
		t.Fatalf("empty download: %+v, %v", res, err)
	}
}

func TestUploadEmptyObject(t *testing.T) {
	for _, stream := range []bool{false, true} {
		e := newEnv(t, kib256)
		obj, err := e.upload(t, nil, stream)
		if err != nil {
			t.Fatal(err)
		}
		e.checkStored(t, "o", nil, obj.Crc32c)
		if log := e.srv.Log(); log[len(log)-1].ContentRange != "bytes */0" {
			t.Errorf("final request %q, want bytes */0", log[len(log)-1].ContentRange)
		}
	}
}

// TestDownloadGzip shows what happens to gzip-encoded objects: by default
// the stored (compressed) bytes arrive, verified and resumable; with
// Decompress the server transcodes, so the result is not verified, and a
// break restarts from zero (DownloadAt) or fails (Download).
func TestDownloadGzip(t *testing.T) {
	e := newEnv(t, kib256)
	plain := bytes.Repeat([]byte("gcsput transcoding test line\n"), 40000)
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	zw.Write(plain)
	zw.Close()
	gz := zbuf.Bytes()
	s, err := e.c.Start(context.Background(), ObjectSpec{Bucket: "bkt", Name: "z", Size: int64(len(gz)),
		ContentType: "text/plain", ContentEncoding: "gzip"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Upload(context.Background(), s, bytes.NewReader(gz)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// Stored bytes, through a broken stream.
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "z", Kind: fakegcs.KindTruncate, AfterBytes: 10000})
	var buf bytes.Buffer
	res, err := e.c.Download(ctx, DownloadSpec{Bucket: "bkt", Object: "z"}, &buf)
	if err != nil || !bytes.Equal(buf.Bytes(), gz) || !res.Verified || res.Transcoded || res.ContentEncoding != "gzip" || res.Resumes != 1 {
		t.Fatalf("stored download: %d bytes, %+v, %v", buf.Len(), res, err)
	}

	// Transcoded: decompressed bytes, not verified.
	buf.Reset()
	res, err = e.c.Download(ctx, DownloadSpec{Bucket: "bkt", Object: "z", Decompress: true}, &buf)
	if err != nil || !bytes.Equal(buf.Bytes(), plain) || res.Verified || !res.Transcoded || res.Hashes.CRC32C != crc32.Checksum(gz, castagnoli) {
		t.Fatalf("transcoded download: %d bytes, %+v, %v", buf.Len(), res, err)
	}

	// Transcoded and broken: a WriterAt restarts from zero...
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "z", Kind: fakegcs.KindTruncate, AfterBytes: 100000})
	var at memAt
	res, err = e.c.DownloadAt(ctx, DownloadSpec{Bucket: "bkt", Object: "z", Decompress: true}, &at)
	if err != nil || !bytes.Equal(at.b, plain) || res.Resumes != 1 {
		t.Fatalf("transcoded DownloadAt after a break: %d bytes, %+v, %v", len(at.b), res, err)
	}
	// ...a Writer that already holds bytes cannot. (A stall, not a reset,
	// so that the bytes before the break surely arrive.)
	e.c.stall = 200 * time.Millisecond
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "z", Kind: fakegcs.KindStall, AfterBytes: 1000, Delay: 5 * time.Second})
	buf.Reset()
	_, err = e.c.Download(ctx, DownloadSpec{Bucket: "bkt", Object: "z", Decompress: true}, &buf)
	if err == nil || !strings.Contains(err.Error(), "transcoded (decompressed) download cannot resume") {
		t.Fatalf("transcoded Download after a break: %v", err)
	}
}
