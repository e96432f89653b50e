package demo

import (
	"fmt"
	"sync"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/human"
	"github.com/gcsput/gcsput/upload"
)

// faultScript arms the demo's faults one at a time as the upload progresses, so each one
// hits a chunk whatever the file and chunk sizes, and says which one fired.
type faultScript struct {
	mu    sync.Mutex
	srv   *fakegcs.Server
	size  int64
	steps []*faultStep
	say   func(string)
}

type faultStep struct {
	at      float64 // arm once this fraction of the file is persisted (and the step before fired)
	desc    string
	fault   fakegcs.Fault
	retries int // the retries the client makes for it
	in      *fakegcs.Injection
	told    int
}

// newFaultScript scripts the faults of the upload to dst. They match every upload request
// in dst's bucket, not dst's name: a large file goes up as a parallel composite upload,
// whose components are objects of their own (gcsput-tmp/…), each with its own session, and
// the demo's bucket holds nothing else, so each fault hits the next request of the file's
// upload, whichever session makes it.
func newFaultScript(srv *fakegcs.Server, dst upload.URL, size, chunk int64, say func(string)) *faultScript {
	op := func(f fakegcs.Fault) fakegcs.Fault {
		f.Op, f.Bucket = "storage.objects.insert", dst.Bucket
		return f
	}
	half := chunk / 2
	step := func(at float64, desc string, f fakegcs.Fault) *faultStep {
		// Each firing costs the client a retry, but a short 308, which it continues from.
		retries := max(f.Times, 1)
		if f.Kind == fakegcs.KindShort308 {
			retries = 0
		}
		return &faultStep{at: at, desc: desc, fault: op(f), retries: retries}
	}
	return &faultScript{srv: srv, size: size, say: say, steps: []*faultStep{
		step(0, "503 Service Unavailable when the session is created",
			fakegcs.Fault{Phase: fakegcs.PhaseInitiate, Kind: fakegcs.KindStatus, Status: 503}),
		step(0.10, "503 Service Unavailable twice on a chunk",
			fakegcs.Fault{Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindStatus, Status: 503, Times: 2}),
		step(0.25, "429 Too Many Requests with Retry-After: 1",
			fakegcs.Fault{Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindStatus, Status: 429, RetryAfter: time.Second}),
		step(0.35, "connection reset before a chunk is read",
			fakegcs.Fault{Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindReset}),
		// The reset after 3/4 of a chunk comes before the short 308, which leaves a chunk of
		// half the size to send next: hitting that one, the reset would never be reached,
		// costing no retry, and the interruption that waits for its retry would never come.
		step(0.45, fmt.Sprintf("connection reset after %s of a chunk, of which %s is persisted", human.Size(half+half/2), human.Size(half)),
			fakegcs.Fault{Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindReset, AfterBytes: half + half/2, Persist: half}),
		step(0.55, fmt.Sprintf("308 that acknowledges only %s of a chunk", human.Size(half)),
			fakegcs.Fault{Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindShort308, Persist: half}),
	}}
}

// arm injects the next fault when its turn has come: the previous one fired and the
// upload reached its point.
func (s *faultScript) arm(done int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, st := range s.steps {
		if st.in != nil {
			continue
		}
		if i > 0 && (s.steps[i-1].in == nil || s.steps[i-1].in.Fired() == 0) {
			return
		}
		if float64(done) < st.at*float64(s.size) {
			return
		}
		st.in = s.srv.Inject(st.fault)
	}
}

// tell prints each fault that fired since the last call.
func (s *faultScript) tell() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.steps {
		if st.in == nil {
			continue
		}
		if n := st.in.Fired(); n > st.told {
			st.told = n
			s.say("⚡ fakegcs injected: " + st.desc)
		}
	}
}

// unfired lists the faults that never fired: the demo did not show them.
func (s *faultScript) unfired() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, st := range s.steps {
		if st.in == nil || st.in.Fired() == 0 {
			out = append(out, st.desc)
		}
	}
	return out
}

// done reports that every fault fired and the client made the retries they cost
// (retries is its count so far).
func (s *faultScript) done(retries int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	want := 0
	for _, st := range s.steps {
		if st.in == nil || st.in.Fired() < max(st.fault.Times, 1) {
			return false
		}
		want += st.retries
	}
	return retries >= want
}
