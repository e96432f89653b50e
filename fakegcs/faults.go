package fakegcs

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Kind is what an injected fault does to a matching request.
type Kind string

// Fault kinds. "Before the request" means before any byte of its body is read.
const (
	// KindStatus answers Status (with Retry-After when RetryAfter is set)
	// without processing the request. With AfterBytes > 0 on an upload, the
	// first AfterBytes of the body are received and their whole 256 KiB
	// quanta persisted before the status is returned (testbench's
	// return-503-after-256K).
	KindStatus Kind = "status"
	// KindReset resets the request, with no response: over HTTP/1.1 the TCP
	// connection (RST), over HTTP/2 the request's stream (RST_STREAM
	// INTERNAL_ERROR, as GCS's front ends do), leaving the connection's other
	// streams alone. With AfterBytes == 0 it happens before the request is
	// read; with AfterBytes > 0 on an upload, after that many body bytes were
	// read, of which Persist (default AfterBytes, rounded down to 256 KiB) are
	// persisted; on a download, after that many body bytes were sent.
	KindReset Kind = "reset"
	// KindDropResponse processes the request completely (a chunk is
	// persisted, an upload finalized, an object deleted) and then resets the
	// TCP connection instead of answering: over HTTP/2 every stream on it
	// fails too, as when the path to GCS breaks.
	KindDropResponse Kind = "drop-response"
	// KindShort308 reads a whole chunk but persists only Persist bytes of it
	// (rounded down to 256 KiB; default half the chunk) and answers 308 with
	// that smaller Range, even for a final chunk.
	KindShort308 Kind = "short-308"
	// KindExpire ends the upload session: this and every later request on
	// it gets 410 Gone.
	KindExpire Kind = "expire"
	// KindStall waits Delay, then carries on normally (a request whose
	// client went away during a wait before it was served is dropped, not
	// served to nobody). With AfterBytes > 0
	// the wait happens after that many body bytes were received (upload) or
	// sent (download).
	KindStall Kind = "stall"
	// KindThrottle limits the request body and the response body to
	// BytesPerSecond each. Usually combined with Times: -1.
	KindThrottle Kind = "throttle"
	// KindTruncate cuts a download after AfterBytes body bytes (half the
	// body when it is shorter) by a reset (of the connection, or over HTTP/2
	// of the stream), so the client sees fewer bytes than Content-Length
	// announced.
	KindTruncate Kind = "truncate"
	// KindCorrupt flips the bits of the download body byte at offset
	// AfterBytes (the middle byte when the body is shorter); headers,
	// including x-goog-hash, still describe the true content.
	KindCorrupt Kind = "corrupt"
	// KindRepeatPageToken answers a listing (storage.objects.list) with the
	// page asked for and, as its nextPageToken, the token it was given (the
	// first page, given none, a token that lists from the start): a client
	// that follows it lists the same page forever.
	KindRepeatPageToken Kind = "repeat-page-token"
	// KindEmptyPage answers a listing with no objects and no prefixes, and
	// a nextPageToken that differs from the one given but lists from the
	// same place: with Times: -1, a listing that never ends.
	KindEmptyPage Kind = "empty-page"
	// KindHugeBody answers 200 with a JSON object of AfterBytes bytes
	// (default 100 MiB), padded with spaces and streamed, in place of a
	// metadata or listing answer: a broken or hostile server's.
	KindHugeBody Kind = "huge-body"
)

// hugeBodyDefault is KindHugeBody's length when AfterBytes is not set.
const hugeBodyDefault = 100 << 20

// Phases of a resumable upload a fault can be restricted to with
// [Fault].Phase.
const (
	PhaseInitiate = "initiate" // the POST that creates a session
	PhaseChunk    = "chunk"    // any request on a session that carries bytes
	PhaseFinal    = "final"    // a chunk or status query that completes the upload
	PhaseStatus   = "status"   // a status query (Content-Range: bytes */...)
	PhaseCancel   = "cancel"   // DELETE on a session
)

// Fault describes a failure to inject. The zero value of every match field
// matches anything; a request is matched against faults in the order they
// were injected and at most one fault fires per request.
type Fault struct {
	// Op is the JSON API method ID to match, e.g. "storage.objects.insert"
	// (uploads: initiation, every chunk, status query and cancel),
	// "storage.objects.get" (metadata and every kind of download),
	// "storage.objects.list". Empty matches every operation.
	Op string `json:"op,omitempty"`
	// Bucket and Object match exactly; empty matches any.
	Bucket string `json:"bucket,omitempty"`
	Object string `json:"object,omitempty"`
	// Phase restricts an upload fault to one part of the resumable
	// protocol (PhaseInitiate, PhaseChunk, ...), or a get to the download of
	// content (PhaseMedia). Empty matches any request.
	Phase string `json:"phase,omitempty"`
	// Offset, when set, matches only a chunk starting at that byte of the
	// object (its Content-Range start) or a download whose Range starts
	// there (0 without Range). Use new(int64(n)).
	Offset *int64 `json:"offset,omitempty"`
	// Skip lets that many matching requests pass before the fault applies.
	Skip int `json:"skip,omitempty"`
	// Times is how often the fault fires: 0 means once, or without limit
	// when Probability is set; negative means without limit.
	Times int `json:"times,omitempty"`
	// Probability, when in (0, 1), fires the fault on each matching
	// request with that probability, drawn from a generator seeded with
	// [Options].Seed, so a run is reproducible.
	Probability float64 `json:"probability,omitempty"`
	// Optional faults are not reported by [NewTest] when they never fired.
	// Faults with a Probability are always optional.
	Optional bool `json:"optional,omitempty"`

	// Kind is what happens; see the Kind constants.
	Kind Kind `json:"kind"`
	// Status is the HTTP status KindStatus answers (e.g. 408, 429, 500,
	// 502, 503, 504).
	Status int `json:"status,omitempty"`
	// RetryAfter, when positive, is sent as Retry-After in whole seconds
	// (rounded up) with KindStatus.
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
	// AfterBytes is the body offset (from the first byte of this request's
	// body) at which a mid-body fault acts; see each Kind.
	AfterBytes int64 `json:"afterBytes,omitempty"`
	// Persist is how many bytes of the chunk (counted from its
	// Content-Range start) KindReset and KindShort308 persist; rounded down
	// to a multiple of 256 KiB of the object offset.
	Persist int64 `json:"persist,omitempty"`
	// Delay is how long KindStall waits.
	Delay time.Duration `json:"delay,omitempty"`
	// BytesPerSecond is KindThrottle's rate.
	BytesPerSecond int64 `json:"bytesPerSecond,omitempty"`
}

func (f Fault) validate() error {
	switch f.Kind {
	case KindStatus:
		if f.Status < 100 || f.Status > 599 {
			return fmt.Errorf("fakegcs: fault status %d out of range", f.Status)
		}
	case KindStall:
		if f.Delay <= 0 {
			return fmt.Errorf("fakegcs: stall fault needs a positive Delay")
		}
	case KindThrottle:
		if f.BytesPerSecond <= 0 {
			return fmt.Errorf("fakegcs: throttle fault needs a positive BytesPerSecond")
		}
	case KindReset, KindDropResponse, KindShort308, KindExpire, KindTruncate, KindCorrupt,
		KindRepeatPageToken, KindEmptyPage, KindHugeBody:
	default:
		return fmt.Errorf("fakegcs: unknown fault kind %q", f.Kind)
	}
	if f.Probability < 0 || f.Probability > 1 {
		return fmt.Errorf("fakegcs: fault probability %v outside [0, 1]", f.Probability)
	}
	return nil
}

func (f Fault) String() string {
	s := string(f.Kind)
	if f.Kind == KindStatus {
		s += fmt.Sprintf(" %d", f.Status)
	}
	if f.Op != "" {
		s += " on " + f.Op
	}
	if f.Phase != "" {
		s += " (" + f.Phase + ")"
	}
	if f.Offset != nil {
		s += fmt.Sprintf(" at offset %d", *f.Offset)
	}
	if f.AfterBytes > 0 {
		s += fmt.Sprintf(" after %d bytes", f.AfterBytes)
	}
	return s
}

// Injection is the handle of an injected fault.
type Injection struct {
	id    int
	fault Fault
	s     *Server

	mu      sync.Mutex
	seen    int // matching requests, skipped or not
	fired   int
	removed bool
}

// ID identifies the injection in the HTTP control API.
func (in *Injection) ID() int { return in.id }

// Fault returns the injected fault.
func (in *Injection) Fault() Fault { return in.fault }

// Fired reports how many times the fault has fired.
func (in *Injection) Fired() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.fired
}

// Remove stops the fault from firing again.
func (in *Injection) Remove() {
	in.mu.Lock()
	in.removed = true
	in.mu.Unlock()
}

func (in *Injection) mustFire() bool {
	return !in.fault.Optional && in.fault.Probability == 0
}

// limit is the number of times the fault may fire; -1 is without limit.
func (in *Injection) limit() int {
	switch {
	case in.fault.Times < 0:
		return -1
	case in.fault.Times == 0 && in.fault.Probability > 0:
		return -1
	case in.fault.Times == 0:
		return 1
	}
	return in.fault.Times
}

// try decides whether the fault fires for a request that matches it.
func (in *Injection) try(rng *rand.Rand) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.removed || (in.limit() >= 0 && in.fired >= in.limit()) {
		return false
	}
	in.seen++
	if in.seen <= in.fault.Skip {
		return false
	}
	if p := in.fault.Probability; p > 0 && p < 1 && rng.Float64() >= p {
		return false
	}
	in.fired++
	return true
}

// matches reports whether the request is one the fault applies to.
func (f *Fault) matches(ri *reqInfo) bool {
	if f.Op != "" && f.Op != ri.op {
		return false
	}
	if (f.Bucket != "" && f.Bucket != ri.bucket) || (f.Object != "" && f.Object != ri.object) {
		return false
	}
	if f.Offset != nil && (!ri.hasOffset || *f.Offset != ri.offset) {
		return false
	}
	switch f.Phase {
	case "":
		return true
	case PhaseChunk:
		return ri.phase == PhaseChunk || (ri.phase == PhaseFinal && ri.hasOffset)
	case PhaseStatus:
		return ri.phase == PhaseStatus || (ri.phase == PhaseFinal && !ri.hasOffset)
	}
	return f.Phase == ri.phase
}

// Inject adds a fault; it applies to requests that arrive from now on.
// An invalid fault is a bug in the test: on a server from [NewTest] it
// fails the test at once, on one from [New] it panics. Use
// [Server.TryInject] for faults that come from users.
func (s *Server) Inject(f Fault) *Injection {
	in, err := s.TryInject(f)
	if err != nil {
		if s.tb != nil {
			s.tb.Helper()
			s.tb.Fatal(err)
		}
		panic(err)
	}
	return in
}

// TryInject is [Server.Inject] returning an error for an invalid fault.
func (s *Server) TryInject(f Fault) (*Injection, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.lastFaultID++
	in := &Injection{id: s.lastFaultID, fault: f, s: s}
	s.faults = append(s.faults, in)
	return in, nil
}

// Faults returns every injection, in the order they were made.
func (s *Server) Faults() []*Injection {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	return append([]*Injection(nil), s.faults...)
}

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	for _, in := range s.faults {
		in.Remove()
	}
	s.faults = nil
}

// pickFault returns the fault that fires for this request, if any.
func (s *Server) pickFault(ri *reqInfo) *Fault {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	for _, in := range s.faults {
		if !in.fault.matches(ri) {
			continue
		}
		if in.try(s.rng) {
			f := in.fault
			return &f
		}
	}
	return nil
}
