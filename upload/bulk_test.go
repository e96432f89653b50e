package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// mixedTree writes n files of the sizes that matter to GCS's protocol
// (empty, one byte, around the 256 KiB quantum, several MiB) under dir and
// returns their contents by slash-separated relative path.
func mixedTree(t testing.TB, dir string, n int) map[string][]byte {
	sizes := []int{0, 1, 256<<10 - 1, 256 << 10, 256<<10 + 1, 1000, 10, 64 << 10, 4096, 100, 600 << 10, 7, 333, 16 << 10}
	files := make(map[string][]byte, n)
	for i := range n {
		size := sizes[i%len(sizes)]
		if i%50 == 49 {
			size = 2<<20 + i*1000 // several MiB: resumable, many chunks
		}
		rel := fmt.Sprintf("d%02d/sub%d/f%03d.bin", i%13, i%3, i)
		data := randBytes(size, uint64(i)+100)
		writeTemp(t, dir, rel, data)
		files[rel] = data
	}
	return files
}

// tenPercentFaults injects about one fault per ten upload requests, of every
// kind a real network gives.
func tenPercentFaults(srv *fakegcs.Server, op string) {
	for _, f := range []fakegcs.Fault{
		{Kind: fakegcs.KindStatus, Status: 503, Probability: 0.03},
		{Kind: fakegcs.KindStatus, Status: 429, Probability: 0.01},
		{Kind: fakegcs.KindStatus, Status: 500, Probability: 0.01},
		{Kind: fakegcs.KindReset, Probability: 0.02},
		{Kind: fakegcs.KindReset, AfterBytes: 100 << 10, Probability: 0.01},
		{Kind: fakegcs.KindDropResponse, Probability: 0.01},
		{Kind: fakegcs.KindShort308, Phase: fakegcs.PhaseChunk, Probability: 0.01},
	} {
		f.Op = op
		srv.Inject(f)
	}
}

func TestUploadDirUnderFaults(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Seed: 42, DisableMD5: true})
	dir := t.TempDir()
	files := mixedTree(t, dir, 500)
	tenPercentFaults(srv, "storage.objects.insert")
	c := newClient(t, srv, func(o *Options) { o.Parallelism = 8; o.SmallFileThreshold = 512 << 10 })

	results, err := c.UploadDir(context.Background(), dir, URL{testBucket, "backup"}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 500 {
		t.Fatalf("%d results, want 500", len(results))
	}
	retried := 0
	for _, r := range results {
		rel, _ := filepath.Rel(dir, r.Source)
		rel = filepath.ToSlash(rel)
		data := files[rel]
		attrs := wantObject(t, srv, "backup/"+rel, data)
		if r.Status != StatusUploaded || r.Object != "backup/"+rel || r.CRC32C != attrs.CRC32C || r.Size != int64(len(data)) {
			t.Errorf("%s: result %+v", rel, r)
		}
		if r.Attempts > 1 {
			retried++
		}
	}
	st := srv.Stats()
	faults := 0
	for _, n := range st.Faults {
		faults += n
	}
	t.Logf("%d requests, %d faults fired (%v), %d files retried", st.Requests["storage.objects.insert"], faults, st.Faults, retried)
	if faults < 30 || retried == 0 {
		t.Errorf("only %d faults fired and %d files retried: the test did not exercise failures", faults, retried)
	}
	downloadBack(t, srv, c, files)
}

// downloadBack downloads the prefix "backup" under faults of every download
// kind and checks every file byte for byte.
func downloadBack(t *testing.T, srv *fakegcs.Server, c *Client, files map[string][]byte) {
	for _, f := range []fakegcs.Fault{
		{Kind: fakegcs.KindStatus, Status: 503, Probability: 0.04},
		{Kind: fakegcs.KindReset, Probability: 0.02},
		{Kind: fakegcs.KindTruncate, AfterBytes: 100 << 10, Probability: 0.02},
		{Kind: fakegcs.KindCorrupt, AfterBytes: 1000, Probability: 0.02},
	} {
		f.Op = "storage.objects.get"
		srv.Inject(f)
	}
	out := t.TempDir()
	results, err := c.DownloadPrefix(context.Background(), URL{testBucket, "backup"}, out, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 500 {
		t.Fatalf("%d download results, want 500", len(results))
	}
	for rel, data := range files {
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(rel)))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: downloaded %d bytes (%v), want %d", rel, len(got), err, len(data))
		}
	}
	for _, r := range results {
		if r.Status != StatusDownloaded {
			t.Errorf("%s: %s %v", r.Object, r.Status, r.Err)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(out, "*", "*", ".*"+partialSuffix)); len(leftovers) != 0 {
		t.Errorf("partial files left: %v", leftovers)
	}
	t.Logf("download faults: %v", srv.Stats().Faults)
}

// UploadSeq takes items as a stream and keeps no results: each reaches
// OnResult once; the error counts the failures.
func TestUploadSeqStreams(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	dir := t.TempDir()
	var mu sync.Mutex
	seen := map[string]Status{}
	c := newClient(t, srv, func(o *Options) {
		o.Parallelism = 3
		o.OnResult = func(r *Result) { mu.Lock(); seen[r.Object] = r.Status; mu.Unlock() }
	})
	items := func(yield func(Item) bool) {
		for i := range 50 {
			name := "s" + itoa(int64(i))
			p := filepath.Join(dir, name)
			if i != 7 { // item 7's file does not exist: it fails, the rest go on
				writeTemp(t, dir, name, randBytes(100+i, uint64(i)))
			}
			if !yield(Item{Local: p, Remote: URL{testBucket, "seq/" + name}}) {
				return
			}
		}
	}
	err := c.UploadSeq(context.Background(), items, UploadOptions{})
	var be *batchFailures
	if !errors.As(err, &be) || be.Failed != 1 || be.Total != 50 || !strings.Contains(be.Error(), "1 of 50 transfers failed") {
		t.Fatalf("err %v", err)
	}
	if len(seen) != 50 || seen["seq/s7"] != StatusFailed || seen["seq/s8"] != StatusUploaded {
		t.Fatalf("%d results; s7 %s, s8 %s", len(seen), seen["seq/s7"], seen["seq/s8"])
	}
	if names, _ := srv.ObjectNames(testBucket); len(names) != 49 {
		t.Fatalf("%d objects, want 49", len(names))
	}
}
