package fakegcs

import (
	"maps"
	"net/http"
	"strings"
	"time"
)

// Request is one served request, as recorded in the request log. It holds
// no upload_id: session URIs are secrets.
type Request struct {
	Op     string // JSON API method ID, e.g. "storage.objects.insert"
	Method string
	// Path is the URL path; session requests show no query.
	Path         string
	Bucket       string
	Object       string
	Phase        string // resumable phase (Phase*), PhaseMedia for a download, or ""
	ContentRange string // the request's Content-Range
	Range        string // the request's Range
	Status       int    // the status sent; 0 when the connection was reset
	// RangeHeader is the Range header of the response (308s).
	RangeHeader string
	BytesIn     int64 // request body bytes read
	BytesOut    int64 // response body bytes sent
	// Rewritten is the bytes an objects.rewrite call copied (see
	// [Stats].BytesRewritten).
	Rewritten int64
	Fault     Kind // the fault injected, or ""
	// Outcome is "client gone" for a request whose client vanished before
	// its body was read (Status is then 499, nginx's and GCS's "client closed
	// request"), else "".
	Outcome  string
	Duration time.Duration
	// KeySHA256 is the SHA256 (base64) of the customer-supplied encryption
	// key the request carried (X-Goog-Encryption-Key-Sha256), never the
	// key; "" for none.
	KeySHA256 string
}

// Stats is a snapshot of the server's counters.
type Stats struct {
	// Requests counts requests per operation ("storage.objects.insert",
	// ...) as they arrive, before any of the response is sent, so a client
	// that has read a reply sees its request counted; fakegcs's own control
	// requests are not counted.
	Requests map[string]int
	// Faults counts injected faults that fired, per kind.
	Faults map[Kind]int
	// BytesIn and BytesOut total the request and response bodies.
	BytesIn, BytesOut int64
	// BytesRewritten totals the bytes objects.rewrite calls copied: each
	// call counts what it moved the rewrite forward (up to its per-call
	// limit), so a rewrite resumed from a token counts only the remainder,
	// and a call repeated after a lost answer counts again.
	BytesRewritten int64
	// Sessions describes every resumable session, oldest first.
	Sessions []SessionStats
	// Connections counts the connections accepted: TCP, with or without
	// TLS, and [Server.InMemoryClient]'s pipes, whether or not they carried
	// a request (a failed TLS handshake counts).
	Connections int
	// GlobLists counts the storage.objects.list requests (also in Requests)
	// that carried a matchGlob and were answered with a listing.
	GlobLists int
	// Protocols counts, by protocol as http.Request.Proto names it
	// ("HTTP/1.1", "HTTP/2.0"), the requests counted in Requests and the
	// connections that carried them. A connection counts once, on its first
	// such request (again after [Server.ResetStats]); a Server mounted in
	// another http.Server counts requests only.
	Protocols map[string]ProtoStats
	// Billed counts the requests that named a project to bill (the
	// userProject parameter), by project, as they arrive; a requester-pays
	// bucket refuses requests that name none.
	Billed map[string]int
	// Refused counts the requests refused by each of the [Limits], by
	// name: LimitBucketWrites, LimitBucketReads, LimitObjectWrites.
	Refused map[string]int
	// Capacity is each bucket's capacity now under [Limits] (grown by
	// Doubling), for the buckets that have met a limit since it was set.
	Capacity map[string]Capacity
}

// ProtoStats is what one protocol carried.
type ProtoStats struct {
	Requests    int
	Connections int
}

// maxLog bounds the request log; older entries are dropped.
const maxLog = 10000

type counters struct {
	requests map[string]int
	conns    int // accepted
	protos   map[string]ProtoStats
	faults   map[Kind]int
	globs    int // listings filtered by matchGlob
	in, out  int64
	// rewritten is Stats.BytesRewritten.
	rewritten int64
	log       []Request
	// inserts counts the objects storage.objects.insert created, by bucket
	// and object name.
	inserts map[string]map[string]int
	billed  map[string]int // requests per userProject
	refused map[string]int // requests refused, per limit
}

func newCounters() counters {
	return counters{requests: map[string]int{}, protos: map[string]ProtoStats{}, faults: map[Kind]int{},
		inserts: map[string]map[string]int{}, billed: map[string]int{}, refused: map[string]int{}}
}

// arrive counts a request of op before it is served, by operation and by
// protocol, and its connection on its first request. It returns the
// ResetStats count the request belongs to.
func (s *Server) arrive(op string, r *http.Request) uint64 {
	ci := connOf(r)
	s.cmu.Lock()
	defer s.cmu.Unlock()
	s.counters.requests[op]++
	p := s.counters.protos[r.Proto]
	p.Requests++
	if ci != nil && ci.counted != s.epoch+1 {
		ci.counted = s.epoch + 1
		p.Connections++
	}
	s.counters.protos[r.Proto] = p
	return s.epoch
}

// record accounts a served request: its bytes, fault and log entry. The
// request itself was counted by arrive.
func (s *Server) record(x *exchange, d time.Duration) {
	rec := Request{
		Op: x.ri.op, Method: x.r.Method, Path: x.r.URL.Path,
		Bucket: x.ri.bucket, Object: x.ri.object, Phase: x.ri.phase,
		ContentRange: x.r.Header.Get("Content-Range"), Range: x.r.Header.Get("Range"),
		Status: x.w.status, BytesIn: x.body.n, BytesOut: x.w.written, Duration: d,
		RangeHeader: x.w.Header().Get("Range"), Rewritten: x.rewritten,
		KeySHA256: x.r.Header.Get("X-Goog-Encryption-Key-Sha256"),
	}
	if x.w.dead {
		rec.Status = 0
	}
	if x.gone {
		rec.Status, rec.Outcome = 499, "client gone"
	}
	if x.fault != nil {
		rec.Fault = x.fault.Kind
	}
	if sess := x.ri.session; sess != nil {
		sess.mu.Lock()
		sess.stats.Requests++
		switch {
		case x.ri.hasOffset:
			sess.stats.Chunks++
		case x.ri.phase == PhaseStatus || x.ri.phase == PhaseFinal:
			sess.stats.StatusQueries++
		}
		sess.mu.Unlock()
	}
	if rec.Status >= 500 {
		s.logf("fakegcs: %s %s answered %d", rec.Op, strings.ToLower(rec.Phase), rec.Status)
	}
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if x.epoch != s.epoch {
		return // it arrived before a ResetStats: its counts were reset
	}
	c := &s.counters
	if rec.Fault != "" {
		c.faults[rec.Fault]++
	}
	c.in += rec.BytesIn
	c.out += rec.BytesOut
	if len(c.log) == maxLog {
		c.log = append(c.log[:0], c.log[maxLog/2:]...)
	}
	c.log = append(c.log, rec)
}

// inserted counts an object that storage.objects.insert created: a
// single-request upload or the final chunk of a resumable session, counted
// once the object is live.
func (s *Server) inserted(bucket, name string) {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	m := s.counters.inserts[bucket]
	if m == nil {
		m = map[string]int{}
		s.counters.inserts[bucket] = m
	}
	m[name]++
}

// InsertCounts returns, by object name, how many times storage.objects.insert
// created each object of bucket since the server started or [Server.ResetStats]:
// single-request (media, multipart) and resumable uploads alike, counted when
// the object became live. A failed request or an unfinished session counts
// nothing; a retried insert that had already succeeded counts twice. Objects
// made by compose, copy, rewrite or [Server.PutObject] are not counted; a
// deleted object keeps its count. The map is a new one, empty when nothing was
// inserted. It has an entry per object, which is why it is not part of [Stats].
func (s *Server) InsertCounts(bucket string) map[string]int {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	m := s.counters.inserts[bucket]
	out := make(map[string]int, len(m))
	maps.Copy(out, m)
	return out
}

// globListed counts a listing filtered by matchGlob.
func (s *Server) globListed() {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	s.counters.globs++
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.cmu.Lock()
	st := Stats{
		Requests: maps.Clone(s.counters.requests),
		Faults:   maps.Clone(s.counters.faults),
		BytesIn:  s.counters.in, BytesOut: s.counters.out, BytesRewritten: s.counters.rewritten,
		Connections: s.counters.conns,
		GlobLists:   s.counters.globs,
		Protocols:   maps.Clone(s.counters.protos),
		Billed:      s.counters.billedCounts(),
		Refused:     s.counters.refusedCounts(),
	}
	s.cmu.Unlock()
	st.Capacity = s.lim.capacities()
	s.mu.Lock()
	sessions := append([]*session(nil), s.order...)
	s.mu.Unlock()
	for _, sess := range sessions {
		st.Sessions = append(st.Sessions, sess.snapshot())
	}
	return st
}

// Count returns how many requests of an operation have arrived. A request
// is counted before its response starts, so once a client has read a
// response, its request is in the count.
func (s *Server) Count(op string) int {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	return s.counters.requests[op]
}

// Log returns the recorded requests, oldest first (at most the last
// 10,000).
func (s *Server) Log() []Request {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	return append([]Request(nil), s.counters.log...)
}

// LastSession returns the stats of the newest session for bucket/object.
func (s *Server) LastSession(bucket, object string) (SessionStats, bool) {
	s.mu.Lock()
	var found *session
	for _, sess := range s.order {
		if sess.bucket == bucket && sess.name == object {
			found = sess
		}
	}
	s.mu.Unlock()
	if found == nil {
		return SessionStats{}, false
	}
	return found.snapshot(), true
}

// ResetStats zeroes the counters, the insert counts and the request log (not
// the sessions). A connection already open counts again in
// [Stats].Protocols on its next request, but not in [Stats].Connections.
// A request that arrived before the reset and ends after it is left out of
// the new log and byte counts, as it is of the request counts (taken on
// arrival): the log and the counts describe the same requests.
func (s *Server) ResetStats() {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	s.counters = newCounters()
	s.epoch++
}
