package upload_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gcsput/gcsput/upload"
)

// Without a state directory (NoState) the compressed copies of CopyAll's
// GzipAll went to a fixed scratch directory under the system temp dir, at a
// name made from the file's path, and a copy found there was reused when its
// gzip trailer matched the file: any local user could plant one, and its
// bytes were uploaded as the file's. Now such a call compresses into a
// private directory of its own, and the object holds the file's bytes.
func TestCopyAllGzipNoStateIgnoresPlantedCopy(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // what os.TempDir returns: the planted copy stays in this test
	srv, c := opsClient(t)  // NoState
	dir := t.TempDir()
	want := []byte("the file's own bytes\n")
	src := filepath.Join(dir, "page.html")
	if err := os.WriteFile(src, want, 0o644); err != nil {
		t.Fatal(err)
	}
	// The planted copy: other content, its trailer forged to the file's
	// CRC-32 and length, its mtime the file's.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("PLANTED by someone else"))
	zw.Close()
	forged := buf.Bytes()
	binary.LittleEndian.PutUint32(forged[len(forged)-8:], crc32.ChecksumIEEE(want))
	binary.LittleEndian.PutUint32(forged[len(forged)-4:], uint32(len(want)))
	abs, _ := filepath.Abs(src)
	sum := sha256.Sum256([]byte(abs))
	scratch := filepath.Join(tmp, "gcsput-gzip", "gzip")
	if err := os.MkdirAll(scratch, 0o777); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(scratch, hex.EncodeToString(sum[:12])+".gz")
	if err := os.WriteFile(planted, forged, 0o666); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(src)
	os.Chtimes(planted, time.Time{}, fi.ModTime())

	if _, err := c.CopyAll(context.Background(), []string{src}, "gs://dst/site/", upload.CopyAllOptions{GzipAll: true}); err != nil {
		t.Fatal(err)
	}
	stored, _, err := srv.Object("dst", "site/page.html")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(stored))
	var got []byte
	if err == nil {
		got, err = io.ReadAll(zr)
	}
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("the object decompresses to %q (%v); want the file's %q", got, err, want)
	}
}
