package resumable

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// sliceAll downloads gs://bkt/name in the slices cut by cuts (object offsets,
// first 0, last the size) at once into one file, and returns the file's
// bytes and the slices' CRC32Cs combined.
func sliceAll(t *testing.T, c *Client, gen int64, name string, cuts []int64) ([]byte, uint32, []*DownloadResult) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	results := make([]*DownloadResult, len(cuts)-1)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			res, err := c.DownloadAt(context.Background(), DownloadSpec{Bucket: "bkt", Object: name, Generation: gen,
				Start: cuts[i], End: cuts[i+1]}, f)
			if err != nil {
				t.Errorf("slice %d-%d: %v", cuts[i], cuts[i+1], err)
				return
			}
			results[i] = res
		})
	}
	wg.Wait()
	var crc uint32
	for i, res := range results {
		if res == nil {
			t.FailNow()
		}
		if !res.Local.HasCRC32C || res.Verified || res.Size != cuts[i+1] {
			t.Errorf("slice %d: result %+v", i, res)
		}
		crc = CombineCRC32C(crc, res.Local.CRC32C, cuts[i+1]-cuts[i])
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return got, crc, results
}

// eventless is a Client for env's server without env's event log, which is
// not for concurrent transfers.
func eventless(t *testing.T, e *env) *Client {
	c, err := New(Options{HTTPClient: e.srv.Client(), Endpoint: e.srv.URL(), Retry: e.c.opts.Retry, ChunkSize: kib256})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSlicesCombineToTheObject(t *testing.T) {
	e := newEnv(t, kib256)
	data := testData(3<<20 + 12345)
	attrs, err := e.srv.PutObject("bkt", "big", data)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	for _, cuts := range [][]int64{
		{0, size},
		{0, 1, size},
		{0, 1 << 20, 2 << 20, 3 << 20, size},
		{0, 777, 1<<20 + 3, size - 1, size},
	} {
		got, crc, results := sliceAll(t, eventless(t, e), attrs.Generation, "big", cuts)
		if !bytes.Equal(got, data) {
			t.Fatalf("cuts %v: the file differs from the object", cuts)
		}
		if want := crc32.Checksum(data, castagnoli); crc != want || results[0].Hashes.CRC32C != want {
			t.Errorf("cuts %v: combined %08x, server %08x, want %08x", cuts, crc, results[0].Hashes.CRC32C, want)
		}
	}
}

// TestSliceResumesWithinTheRun breaks each slice's response once, in the
// middle: it continues with a Range from its own offset to its own end.
func TestSliceResumesWithinTheRun(t *testing.T) {
	e := newEnv(t, kib256)
	data := testData(4 << 20)
	attrs, _ := e.srv.PutObject("bkt", "big", data)
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var crc uint32
	for i := range int64(4) {
		start, end := i<<20, (i+1)<<20
		e.events = nil
		e.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "big", Kind: fakegcs.KindTruncate, AfterBytes: 300000})
		res, err := e.c.DownloadAt(context.Background(), DownloadSpec{Bucket: "bkt", Object: "big", Generation: attrs.Generation,
			Start: start, End: end}, f)
		if err != nil {
			t.Fatalf("slice %d: %v", i, err)
		}
		crc = CombineCRC32C(crc, res.Local.CRC32C, end-start)
		var resumed []int64
		for _, ev := range e.events {
			if ev.Kind == EventResumed {
				resumed = append(resumed, ev.Offset)
			}
		}
		if res.Resumes != 1 || len(resumed) != 1 || resumed[0] <= start || resumed[0] >= end {
			t.Errorf("slice %d: %d resumes, at %v", i, res.Resumes, resumed)
		}
	}
	got, _ := os.ReadFile(f.Name())
	if !bytes.Equal(got, data) || crc != crc32.Checksum(data, castagnoli) {
		t.Fatal("the slices resumed into other bytes")
	}
}

// TestSliceContinuesAPartialFile is a slice resumed by a later process: its
// first bytes are in the file, read back into its checksum, and only the
// rest is fetched.
func TestSliceContinuesAPartialFile(t *testing.T) {
	e := newEnv(t, kib256)
	data := testData(2 << 20)
	attrs, _ := e.srv.PutObject("bkt", "big", data)
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data[1<<20:1<<20+5000], 1<<20); err != nil {
		t.Fatal(err)
	}
	e.events = nil
	res, err := e.c.DownloadAt(context.Background(), DownloadSpec{Bucket: "bkt", Object: "big", Generation: attrs.Generation,
		Start: 1 << 20, End: 2 << 20, Offset: 1<<20 + 5000}, f)
	if err != nil {
		t.Fatal(err)
	}
	if want := crc32.Checksum(data[1<<20:], castagnoli); res.Local.CRC32C != want {
		t.Errorf("slice crc %08x, want %08x", res.Local.CRC32C, want)
	}
	var received int64
	for _, ev := range e.events {
		if ev.Kind == EventProgress {
			received += ev.Length
		}
	}
	if received != 1<<20-5000 {
		t.Errorf("%d bytes received, want %d", received, 1<<20-5000)
	}
	got := make([]byte, 1<<20)
	if _, err := f.ReadAt(got, 1<<20); err != nil || !bytes.Equal(got, data[1<<20:]) {
		t.Fatalf("the slice's bytes differ (%v)", err)
	}
}

func TestSliceSpecsRefused(t *testing.T) {
	e := newEnv(t, kib256)
	for _, tc := range []struct {
		spec DownloadSpec
		want string
	}{
		{DownloadSpec{Start: 5, End: 5, Generation: 1}, "0 <= Start < End"},
		{DownloadSpec{Start: -1, End: 5, Generation: 1}, "0 <= Start < End"},
		{DownloadSpec{Start: 0, End: 5}, "needs the Generation"},
		{DownloadSpec{Start: 0, End: 5, Generation: 1, Decompress: true}, "cannot be decompressed"},
		{DownloadSpec{Start: 10, End: 20, Generation: 1, Offset: 5}, "Offset 5 is outside [10, 20]"},
	} {
		tc.spec.Bucket, tc.spec.Object = "bkt", "o"
		_, err := e.c.DownloadAt(context.Background(), tc.spec, nowhere{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.spec, err, tc.want)
		}
	}
	if n := len(e.srv.Log()); n != 0 {
		t.Errorf("refused specs made %d requests", n)
	}
	var ee *Error
	_, err := e.c.DownloadAt(context.Background(), DownloadSpec{Bucket: "bkt", Object: "o", End: 1}, nowhere{})
	if !errors.As(err, &ee) {
		t.Errorf("error %T is not an *Error", err)
	}
}

// nowhere is a destination that must never be written.
type nowhere struct{}

func (nowhere) WriteAt(p []byte, off int64) (int, error) { panic("written") }
