package upload

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

func TestUploadFileSmallAndLarge(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	var log eventLog
	var progress []Progress
	c := newClient(t, srv, func(o *Options) {
		o.SmallFileThreshold = 1 << 20
		o.OnEvent = log.add
		o.Progress = func(p Progress) { progress = append(progress, p) }
	})
	dir := t.TempDir()
	small := randBytes(1000, 1)
	large := randBytes(3<<20+17, 2)
	ps := writeTemp(t, dir, "small.json", small)
	pl := writeTemp(t, dir, "large.bin", large)

	r, err := c.UploadFile(context.Background(), ps, URL{testBucket, "s/small.json"}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	attrs := wantObject(t, srv, "s/small.json", small)
	if r.Status != StatusUploaded || r.Generation != attrs.Generation || r.CRC32C != attrs.CRC32C || r.Size != 1000 || r.Attempts != 1 {
		t.Errorf("small result %+v, server %+v", r, attrs)
	}
	if attrs.ContentType != "application/json" {
		t.Errorf("content type %q", attrs.ContentType)
	}
	if n := srv.Count("storage.objects.insert"); n != 1 {
		t.Errorf("small file took %d insert requests, want 1 (multipart)", n)
	}

	r, err = c.UploadFile(context.Background(), pl, URL{testBucket, "l/large.bin"}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	attrs = wantObject(t, srv, "l/large.bin", large)
	if r.Status != StatusUploaded || r.Generation != attrs.Generation || r.CRC32C != attrs.CRC32C ||
		r.Size != int64(len(large)) || r.Transferred != int64(len(large)) || r.ResumedFrom != 0 {
		t.Errorf("large result %+v", r)
	}
	if s, _ := srv.LastSession(testBucket, "l/large.bin"); s.Chunks != 13 || s.Received != int64(len(large)) {
		t.Errorf("session %+v, want 13 chunks (3 MiB + 17 B in 256 KiB chunks) and every byte once", s)
	}
	if n := len(progress); n < 13 || progress[n-1].Done != int64(len(large)) || progress[n-1].Size != int64(len(large)) ||
		progress[n-1].Dest != "gs://bkt/l/large.bin" {
		t.Errorf("%d progress reports, last %+v", n, progress[len(progress)-1])
	}
	if log.count(resumable.EventFinished) != 2 {
		t.Errorf("%d finished events, want 2", log.count(resumable.EventFinished))
	}
	if recs, _ := c.store.List(); len(recs) != 0 {
		t.Errorf("%d saved sessions left after success", len(recs))
	}
}

func TestUploadFileBadInput(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	dir := t.TempDir()
	p := writeTemp(t, dir, "f", []byte("x"))
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src  string
		dst  URL
		want string
	}{
		{filepath.Join(dir, "missing"), URL{testBucket, "o"}, "upload: open " + filepath.Join(dir, "missing") + ": no such file or directory"},
		{dir, URL{testBucket, "o"}, "upload: " + dir + " is a directory (use UploadDir)"},
		{fifo, URL{testBucket, "o"}, "upload: " + fifo + " is not a regular file (named pipe)"},
		{p, URL{"Bad_Bucket", "o"}, `bad bucket name "Bad_Bucket"`},
		{p, URL{testBucket, "a\nb/"}, `bad object name "a\nb/f": contains a carriage return or line feed`}, // a folder: + "f"
		{p, URL{testBucket, "a\nb"}, `bad object name "a\nb": contains a carriage return or line feed`},
	} {
		r, err := c.UploadFile(context.Background(), tc.src, tc.dst, UploadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || r.Status != StatusFailed || r.Err != err {
			t.Errorf("UploadFile(%s, %s) = %v, %v; want %q", tc.src, tc.dst, r.Status, err, tc.want)
		}
	}
	missing := filepath.Join(dir, "missing")
	if _, err := c.UploadDir(context.Background(), missing, URL{testBucket, "d"}, UploadOptions{}); err == nil ||
		err.Error() != "upload: stat "+missing+": no such file or directory" {
		t.Errorf("UploadDir(missing) = %v", err)
	}
	if n := len(srv.Log()); n != 0 {
		t.Errorf("bad input made %d requests", n)
	}
	_, err := New(context.Background(), Options{ChunkSize: 100 << 10, Endpoint: srv.URL(), NoState: true})
	if !errors.Is(err, ErrBadOption) || err.Error() != "upload: bad option: chunk size 102400 is not a positive multiple of 256 KiB (262144 bytes)" {
		t.Errorf("bad chunk size: %v", err)
	}
	os.Remove(p)
}

// TestSmallFilesInlineAndStreamed uploads files on both sides of 256 KiB
// (what resumable's Insert holds in memory)
// through multipart and checks the bytes, the CRC32C and the count of bytes
// sent.
func TestSmallFilesInlineAndStreamed(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, func(o *Options) { o.NoState = true })
	dir := t.TempDir()
	for i, size := range []int{0, 1, 16 << 10, 256 << 10, 256<<10 + 1} {
		data := randBytes(size, uint64(i))
		name := fmt.Sprintf("f%d", size)
		r, err := c.UploadFile(context.Background(), writeTemp(t, dir, name, data), URL{testBucket, name}, UploadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantObject(t, srv, name, data)
		if r.Transferred != int64(size) || r.CRC32C != crc32.Checksum(data, castagnoli) || r.Attempts != 1 {
			t.Errorf("%s: transferred %d, crc %08x, %d attempts", name, r.Transferred, r.CRC32C, r.Attempts)
		}
	}
}

// TestOnResultAsEachEnds checks that a batch gives each result to
// Options.OnResult once, when that item ends: with one worker, the first
// file is reported before the last one is uploaded.
func TestOnResultAsEachEnds(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		writeTemp(t, dir, n, randBytes(1000, 1))
	}
	if err := os.Symlink("/nonexistent", filepath.Join(dir, "broken")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	told := map[*Result]int{}
	var cExisted []bool
	c := newClient(t, srv, func(o *Options) {
		o.Parallelism = 1
		o.OnResult = func(r *Result) {
			mu.Lock()
			defer mu.Unlock()
			told[r]++
			if r.Object == "d/a" {
				_, _, err := srv.Object(testBucket, "d/c")
				cExisted = append(cExisted, err == nil)
			}
		}
	})
	results, err := c.UploadDir(context.Background(), dir, URL{testBucket, "d"}, UploadOptions{})
	if !errors.Is(err, ErrSomeFailed) { // the broken symlink
		t.Fatalf("err = %v", err)
	}
	if len(results) != 4 || len(told) != 4 {
		t.Fatalf("%d results, %d told", len(results), len(told))
	}
	for _, r := range results {
		if told[r] != 1 {
			t.Errorf("%s (%s) told %d times", r.Source, r.Status, told[r])
		}
	}
	if len(cExisted) != 1 || cExisted[0] {
		t.Errorf("d/a reported after d/c was uploaded (%v): results are held back", cExisted)
	}
}
