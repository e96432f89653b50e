package resumable

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	storage "google.golang.org/api/storage/v1"
)

// The fault matrix: every fault fakegcs injects × (upload from a file,
// upload from a stream, download). Each run ends byte-exact with the right
// CRC32C, or with the documented error; it asserts the retries, the offsets
// resumed from, and that no more than one chunk per fired fault was sent
// twice.

const (
	mChunk = 2 * kib256        // 512 KiB chunks
	mSize  = 2*mChunk + 1000   // chunks at 0, 524288 and the final 1000 bytes at 1048576
	mMid   = int64(mChunk)     // the second chunk's offset
	mLast  = int64(2 * mChunk) // the final chunk's offset
	quanta = int64(kib256)     // GCS persists in 256 KiB quanta
)

type faultCase struct {
	name    string
	fault   fakegcs.Fault
	waits   int           // retry waits
	minWait time.Duration // the shortest acceptable first wait (Retry-After)
	resumed []int64       // offsets of EventResumed
	upTo    bool          // resumed are upper bounds: a TCP reset drops bytes in flight
	// atLeast: resumed are lower bounds, up to a chunk beyond. Over HTTP/2 a
	// stalled chunk the client gave up on may have more of its bytes in the
	// server's flow-control window, which the server persists as it reads on.
	atLeast bool
	wantErr error
}

// matrixWire is a wire the fault matrix runs over: plain HTTP/1.1, or TLS
// with h2 offered (fakegcs's Client takes it), where a reset is a stream's
// and a dropped response drops the connection.
type matrixWire struct {
	name  string
	tls   bool
	proto string
}

var matrixWires = []matrixWire{{"http1", false, "HTTP/1.1"}, {"h2", true, "HTTP/2.0"}}

// matrixWatchdog is the stall cases' watchdog, a third of their 3 s stall:
// with both wires twice as many cases run in parallel, and under -race a
// healthy request on the loaded machine went quiet for more than 500 ms.
const matrixWatchdog = time.Second

// newMatrixEnv is newEnv on w.
func newMatrixEnv(t *testing.T, w matrixWire) *env {
	t.Helper()
	e := newEnvWith(t, mChunk, fakegcs.Options{TLS: w.tls})
	t.Cleanup(func() {
		for proto, p := range e.srv.Stats().Protocols {
			if proto != w.proto && p.Requests > 0 {
				t.Errorf("%d requests over %s, want %s only", p.Requests, proto, w.proto)
			}
		}
	})
	return e
}

// uploadSources are the sources the upload matrix reads per wire: every kind
// over HTTP/1.1, and over HTTP/2, where the protocol, not the source, is
// what differs, the in-memory one only (the suite's time is kept).
func uploadSources(w matrixWire) []srcKind {
	if w.tls {
		return []srcKind{srcReaderAt}
	}
	return []srcKind{srcReaderAt, srcFile, srcStream}
}

func at(n int64) *int64 { return &n }

// uploadCases are the faults on the upload path (storage.objects.insert).
var uploadCases = []faultCase{
	{name: "initiate 503", fault: fakegcs.Fault{Phase: fakegcs.PhaseInitiate, Kind: fakegcs.KindStatus, Status: 503}, waits: 1},
	{name: "chunk 408", fault: chunkFault(fakegcs.KindStatus, 408), waits: 1, resumed: []int64{mMid}},
	{name: "chunk 500", fault: chunkFault(fakegcs.KindStatus, 500), waits: 1, resumed: []int64{mMid}},
	{name: "chunk 502", fault: chunkFault(fakegcs.KindStatus, 502), waits: 1, resumed: []int64{mMid}},
	{name: "chunk 503", fault: chunkFault(fakegcs.KindStatus, 503), waits: 1, resumed: []int64{mMid}},
	{name: "chunk 504", fault: chunkFault(fakegcs.KindStatus, 504), waits: 1, resumed: []int64{mMid}},
	{name: "chunk 429 Retry-After", fault: withRetryAfter(chunkFault(fakegcs.KindStatus, 429), 7*time.Second),
		waits: 1, minWait: 7 * time.Second, resumed: []int64{mMid}},
	{name: "503 after 300K, partial persist", fault: withAfter(chunkFault(fakegcs.KindStatus, 503), 300000),
		waits: 1, resumed: []int64{mMid + quanta}},
	{name: "reset before body", fault: chunkFault(fakegcs.KindReset, 0), waits: 1, resumed: []int64{mMid}},
	{name: "reset mid-body, partial persist", fault: withAfter(chunkFault(fakegcs.KindReset, 0), 400000),
		waits: 1, resumed: []int64{mMid + quanta}},
	{name: "response dropped after commit", fault: chunkFault(fakegcs.KindDropResponse, 0), waits: 1, resumed: []int64{mLast}},
	{name: "final response dropped after commit", fault: fakegcs.Fault{Phase: fakegcs.PhaseFinal, Kind: fakegcs.KindDropResponse}, waits: 1},
	{name: "short 308", fault: withPersist(chunkFault(fakegcs.KindShort308, 0), quanta)},
	{name: "short 308 on the final chunk", fault: fakegcs.Fault{Phase: fakegcs.PhaseFinal, Kind: fakegcs.KindShort308}, waits: 1}, // kept nothing: a retry
	{name: "status query 503 after a reset", fault: fakegcs.Fault{Phase: fakegcs.PhaseStatus, Kind: fakegcs.KindStatus, Status: 503},
		waits: 2, resumed: []int64{mMid}},
	{name: "410 session", fault: chunkFault(fakegcs.KindExpire, 0), wantErr: ErrSessionExpired},
	{name: "stall beyond the watchdog", fault: withAfter(withDelay(chunkFault(fakegcs.KindStall, 0), 3*time.Second), 100000),
		waits: 1, resumed: []int64{mMid}},
}

func chunkFault(k fakegcs.Kind, status int) fakegcs.Fault {
	return fakegcs.Fault{Phase: fakegcs.PhaseChunk, Offset: at(mMid), Kind: k, Status: status}
}

func withAfter(f fakegcs.Fault, n int64) fakegcs.Fault         { f.AfterBytes = n; return f }
func withPersist(f fakegcs.Fault, n int64) fakegcs.Fault       { f.Persist = n; return f }
func withDelay(f fakegcs.Fault, d time.Duration) fakegcs.Fault { f.Delay = d; return f }
func withRetryAfter(f fakegcs.Fault, d time.Duration) fakegcs.Fault {
	f.RetryAfter = d
	return f
}

func TestFaultMatrixUpload(t *testing.T) {
	data := testData(mSize)
	for _, tc := range uploadCases {
		for _, w := range matrixWires {
			for _, kind := range uploadSources(w) {
				t.Run(tc.name+"/"+w.name+"/"+string(kind), func(t *testing.T) {
					t.Parallel()
					tc := tc
					tc.atLeast = w.tls && tc.fault.Kind == fakegcs.KindStall
					e := newMatrixEnv(t, w)
					// Only the stall case gets a short watchdog: under -race on a loaded
					// machine a healthy chunk can pause for longer than that, and a
					// spurious stall would add a retry the case does not expect.
					if tc.fault.Kind == fakegcs.KindStall {
						e.c.stall = matrixWatchdog
					}
					f := tc.fault
					f.Op, f.Object = "storage.objects.insert", "o"
					if tc.name == "status query 503 after a reset" {
						e.srv.Inject(chunkFault(fakegcs.KindReset, 0))
					}
					inj := e.srv.Inject(f)
					obj, err := e.uploadFrom(t, data, kind)
					e.checkRetries(t, tc)
					if tc.wantErr != nil {
						if !errors.Is(err, tc.wantErr) {
							t.Fatalf("error %v; want %v", err, tc.wantErr)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					e.checkStored(t, "o", data, obj.Crc32c)
					if testing.Verbose() {
						for _, r := range e.srv.Log() {
							t.Logf("%s %s %s -> %d %s in=%d fault=%s", r.Method, r.Phase, r.ContentRange, r.Status, r.RangeHeader, r.BytesIn, r.Fault)
						}
					}
					ss, _ := e.srv.LastSession("bkt", "o")
					fired := 0
					for _, in := range e.srv.Faults() {
						fired += in.Fired()
					}
					if inj.Fired() != 1 {
						t.Errorf("fault fired %d times", inj.Fired())
					}
					if resent := ss.Received - mSize; resent < 0 || resent > int64(fired*mChunk) {
						t.Errorf("session received %d bytes for %d: %d re-sent for %d faults", ss.Received, mSize, resent, fired)
					}
				})
			}
		}
	}
}

// srcKind is what an upload test reads from.
type srcKind string

const (
	srcReaderAt srcKind = "readerat" // an in-memory io.ReaderAt: chunks read with ReadAt
	srcFile     srcKind = "osfile"   // an *os.File, as the upload package passes
	srcStream   srcKind = "stream"   // an io.Reader of unknown size
)

// upload starts a session for "o" and uploads data from an in-memory
// ReaderAt or a stream of unknown size.
func (e *env) upload(t testing.TB, data []byte, stream bool) (obj *storage.Object, err error) {
	if stream {
		return e.uploadFrom(t, data, srcStream)
	}
	return e.uploadFrom(t, data, srcReaderAt)
}

// uploadFrom starts a session for "o" and uploads data from a source of kind.
func (e *env) uploadFrom(t testing.TB, data []byte, kind srcKind) (obj *storage.Object, err error) {
	ctx := context.Background()
	size := int64(len(data))
	if kind == srcStream {
		size = -1
	}
	s, err := e.c.Start(ctx, ObjectSpec{Bucket: "bkt", Name: "o", Size: size})
	if err != nil {
		return nil, err
	}
	switch kind {
	case srcStream:
		return e.c.UploadStream(ctx, s, bytes.NewReader(data))
	case srcFile:
		return e.c.Upload(ctx, s, tempFile(t, data))
	}
	return e.c.Upload(ctx, s, bytes.NewReader(data))
}

// tempFile returns data in an open file, closed when the test ends.
func tempFile(t testing.TB, data []byte) *os.File {
	t.Helper()
	name := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// checkRetries compares the retry waits and resumed offsets with tc's.
func (e *env) checkRetries(t testing.TB, tc faultCase) {
	t.Helper()
	if len(e.clk.Sleeps()) != tc.waits {
		t.Errorf("retry waits %v, want %d", e.clk.Sleeps(), tc.waits)
	}
	if tc.minWait > 0 && (len(e.clk.Sleeps()) == 0 || e.clk.Sleeps()[0] < tc.minWait) {
		t.Errorf("first wait %v, want at least %v (Retry-After)", e.clk.Sleeps(), tc.minWait)
	}
	var resumed []int64
	for _, ev := range e.events {
		if ev.Kind == EventResumed {
			resumed = append(resumed, ev.Offset)
		}
	}
	if tc.upTo && len(resumed) == len(tc.resumed) {
		for i := range resumed {
			if resumed[i] > 0 && resumed[i] <= tc.resumed[i] {
				resumed[i] = tc.resumed[i]
			}
		}
	}
	if tc.atLeast && len(resumed) == len(tc.resumed) {
		for i := range resumed {
			if resumed[i] >= tc.resumed[i] && resumed[i] <= tc.resumed[i]+mChunk {
				resumed[i] = tc.resumed[i]
			}
		}
	}
	if !slices.Equal(resumed, tc.resumed) {
		t.Errorf("resumed from %v, want %v", resumed, tc.resumed)
	}
	checkRedacted(t, e.events, nil)
}

// checkStored asserts the server holds data under name with its CRC32C.
func (e *env) checkStored(t testing.TB, name string, data []byte, crc string) {
	t.Helper()
	got, attrs, err := e.srv.Object("bkt", name)
	if err != nil {
		t.Fatal(err)
	}
	want := crc32.Checksum(data, castagnoli)
	if !bytes.Equal(got, data) || attrs.CRC32C != want || crc != EncodeCRC32C(want) {
		t.Fatalf("stored %d bytes crc %08x (object says %s), want %d bytes crc %08x", len(got), attrs.CRC32C, crc, len(data), want)
	}
}
