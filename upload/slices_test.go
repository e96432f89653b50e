package upload

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// sliced sets small slicing options: objects of 1 MiB or more in 4 slices.
func sliced(o *Options) { o.SliceThreshold, o.MaxSlices = 1<<20, 4 }

// getRanges lists the Range of every media GET the server logged, sorted.
// A request is logged when its handler ends, which for slice 0 (whose body
// the client stops reading at its end) can be after the download returns:
// it waits until every GET counted on arrival is logged.
func getRanges(t *testing.T, srv *fakegcs.Server) []string {
	getsServed(t, srv)
	var got []string
	for _, r := range srv.Log() {
		if r.Op == "storage.objects.get" && r.Method == http.MethodGet && strings.Contains(r.Path, "/download/") {
			got = append(got, r.Range)
		}
	}
	slices.Sort(got)
	return got
}

func TestSlicedDownload(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(4<<20+3, 1)
	srv.PutObject(testBucket, "big", data)
	c := newClient(t, srv, sliced)
	dst := filepath.Join(t.TempDir(), "big")
	r, err := c.Download(context.Background(), URL{testBucket, "big"}, dst, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	if !bytes.Equal(got, data) || r.Status != StatusDownloaded || r.Size != int64(len(data)) ||
		r.CRC32C != crc32.Checksum(data, castagnoli) || r.Transferred < int64(len(data)) {
		t.Fatalf("result %+v, bytes equal %v", r, bytes.Equal(got, data))
	}
	// One request learns nothing first: the first GET (no Range) becomes
	// slice 0, and three ranged GETs fetch the rest.
	want := []string{"", "bytes=1048576-2097151", "bytes=2097152-3145727", "bytes=3145728-4194306"}
	if got := getRanges(t, srv); !slices.Equal(got, want) {
		t.Errorf("GETs %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dst), ".big"+partialSuffix)); err == nil {
		t.Error("partial file left after success")
	}
	// Below the threshold, and stored gzip-encoded: one stream.
	srv.ResetStats()
	srv.PutObject(testBucket, "small", data[:1<<20-1])
	gz, _ := srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: testBucket, Name: "gz", ContentEncoding: "gzip"}, bytes.NewReader(data))
	for _, name := range []string{"small", "gz"} {
		if _, err := c.Download(context.Background(), URL{testBucket, name}, filepath.Join(t.TempDir(), name), DownloadOptions{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if got := getRanges(t, srv); !slices.Equal(got, []string{"", ""}) || gz.Size != int64(len(data)) {
		t.Errorf("GETs %q for a small and a gzip object, want two whole ones", got)
	}
}

// TestSlicedDownloadBreaksEverySlice cuts each slice's first response: each
// continues inside itself, and the file is whole and verified.
func TestSlicedDownloadBreaksEverySlice(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(4<<20, 2)
	srv.PutObject(testBucket, "big", data)
	for _, off := range []int64{0, 1 << 20, 2 << 20, 3 << 20} {
		srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "big", Offset: new(off), Kind: fakegcs.KindTruncate, AfterBytes: 300000})
	}
	c := newClient(t, srv, sliced)
	dst := filepath.Join(t.TempDir(), "big")
	r, err := c.Download(context.Background(), URL{testBucket, "big"}, dst, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	if !bytes.Equal(got, data) || r.Attempts != 5 {
		t.Fatalf("%d attempts (want 5: 4 breaks), bytes equal %v", r.Attempts, bytes.Equal(got, data))
	}
	for _, in := range srv.Faults() {
		if in.Fired() != 1 {
			t.Errorf("fault %v fired %d times", in, in.Fired())
		}
	}
}

// TestSlicedDownloadInterruptedAndContinued stops a sliced download part
// way, then runs it again: each slice continues from its own Done, read
// back for its checksum, and only the rest is fetched.
func TestSlicedDownloadInterruptedAndContinued(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(8<<20, 3)
	srv.PutObject(testBucket, "big", data)
	// Each 2 MiB slice is held after 1.5 MiB: the cancel at 4 MiB is the
	// only way the first run ends.
	held := holdGets(srv, 1536<<10)
	stateDir := t.TempDir()
	dst := filepath.Join(t.TempDir(), "big")
	ctx, cancel := context.WithCancel(context.Background())
	c := newClient(t, srv, func(o *Options) {
		sliced(o)
		o.StateDir = stateDir
		o.Progress = func(p Progress) {
			if p.Done >= 4<<20 {
				cancel()
			}
		}
	})
	r, err := c.Download(ctx, URL{testBucket, "big"}, dst, DownloadOptions{})
	if err == nil || r.Status != StatusInterrupted {
		t.Fatalf("interrupted download: %+v", r)
	}
	rec := onlyRecord(t, stateDir)
	if err := state.CheckSlices(rec.Download.Slices, int64(len(data))); err != nil || len(rec.Download.Slices) != 4 {
		t.Fatalf("saved plan %+v: %v", rec.Download.Slices, err)
	}
	var done int64
	for _, sl := range rec.Download.Slices {
		done += sl.Done - sl.Start
	}
	held.Remove()
	getsServed(t, srv) // the first run's GETs, logged before the reset
	srv.ResetStats()
	c2 := newClient(t, srv, func(o *Options) { sliced(o); o.StateDir = stateDir })
	r, err = c2.Download(context.Background(), URL{testBucket, "big"}, dst, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	if !bytes.Equal(got, data) || r.Status != StatusResumed || r.ResumedFrom < done || r.Transferred > int64(len(data))-done {
		t.Errorf("continued: %s from %d (saved %d), transferred %d, equal %v", r.Status, r.ResumedFrom, done, r.Transferred, bytes.Equal(got, data))
	}
	for _, rg := range getRanges(t, srv) {
		if rg == "" || strings.HasSuffix(rg, "-") {
			t.Errorf("continued slices asked %q: each must ask from its Done to its End", rg)
		}
	}
	if recs, _ := c2.Sessions(); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

// onlyRecord reads the one record in a state directory.
func onlyRecord(t *testing.T, dir string) *state.Record {
	t.Helper()
	st, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.List()
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records (%v)", len(recs), err)
	}
	return recs[0]
}

// TestSlicedDownloadRefusesABadPlan plants records whose slices do not
// cover the object: they are never used, and the download starts over.
func TestSlicedDownloadRefusesABadPlan(t *testing.T) {
	for _, bad := range [][]state.Slice{
		{{Start: 0, End: 100, Done: 100}},                                                        // short of the object
		{{Start: 0, End: 3 << 20, Done: 4 << 20}, {Start: 3 << 20, End: 4 << 20, Done: 0}},       // Done outside its slice
		{{Start: 1 << 20, End: 4 << 20, Done: 1 << 20}, {Start: 0, End: 1 << 20, Done: 1 << 20}}, // out of order
		planSlices(4<<20, 5), // more slices than MaxSlices (4): a record cannot ask for more GETs
	} {
		srv, data, stateDir, dst := stoppedSliced(t, 4, bad)
		c2 := newClient(t, srv, func(o *Options) { sliced(o); o.StateDir = stateDir })
		r, err := c2.Download(context.Background(), URL{testBucket, "big"}, dst, DownloadOptions{})
		got, _ := os.ReadFile(dst)
		if err != nil || !bytes.Equal(got, data) || r.Status != StatusDownloaded || !strings.Contains(r.Note, "saved slices unusable") {
			t.Errorf("plan %v: %s %q (%v)", bad, r.Status, r.Note, err)
		}
	}
}

// TestSlicesKeepToTheBudget: with Parallelism 2, a sliced download of 4
// slices never has more than 2 GETs in flight.
func TestSlicesKeepToTheBudget(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(4<<20, 5)
	srv.PutObject(testBucket, "big", data)
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindThrottle, BytesPerSecond: 32 << 20, Times: -1})
	var now, most atomic.Int32
	var mu sync.Mutex
	c := newClient(t, srv, func(o *Options) {
		sliced(o)
		o.Parallelism = 2
		o.HTTPClient = &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet {
				mu.Lock()
				if v := now.Add(1); v > most.Load() {
					most.Store(v)
				}
				mu.Unlock()
				resp, err := srv.Client().Transport.RoundTrip(req)
				if err != nil {
					now.Add(-1)
					return resp, err
				}
				resp.Body = &onClose{ReadCloser: resp.Body, f: func() { now.Add(-1) }}
				return resp, nil
			}
			return srv.Client().Transport.RoundTrip(req)
		})}
	})
	if _, err := c.Download(context.Background(), URL{testBucket, "big"}, filepath.Join(t.TempDir(), "big"), DownloadOptions{}); err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m > 2 || len(getRanges(t, srv)) != 4 {
		t.Errorf("%d GETs at once (budget 2), %d GETs", m, len(getRanges(t, srv)))
	}
}

// A corrupted slice fails the combined check: the download is fetched again.
func TestSlicedDownloadCorruptSliceRefetched(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(4<<20, 6)
	srv.PutObject(testBucket, "big", data)
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "big", Offset: new(int64(2 << 20)), Kind: fakegcs.KindCorrupt, AfterBytes: 1000})
	c := newClient(t, srv, sliced)
	dst := filepath.Join(t.TempDir(), "big")
	r, err := c.Download(context.Background(), URL{testBucket, "big"}, dst, DownloadOptions{})
	got, _ := os.ReadFile(dst)
	if err != nil || !bytes.Equal(got, data) || r.Note != "checksum mismatch: downloaded again" {
		t.Fatalf("%s %q (%v)", r.Status, r.Note, err)
	}
	if !errors.Is(&resumable.ChecksumError{}, resumable.ErrChecksumMismatch) {
		t.Fatal("ChecksumError does not match ErrChecksumMismatch")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// onClose calls f once when the body is closed.
type onClose struct {
	io.ReadCloser
	f    func()
	once sync.Once
}

func (o *onClose) Close() error {
	o.once.Do(o.f)
	return o.ReadCloser.Close()
}

func TestPlanSlices(t *testing.T) {
	for _, size := range []int64{1, 5, 256 << 10, 1 << 20, 4<<20 + 3, 128<<20 + 1, 5 << 40} {
		for _, n := range []int{1, 2, 3, 8, 32} {
			plan := planSlices(size, n)
			if err := state.CheckSlices(plan, size); err != nil || len(plan) != int(min(int64(n), size)) {
				t.Fatalf("size %d, n %d: %d slices %v: %v", size, n, len(plan), plan, err)
			}
			for _, sl := range plan {
				if size/int64(len(plan)) >= sliceAlign && sl.Start%sliceAlign != 0 {
					t.Errorf("size %d, n %d: slice %v is not aligned", size, n, sl)
				}
				if sl.Done != sl.Start {
					t.Errorf("size %d, n %d: a fresh slice %v has bytes done", size, n, sl)
				}
			}
		}
	}
}

// TestSlicedDownloadAllSlicesDone: a saved plan whose slices are all
// written (a run stopped after its last byte) is finished without a GET:
// the slices are read back, their checksums combined and compared with the
// object's metadata, and the file renamed into place.
func TestSlicedDownloadAllSlicesDone(t *testing.T) {
	srv, data, stateDir, dst := stoppedSliced(t, 7,
		[]state.Slice{{Start: 0, End: 2 << 20, Done: 2 << 20}, {Start: 2 << 20, End: 4 << 20, Done: 4 << 20}})
	partial := filepath.Join(filepath.Dir(dst), ".big"+partialSuffix)
	if err := os.WriteFile(partial, data, 0o600); err != nil {
		t.Fatal(err)
	}
	srv.ResetStats()
	c2 := newClient(t, srv, func(o *Options) { sliced(o); o.StateDir = stateDir })
	r, err := c2.Download(context.Background(), URL{testBucket, "big"}, dst, DownloadOptions{})
	got, _ := os.ReadFile(dst)
	if err != nil || !bytes.Equal(got, data) || r.Status != StatusResumed || r.ResumedFrom != 4<<20 || r.Transferred != 0 {
		t.Fatalf("%s from %d, transferred %d (%v)", r.Status, r.ResumedFrom, r.Transferred, err)
	}
	if gets := getRanges(t, srv); len(gets) != 0 {
		t.Errorf("media GETs %q for a download already written", gets)
	}
}

// TestSlicedDownloadEventsOnce: Options.OnEvent sees one start and one
// finish for a sliced download, the finish after the combined check.
func TestSlicedDownloadEventsOnce(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(4<<20, 8)
	srv.PutObject(testBucket, "big", data)
	var log eventLog
	c := newClient(t, srv, func(o *Options) { sliced(o); o.OnEvent = log.add })
	if _, err := c.Download(context.Background(), URL{testBucket, "big"}, filepath.Join(t.TempDir(), "big"), DownloadOptions{}); err != nil {
		t.Fatal(err)
	}
	if s, f := log.count(resumable.EventStarted), log.count(resumable.EventFinished); s != 1 || f != 1 {
		t.Errorf("%d started, %d finished events; want 1 and 1", s, f)
	}
}

// getsServed waits until every GET the server counted on arrival has
// ended and is in its log: the handlers of a stopped download end when the
// server notices the client gone, which can be after the download returns.
func getsServed(t *testing.T, srv *fakegcs.Server) {
	t.Helper()
	waitFor(t, "every GET logged", func() bool {
		n := 0
		for _, r := range srv.Log() {
			if r.Op == "storage.objects.get" {
				n++
			}
		}
		return n == srv.Count("storage.objects.get")
	})
}

// holdGets makes every media GET stall after n bytes of its body until
// its client goes. A download cancelled at its progress then cannot finish
// before the cancel takes effect, however late a loaded machine acts on it
// (a throttle only makes that unlikely). Remove the fault before the rerun.
func holdGets(srv *fakegcs.Server, n int64) *fakegcs.Injection {
	return srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Phase: fakegcs.PhaseMedia, Kind: fakegcs.KindStall,
		AfterBytes: n, Delay: time.Hour, Times: -1})
}

// stoppedSliced stops a sliced download of a 4 MiB object ("big", data
// seeded by seed) at its first progress, then replaces the slices of the
// record it saved with plan.
//
// Every GET is held after 512 KiB (holdGets), so the cancel is the only
// way the download can end: it ends interrupted with its plan saved. (With
// the bytes flowing freely, the slices could read the rest of the object
// before the cancel took effect: the download finished and removed its
// record.) The stopped run's handlers have all ended when it returns, so
// none is logged after the caller's ResetStats.
func stoppedSliced(t *testing.T, seed uint64, plan []state.Slice) (srv *fakegcs.Server, data []byte, stateDir, dst string) {
	t.Helper()
	srv = newServer(t, fakegcs.Options{})
	data = randBytes(4<<20, seed)
	srv.PutObject(testBucket, "big", data)
	stall := holdGets(srv, 512<<10)
	stateDir, dst = t.TempDir(), filepath.Join(t.TempDir(), "big")
	ctx, cancel := context.WithCancel(context.Background())
	c := newClient(t, srv, func(o *Options) {
		sliced(o)
		o.StateDir = stateDir
		o.Progress = func(p Progress) { cancel() }
	})
	if r, err := c.Download(ctx, URL{testBucket, "big"}, dst, DownloadOptions{}); r.Status != StatusInterrupted {
		t.Fatalf("stopped download: %s (%v), want interrupted", r.Status, err)
	}
	stall.Remove()
	getsServed(t, srv)
	rec := onlyRecord(t, stateDir)
	editRecord(t, filepath.Join(stateDir, rec.Key()+".json"), func(m map[string]any) {
		m["download"].(map[string]any)["slices"] = plan
	})
	return srv, data, stateDir, dst
}
