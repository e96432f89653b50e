package resumable

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// changingFile returns different bytes at offset `at` from its second read
// of that offset on: a file modified while it is uploaded.
type changingFile struct {
	*bytes.Reader
	at    int64
	reads atomic.Int32
}

func (f *changingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.Reader.ReadAt(p, off)
	if off <= f.at && f.at < off+int64(n) && f.reads.Add(1) > 1 {
		p[f.at-off] ^= 0xff
	}
	return n, err
}

// TestServerRejectsChangedSource: the final chunk's X-Goog-Hash was computed
// from the first read; the bytes sent differ, so the server refuses to
// create the object.
func TestServerRejectsChangedSource(t *testing.T) {
	e := newEnv(t, kib256)
	data := testData(kib256 + 5000)
	src := &changingFile{Reader: bytes.NewReader(data), at: kib256 + 100}
	s, err := e.c.Start(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.c.Upload(context.Background(), s, src)
	var ce *ChecksumError
	if !errors.Is(err, ErrChecksumMismatch) || !errors.As(err, &ce) || !strings.Contains(err.Error(), "doesn't match calculated CRC32C") {
		t.Fatalf("error %v; want the server's checksum rejection", err)
	}
	if _, _, err := e.srv.Object("bkt", "o"); err == nil {
		t.Fatal("the object was created from changed data")
	}
	if len(e.clk.Sleeps()) != 0 {
		t.Errorf("a checksum rejection was retried %d times", len(e.clk.Sleeps()))
	}
}

// TestUploadMD5 sends the MD5 with the final chunk and the server checks it.
func TestUploadMD5(t *testing.T) {
	e := newEnv(t, kib256)
	e.c.opts.MD5 = true
	data := testData(3*kib256 + 1)
	for _, stream := range []bool{false, true} {
		obj, err := e.upload(t, data, stream)
		if err != nil {
			t.Fatal(err)
		}
		_, attrs, _ := e.srv.Object("bkt", "o")
		sum := md5.Sum(data)
		if !bytes.Equal(attrs.MD5, sum[:]) || obj.Md5Hash == "" {
			t.Fatalf("md5 %x, object %q", attrs.MD5, obj.Md5Hash)
		}
	}
}

// TestUploadSourceTooShort: a file shorter than the session's size is a
// SourceError, not retried.
func TestUploadSourceTooShort(t *testing.T) {
	e := newEnv(t, kib256)
	data := testData(2 * kib256)
	s, err := e.c.Start(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: int64(len(data)) + 10})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.c.Upload(context.Background(), s, bytes.NewReader(data))
	var se *SourceError
	if !errors.As(err, &se) || len(e.clk.Sleeps()) != 0 {
		t.Fatalf("error %v after %d retries; want a SourceError at once", err, len(e.clk.Sleeps()))
	}
	s, _ = e.c.Start(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: int64(len(data)) + 10})
	_, err = e.c.UploadStream(context.Background(), s, bytes.NewReader(data))
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "stream ended before its declared size") {
		t.Fatalf("stream error %v", err)
	}
}

func TestOptions(t *testing.T) {
	for _, n := range []int{-1, 1000, kib256 + 1} {
		if _, err := New(Options{ChunkSize: n}); err == nil || !strings.Contains(err.Error(), "multiple of 256 KiB") {
			t.Errorf("chunk size %d: %v", n, err)
		}
	}
	c, err := New(Options{Endpoint: "http://127.0.0.1:9/storage/v1/"})
	if err != nil || c.endpoint != "http://127.0.0.1:9" || c.ChunkSize() != DefaultChunkSize || c.stall != DefaultStallTimeout {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	if _, err := c.Start(context.Background(), ObjectSpec{Bucket: "bkt"}); err == nil {
		t.Error("Start without a name succeeded")
	}
}
