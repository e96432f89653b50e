package upload

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/gzmeta"
)

// gzipOf makes a gzip stream of data: stored blocks, which cost the race
// detector little, after one compressed member (gzip streams may have
// several, and a reader must join them).
func gzipOf(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	head := min(len(data), 4096)
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data[:head]); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data = data[head:]
	zw, _ = gzip.NewWriterLevel(&b, gzip.NoCompression)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// putGzip stores stored as name with Content-Encoding: gzip.
func putGzip(t testing.TB, srv *fakegcs.Server, name string, stored []byte) {
	t.Helper()
	if _, err := srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: testBucket, Name: name, ContentEncoding: "gzip"}, bytes.NewReader(stored)); err != nil {
		t.Fatal(err)
	}
}

// A gzip-encoded object is fetched as stored (verified against the stored
// bytes' CRC32C), and with Decompress written decompressed; without it, as
// stored. A break during the transfer resumes the stored bytes with a Range.
func TestDownloadDecompressesGzipObject(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	content := randBytes(3<<20, 4)
	stored := gzipOf(t, content)
	putGzip(t, srv, "log.txt", stored)
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "log.txt", Offset: new(int64(0)),
		Kind: fakegcs.KindTruncate, AfterBytes: 1 << 20})
	c := newClient(t, srv, nil)
	dir := t.TempDir()
	dst := filepath.Join(dir, "log.txt")
	r, err := c.Download(context.Background(), URL{testBucket, "log.txt"}, dst, DownloadOptions{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, content) {
		t.Fatalf("the file has %d bytes, want the %d decompressed ones", len(got), len(content))
	}
	if r.Size != int64(len(stored)) || r.Decompressed != int64(len(content)) || r.Attempts != 2 {
		t.Errorf("result: size %d (stored %d), decompressed %d (want %d), attempts %d (want 2: the break)",
			r.Size, len(stored), r.Decompressed, len(content), r.Attempts)
	}
	if left := leftovers(t, dir); len(left) != 0 {
		t.Errorf("left beside the target: %q", left)
	}
	raw := filepath.Join(dir, "raw.gz")
	if _, err := c.Download(context.Background(), URL{testBucket, "log.txt"}, raw, DownloadOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(raw); !bytes.Equal(got, stored) {
		t.Error("without Decompress the file is not the stored bytes")
	}
}

// interruptedGzip stores a gzip object "big" and interrupts its download
// into dir after 1 MiB, as a kill would: the partial file holds the first
// stored bytes and the state directory its record.
func interruptedGzip(t *testing.T) (srv *fakegcs.Server, state, dir string, content, partial []byte) {
	t.Helper()
	srv = newServer(t, fakegcs.Options{})
	content = randBytes(3<<20, 11)
	stored := gzipOf(t, content)
	putGzip(t, srv, "big", stored)
	slow := holdGets(srv, 1536<<10) // the cancel at 1 MiB ends the download
	defer slow.Remove()
	state, dir = t.TempDir(), t.TempDir()
	c, ctx := stoppingClient(t, srv, state, 1<<20)
	r, _ := c.Download(ctx, URL{testBucket, "big"}, filepath.Join(dir, "big"), DownloadOptions{Decompress: true})
	if r.Status != StatusInterrupted {
		t.Fatalf("interrupted download: %+v", r)
	}
	partial, err := os.ReadFile(filepath.Join(dir, ".big"+partialSuffix))
	if err != nil || len(partial) < 1<<20 || !bytes.Equal(partial, stored[:len(partial)]) {
		t.Fatalf("the partial file does not hold the first stored bytes: %d bytes, %v", len(partial), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "big")); err == nil {
		t.Fatal("the target exists before the download finished")
	}
	// What a run killed while decompressing leaves: the next one writes it afresh.
	os.WriteFile(filepath.Join(dir, ".big"+gunzipSuffix), []byte("stale"), 0o600)
	return srv, state, dir, content, partial
}

// A process killed during a gzip object's download leaves the stored bytes
// in the partial file; the next run continues them, then decompresses (over
// what a run killed while decompressing left).
func TestDownloadDecompressResumesAcrossRuns(t *testing.T) {
	t.Parallel()
	srv, state, dir, content, partial := interruptedGzip(t)
	c := newClient(t, srv, func(o *Options) { o.StateDir = state })
	r, err := c.Download(context.Background(), URL{testBucket, "big"}, filepath.Join(dir, "big"), DownloadOptions{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "big")); !bytes.Equal(got, content) || r.Status != StatusResumed || r.ResumedFrom != int64(len(partial)) {
		t.Errorf("resumed: %s from %d (partial %d), content equal %v", r.Status, r.ResumedFrom, len(partial), bytes.Equal(got, content))
	}
	if left := leftovers(t, dir); len(left) != 0 {
		t.Errorf("left beside the target: %q", left)
	}
	if recs, _ := c.Sessions(); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

// Cancelling such a download's session removes its partial file and the
// decompression's file.
func TestCancelDecompressingDownload(t *testing.T) {
	t.Parallel()
	srv, state, dir, _, _ := interruptedGzip(t)
	c := newClient(t, srv, func(o *Options) { o.StateDir = state })
	recs, err := c.Sessions()
	if err != nil || len(recs) != 1 {
		t.Fatalf("sessions: %v %v", recs, err)
	}
	if err := c.CancelSession(context.Background(), recs[0]); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, dir); len(left) != 0 {
		t.Errorf("left after cancel: %q", left)
	}
}

// Stored bytes that match the object's CRC32C but are not gzip (or are a
// gzip stream cut short) fail with ErrNotGzip naming the object; nothing
// is written at the target, no partial is kept, an existing file is left
// as it was; DownloadWriter says the same after writing what decompressed.
func TestDownloadCorruptGzipFails(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	whole := gzipOf(t, randBytes(200<<10, 5))
	for name, stored := range map[string][]byte{"plain.txt": []byte("not gzip at all\n"), "cut.txt": whole[:len(whole)-9]} {
		putGzip(t, srv, name, stored)
		c := newClient(t, srv, nil)
		dir := t.TempDir()
		dst := filepath.Join(dir, name)
		os.WriteFile(dst, []byte("old"), 0o644)
		_, err := c.Download(context.Background(), URL{testBucket, name}, dst, DownloadOptions{Decompress: true})
		want := "download: gs://bkt/" + name + " is stored with Content-Encoding: gzip, but its stored bytes are not a valid gzip stream"
		if !errors.Is(err, ErrNotGzip) || err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want %q…", name, err, want)
		}
		if got, _ := os.ReadFile(dst); string(got) != "old" {
			t.Errorf("%s: the existing file became %q", name, got)
		}
		if left := leftovers(t, dir); len(left) != 0 {
			t.Errorf("%s: left beside the target: %q", name, left)
		}
		if recs, _ := c.Sessions(); len(recs) != 0 {
			t.Errorf("%s: records left: %v", name, recs)
		}
		var out bytes.Buffer
		_, err = c.DownloadWriter(context.Background(), URL{testBucket, name}, &out, DownloadOptions{Decompress: true})
		if !errors.Is(err, ErrNotGzip) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: stream error %v, want %q…", name, err, want)
		}
	}
}

// DownloadWriter with Decompress writes the content of a gzip object, and
// the stored bytes of any other object.
func TestDownloadStreamDecompresses(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	content := randBytes(1<<20+3, 6)
	putGzip(t, srv, "z", gzipOf(t, content))
	srv.PutObject(testBucket, "p", content[:1000])
	c := newClient(t, srv, nil)
	for name, want := range map[string][]byte{"z": content, "p": content[:1000]} {
		var out bytes.Buffer
		r, err := c.DownloadWriter(context.Background(), URL{testBucket, name}, &out, DownloadOptions{Decompress: true})
		if err != nil || !bytes.Equal(out.Bytes(), want) {
			t.Errorf("%s: %d bytes, want %d: %v", name, out.Len(), len(want), err)
		}
		if name == "z" && r.Decompressed != int64(len(content)) {
			t.Errorf("decompressed %d, want %d", r.Decompressed, len(content))
		}
	}
}

// An object stored gzip-encoded whose gcsput-decoded-size and
// gcsput-decoded-crc32c describe other content than its stored bytes
// decompress into (a stale copy labelled with new content's checksum) fails
// with ErrDecodedMismatch naming it: nothing at the target, nothing kept;
// with metadata that matches, it downloads.
func TestDownloadDecodedMetadataMismatchFails(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	old, cur := []byte("version one"), []byte("version TWO")
	crc := func(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
	for name, meta := range map[string]map[string]string{
		"stale.txt": gzmeta.DecodedMetadata(int64(len(cur)), crc(cur)),
		"short.txt": gzmeta.DecodedMetadata(int64(len(old))+1, crc(old)),
		"good.txt":  gzmeta.DecodedMetadata(int64(len(old)), crc(old)),
	} {
		if _, err := srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: testBucket, Name: name, ContentEncoding: "gzip", Metadata: meta},
			bytes.NewReader(gzipOf(t, old))); err != nil {
			t.Fatal(err)
		}
		c := newClient(t, srv, nil)
		dir := t.TempDir()
		dst := filepath.Join(dir, name)
		_, err := c.Download(context.Background(), URL{testBucket, name}, dst, DownloadOptions{Decompress: true})
		got, rerr := os.ReadFile(dst)
		if name == "good.txt" {
			if err != nil || !bytes.Equal(got, old) {
				t.Errorf("%s: error %v, file %q; want %q", name, err, got, old)
			}
			continue
		}
		want := "download: gs://bkt/" + name + " is stored with Content-Encoding: gzip, but its content does not match its gcsput-decoded-size and gcsput-decoded-crc32c"
		if !errors.Is(err, ErrDecodedMismatch) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want %q…", name, err, want)
		}
		if !errors.Is(rerr, fs.ErrNotExist) {
			t.Errorf("%s: the target exists (%q) after the mismatch", name, got)
		}
		if left := leftovers(t, dir); len(left) != 0 {
			t.Errorf("%s: left beside the target: %q", name, left)
		}
		if recs, _ := c.Sessions(); len(recs) != 0 {
			t.Errorf("%s: records left: %v", name, recs)
		}
	}
}
