package upload

import (
	"context"
	"hash/crc32"
	"slices"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// The fault matrix of composite uploads: every fault fakegcs injects, on
// one component's requests (resumable's matrix, with the other components
// running alongside), on the compose, on a component's delete and on the
// read of the bucket's settings. Each run ends with the object byte-exact
// and its CRC32C, no component left, the retries and the component's
// resumed offsets as listed, and no more than one chunk per fault sent
// twice.

const (
	xChunk = 512 << 10      // chunks
	xComp  = 3 * xChunk     // components: chunks at 0, xMid and xLast
	xSize  = 3*xComp + 1000 // 4 components, the last of 1000 bytes
	xMid   = int64(xChunk)  // the middle chunk of a component
	xLast  = int64(2 * xChunk)
)

type compositeCase struct {
	name    string
	fault   fakegcs.Fault // Object "" means component 1
	waits   int           // retries
	minWait time.Duration // the shortest acceptable first wait (Retry-After)
	resumed []int64       // component 1's EventResumed offsets
	before  *fakegcs.Fault
}

// compChunk is a fault on component 1's middle chunk.
func compChunk(k fakegcs.Kind, status int) fakegcs.Fault {
	return fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(xMid), Kind: k, Status: status}
}

func compositeCases() []compositeCase {
	insert := func(phase string, k fakegcs.Kind) fakegcs.Fault {
		return fakegcs.Fault{Op: "storage.objects.insert", Phase: phase, Kind: k, Status: 503}
	}
	after := func(f fakegcs.Fault, n int64) fakegcs.Fault { f.AfterBytes = n; return f }
	op := func(op string, k fakegcs.Kind, status int) fakegcs.Fault {
		return fakegcs.Fault{Op: op, Kind: k, Status: status}
	}
	retryAfter := compChunk(fakegcs.KindStatus, 429)
	retryAfter.RetryAfter = 7 * time.Second
	composeAfter := op("storage.objects.compose", fakegcs.KindStatus, 429)
	composeAfter.RetryAfter = 5 * time.Second
	short := compChunk(fakegcs.KindShort308, 0)
	short.Persist = 256 << 10
	stall := after(compChunk(fakegcs.KindStall, 0), 100000)
	stall.Delay = 2 * time.Second
	reset := compChunk(fakegcs.KindReset, 0)
	return []compositeCase{
		{name: "initiate 503", fault: insert(fakegcs.PhaseInitiate, fakegcs.KindStatus), waits: 1},
		{name: "chunk 408", fault: compChunk(fakegcs.KindStatus, 408), waits: 1, resumed: []int64{xMid}},
		{name: "chunk 500", fault: compChunk(fakegcs.KindStatus, 500), waits: 1, resumed: []int64{xMid}},
		{name: "chunk 502", fault: compChunk(fakegcs.KindStatus, 502), waits: 1, resumed: []int64{xMid}},
		{name: "chunk 503", fault: compChunk(fakegcs.KindStatus, 503), waits: 1, resumed: []int64{xMid}},
		{name: "chunk 504", fault: compChunk(fakegcs.KindStatus, 504), waits: 1, resumed: []int64{xMid}},
		{name: "chunk 429 Retry-After", fault: retryAfter, waits: 1, minWait: 7 * time.Second, resumed: []int64{xMid}},
		{name: "503 after 300K, partial persist", fault: after(compChunk(fakegcs.KindStatus, 503), 300000), waits: 1, resumed: []int64{xMid + 256<<10}},
		{name: "reset before body", fault: reset, waits: 1, resumed: []int64{xMid}},
		{name: "reset mid-body, partial persist", fault: after(reset, 400000), waits: 1, resumed: []int64{xMid + 256<<10}},
		{name: "response dropped after commit", fault: compChunk(fakegcs.KindDropResponse, 0), waits: 1, resumed: []int64{xLast}},
		{name: "final response dropped after commit", fault: insert(fakegcs.PhaseFinal, fakegcs.KindDropResponse), waits: 1},
		{name: "short 308", fault: short},
		{name: "short 308 on the final chunk, half kept", fault: insert(fakegcs.PhaseFinal, fakegcs.KindShort308)}, // progress: no retry
		{name: "status query 503 after a reset", before: &reset, fault: insert(fakegcs.PhaseStatus, fakegcs.KindStatus), waits: 2, resumed: []int64{xMid}},
		{name: "410 session: the component starts over", fault: compChunk(fakegcs.KindExpire, 0)},
		{name: "stall beyond the watchdog", fault: stall, waits: 1, resumed: []int64{xMid}},
		{name: "compose 503", fault: op("storage.objects.compose", fakegcs.KindStatus, 503), waits: 1},
		{name: "compose 429 Retry-After", fault: composeAfter, waits: 1, minWait: 5 * time.Second},
		{name: "compose reset", fault: op("storage.objects.compose", fakegcs.KindReset, 0), waits: 1},
		{name: "compose reply lost", fault: op("storage.objects.compose", fakegcs.KindDropResponse, 0), waits: 1},
		// Deleting the components (where the server leaves them: it ignores
		// deleteSourceObjects) and reading the bucket's settings are retried
		// under the Client's policy; their retries are not the transfer's.
		{name: "delete 503", fault: op("storage.objects.delete", fakegcs.KindStatus, 503)},
		{name: "delete reply lost", fault: op("storage.objects.delete", fakegcs.KindDropResponse, 0)},
		{name: "bucket settings 503", fault: op("storage.buckets.get", fakegcs.KindStatus, 503)},
	}
}

func TestFaultMatrixComposite(t *testing.T) {
	data := randBytes(xSize, 80)
	for _, tc := range compositeCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, fakegcs.Options{IgnoreComposeDeleteSources: tc.fault.Op == "storage.objects.delete"})
			src := writeTemp(t, t.TempDir(), "big.bin", data)
			dst := URL{testBucket, "big.bin"}
			comp1 := planOf(t, src, dst, xComp)[1].Name
			var events eventLog
			c := newClient(t, srv, composeOpts(xComp, nil, func(o *Options) {
				o.ChunkSize, o.OnEvent = xChunk, events.add
				if tc.fault.Kind == fakegcs.KindStall {
					o.StallTimeout = 500 * time.Millisecond // only here: a loaded machine must not stall the others
				}
			}))
			for _, f := range []*fakegcs.Fault{tc.before, &tc.fault} {
				if f != nil && f.Object == "" && f.Op != "storage.objects.compose" && f.Op != "storage.buckets.get" {
					f.Object = comp1
				}
			}
			if tc.before != nil {
				srv.Inject(*tc.before)
			}
			inj := srv.Inject(tc.fault)
			r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			attrs := wantObject(t, srv, "big.bin", data)
			crc := crc32.Checksum(data, castagnoli)
			if attrs.CRC32C != crc || r.CRC32C != crc || attrs.ComponentCount != 4 || r.Note != "composite of 4 components" {
				t.Errorf("object crc %08x, result %08x, %d components (%q); want %08x, 4", attrs.CRC32C, r.CRC32C, attrs.ComponentCount, r.Note, crc)
			}
			wantNoComponents(t, srv)
			checkCompositeRetries(t, tc, r, &events, comp1)
			if inj.Fired() != 1 {
				t.Errorf("fault fired %d times", inj.Fired())
			}
			faults := int64(1 + btoi(tc.before != nil))
			if s, _ := srv.LastSession(testBucket, comp1); s.Received < xComp || s.Received-xComp > faults*xChunk {
				t.Errorf("component 1's session received %d bytes for %d: more than a chunk re-sent per fault", s.Received, xComp)
			}
		})
	}
}

// checkCompositeRetries compares the retries and component 1's resumed
// offsets with tc's.
func checkCompositeRetries(t *testing.T, tc compositeCase, r *Result, events *eventLog, comp1 string) {
	t.Helper()
	var waits []time.Duration
	var resumed []int64
	events.mu.Lock()
	for _, e := range events.events {
		switch {
		case e.Kind == resumable.EventRetry:
			waits = append(waits, e.Wait)
		case e.Kind == resumable.EventResumed && e.Part == 2: // comp1
			resumed = append(resumed, e.Offset)
		}
	}
	events.mu.Unlock()
	if len(waits) != tc.waits || r.Attempts != 1+tc.waits {
		t.Errorf("retries %v, attempts %d; want %d retries", waits, r.Attempts, tc.waits)
	}
	if tc.minWait > 0 && (len(waits) == 0 || waits[0] < tc.minWait) {
		t.Errorf("first wait %v, want at least %v (Retry-After)", waits, tc.minWait)
	}
	if !slices.Equal(resumed, tc.resumed) {
		t.Errorf("component 1 resumed from %v, want %v", resumed, tc.resumed)
	}
}
