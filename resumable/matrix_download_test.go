package resumable

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// downloadCases are the faults on the download path (storage.objects.get).
// The upload-only faults (partial persist, short 308, 410 session) have no
// download counterpart; truncation and corruption exist only here.
var downloadCases = []faultCase{
	{name: "408", fault: getFault(fakegcs.KindStatus, 408), waits: 1, resumed: []int64{0}},
	{name: "500", fault: getFault(fakegcs.KindStatus, 500), waits: 1, resumed: []int64{0}},
	{name: "502", fault: getFault(fakegcs.KindStatus, 502), waits: 1, resumed: []int64{0}},
	{name: "503", fault: getFault(fakegcs.KindStatus, 503), waits: 1, resumed: []int64{0}},
	{name: "504", fault: getFault(fakegcs.KindStatus, 504), waits: 1, resumed: []int64{0}},
	{name: "429 Retry-After", fault: withRetryAfter(getFault(fakegcs.KindStatus, 429), 4*time.Second),
		waits: 1, minWait: 4 * time.Second, resumed: []int64{0}},
	{name: "reset before body", fault: getFault(fakegcs.KindReset, 0), waits: 1, resumed: []int64{0}},
	{name: "reset mid-body", fault: withAfter(getFault(fakegcs.KindReset, 0), 300000), waits: 1, resumed: []int64{300000}, upTo: true},
	{name: "response dropped", fault: getFault(fakegcs.KindDropResponse, 0), waits: 1, resumed: []int64{0}},
	{name: "truncated", fault: withAfter(getFault(fakegcs.KindTruncate, 0), 700000), waits: 1, resumed: []int64{700000}, upTo: true},
	{name: "stall beyond the watchdog", fault: withAfter(withDelay(getFault(fakegcs.KindStall, 0), 3*time.Second), 200000),
		waits: 1, resumed: []int64{200000}},
	{name: "corrupted", fault: withAfter(getFault(fakegcs.KindCorrupt, 0), 5000), wantErr: ErrChecksumMismatch},
}

func getFault(k fakegcs.Kind, status int) fakegcs.Fault {
	return fakegcs.Fault{Op: "storage.objects.get", Object: "o", Kind: k, Status: status}
}

func TestFaultMatrixDownload(t *testing.T) {
	data := testData(mSize)
	for _, tc := range downloadCases {
		for _, w := range matrixWires {
			t.Run(tc.name+"/"+w.name, func(t *testing.T) {
				t.Parallel()
				e := newMatrixEnv(t, w)
				// Only the stall case gets a short watchdog: under -race on a loaded
				// machine a healthy chunk can pause for longer than that, and a
				// spurious stall would add a retry the case does not expect.
				if tc.fault.Kind == fakegcs.KindStall {
					e.c.stall = matrixWatchdog
				}
				if _, err := e.srv.PutObject("bkt", "o", data); err != nil {
					t.Fatal(err)
				}
				inj := e.srv.Inject(tc.fault)
				var buf bytes.Buffer
				res, err := e.c.Download(context.Background(), DownloadSpec{Bucket: "bkt", Object: "o"}, &buf)
				e.checkRetries(t, tc)
				if inj.Fired() != 1 {
					t.Errorf("fault fired %d times", inj.Fired())
				}
				if tc.wantErr != nil {
					var ce *ChecksumError
					if !errors.Is(err, tc.wantErr) || !errors.As(err, &ce) || ce.Remote.CRC32C != crc32.Checksum(data, castagnoli) {
						t.Fatalf("error %v; want %v", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes(), data) || !res.Verified || res.Size != mSize || res.Resumes != tc.waits {
					t.Fatalf("downloaded %d bytes, result %+v", buf.Len(), res)
				}
				// Every request after the first asked for the rest only, pinned
				// to the generation of the first answer.
				var from int64
				for _, ev := range e.events {
					if ev.Kind == EventResumed {
						from = ev.Offset
					}
				}
				e.checkProgress(t, mSize)
				gets := e.waitGets(t, 1+tc.waits)
				for i, r := range gets {
					want := ""
					if i > 0 && from > 0 {
						want = "bytes=" + itoa(from) + "-"
					}
					if r != want {
						t.Errorf("request %d has Range %q, want %q", i+1, r, want)
					}
				}
			})
		}
	}
}

// waitGets returns the Range headers of the download requests, sorted (the
// first has none), once fakegcs has logged n of them: a request answered
// with a reset may be logged after the client's next one.
func (e *env) waitGets(t testing.TB, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var ranges []string
		for _, r := range e.srv.Log() {
			if r.Op == "storage.objects.get" {
				ranges = append(ranges, r.Range)
			}
		}
		if len(ranges) >= n || time.Now().After(deadline) {
			if len(ranges) != n {
				t.Errorf("%d download requests, want %d", len(ranges), n)
			}
			slices.Sort(ranges)
			return ranges
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkProgress asserts the download's progress events rise to size, at
// most one chunk apart.
func (e *env) checkProgress(t testing.TB, size int64) {
	t.Helper()
	var last int64
	var n int
	for _, ev := range e.events {
		if ev.Kind != EventProgress {
			continue
		}
		n++
		if ev.Persisted <= last && ev.Persisted != 0 {
			t.Errorf("progress went from %d to %d", last, ev.Persisted)
		}
		last = ev.Persisted
	}
	if last != size || n < int(size)/e.c.chunkSize {
		t.Errorf("%d progress events ending at %d, want at least %d ending at %d", n, last, int(size)/e.c.chunkSize, size)
	}
}

// TestFaultMatrixSlice runs every download fault against one slice of a
// sliced download, [mSlice0, mSlice1) of the object, written into a file:
// the slice continues inside itself, every request asks up to its own end,
// and its checksum is that of its bytes. A corrupted slice is not caught
// alone (it has no checksum of its own from the server): its Local differs,
// which the combination of all slices' checksums then refuses.
func TestFaultMatrixSlice(t *testing.T) {
	const mSlice0, mSlice1 = 200000, mSize - 100000
	data := testData(mSize)
	want := crc32.Checksum(data[mSlice0:mSlice1], castagnoli)
	for _, tc := range downloadCases {
		for _, w := range matrixWires {
			t.Run(tc.name+"/"+w.name, func(t *testing.T) {
				t.Parallel()
				e := newMatrixEnv(t, w)
				if tc.fault.Kind == fakegcs.KindStall {
					e.c.stall = matrixWatchdog
				}
				attrs, err := e.srv.PutObject("bkt", "o", data)
				if err != nil {
					t.Fatal(err)
				}
				inj := e.srv.Inject(tc.fault)
				f := newFile(t)
				res, err := e.c.DownloadAt(context.Background(), DownloadSpec{Bucket: "bkt", Object: "o", Generation: attrs.Generation,
					Start: mSlice0, End: mSlice1}, f)
				if inj.Fired() != 1 || len(e.clk.Sleeps()) != tc.waits {
					t.Errorf("fault fired %d times, %d waits", inj.Fired(), len(e.clk.Sleeps()))
				}
				if err != nil {
					t.Fatal(err)
				}
				got := make([]byte, mSlice1-mSlice0)
				f.ReadAt(got, mSlice0)
				if tc.wantErr != nil {
					if res.Local.CRC32C == want {
						t.Fatal("a corrupted slice has the true slice's checksum")
					}
					return
				}
				if !bytes.Equal(got, data[mSlice0:mSlice1]) || res.Local.CRC32C != want || res.Size != mSlice1 || res.Resumes != tc.waits {
					t.Fatalf("slice: result %+v", res)
				}
				for _, ev := range e.events {
					if ev.Kind == EventResumed && (ev.Offset < mSlice0 || ev.Offset >= mSlice1) {
						t.Errorf("resumed at %d, outside the slice", ev.Offset)
					}
				}
				for _, r := range e.waitGets(t, 1+tc.waits) {
					if !strings.HasPrefix(r, "bytes=") || !strings.HasSuffix(r, "-"+itoa(mSlice1-1)) {
						t.Errorf("request Range %q does not end at the slice's end", r)
					}
				}
			})
		}
	}
}

// newFile is an empty file in the test's directory.
func newFile(t *testing.T) *os.File {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
