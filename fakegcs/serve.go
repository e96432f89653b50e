package fakegcs

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// exchange is one request being served: the request, its classification, the
// fault that fired for it (nil if none) and a response writer that applies
// that fault.
type exchange struct {
	s     *Server
	r     *http.Request
	w     *respWriter
	ri    *reqInfo
	fault *Fault
	body  *faultBody
	gone  bool // the client vanished before the request was read
	// rewritten is the bytes an objects.rewrite call copied.
	rewritten int64
	// abort ends the handler with http.ErrAbortHandler once the request is
	// recorded: on HTTP/2 that resets the request's stream (RST_STREAM).
	abort bool
	// fields is the request's checked fields parameter (nil: none): the
	// members its answer keeps.
	fields selection
	// epoch is the Server's ResetStats count when the request arrived: a
	// request that arrived before a reset is left out of the new log.
	epoch uint64
}

// ServeHTTP serves the GCS JSON API, XML reads, the storage-testbench
// retry-test API and fakegcs's own control API:
//
//	GET    /_fakegcs/faults       the injected faults and how often each fired
//	POST   /_fakegcs/faults       inject a Fault (JSON object) or several (array);
//	                              durations as strings ("2s") or seconds
//	DELETE /_fakegcs/faults       remove every fault
//	DELETE /_fakegcs/faults/{id}  remove one fault
//	GET    /_fakegcs/stats        Stats as JSON
//	GET    /_fakegcs/limits       the request-rate Limits in force
//	PUT    /_fakegcs/limits       replace them (a Limits as JSON; {} for none)
//	GET    /_fakegcs/log          the request log
//	GET    /_fakegcs/healthz      "ok"
//
// It lets a Server be mounted in another mux or httptest.Server: over
// HTTP/2 there, a dropped response resets its stream only (the connection is
// out of reach), and Stats count no connections.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.handlers.Add(1)
	}
	s.mu.Unlock()
	if closed {
		http.Error(w, "fakegcs: closed", http.StatusServiceUnavailable)
		return
	}
	defer s.handlers.Done()

	ri := s.classify(r)
	x := &exchange{s: s, r: r, ri: ri}
	x.w = &respWriter{ResponseWriter: w, x: x}
	if ri.control {
		ri.handle(x)
		return
	}
	x.epoch = s.arrive(ri.op, r)
	if !s.authorized(r, ri) {
		x.body = newFaultBody(x) // no fault: counts the bytes for the log
		r.Body = x.body
		x.drain()
		x.w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
		x.fail(errUnauthenticated)
		s.record(x, 0)
		return
	}
	apiErr := s.bill(r, ri)
	if apiErr == nil {
		apiErr = s.limit(ri) // GCS's request-rate limits (Limits), before any fault
	}
	if apiErr != nil {
		x.body = newFaultBody(x)
		r.Body = x.body
		x.drain()
		x.fail(apiErr)
		s.record(x, 0)
		return
	}
	if apiErr := x.checkFields(); apiErr != nil {
		x.body = newFaultBody(x)
		r.Body = x.body
		x.drain()
		x.fail(apiErr)
		s.record(x, 0)
		return
	}
	x.fault = s.retryTestFault(r, ri)
	if x.fault == nil {
		x.fault = s.pickFault(ri)
	}
	if x.fault != nil {
		s.logf("fakegcs: injecting %v into %s %s", x.fault, ri.op, ri.phase)
	}
	x.body = newFaultBody(x)
	r.Body = x.body
	start := time.Now()
	if x.preFault() {
		ri.handle(x)
	}
	s.record(x, time.Since(start))
	if x.abort {
		panic(http.ErrAbortHandler)
	}
}

// authorized reports whether r may be served under Options.Token (or
// SetToken's). A request to an open session needs no credentials, but one
// that carries a bearer token is refused unless the token is valid, as GCS
// refuses any credential it cannot validate: a client that sends a revoked
// token with its chunks is answered 401 there too.
func (s *Server) authorized(r *http.Request, ri *reqInfo) bool {
	tok := *s.token.Load()
	h := r.Header.Get("Authorization")
	if tok == "" || (r.URL.Query().Get("upload_id") != "" && h == "") {
		return true
	}
	got, ok := strings.CutPrefix(h, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(tok)) == 1
}

// preFault applies the faults that act before a request is processed and
// reports whether the request should be served.
func (x *exchange) preFault() bool {
	f := x.fault
	if f == nil {
		return true
	}
	switch f.Kind {
	case KindReset:
		if f.AfterBytes <= 0 {
			x.reset()
			return false
		}
	case KindStatus:
		if f.AfterBytes <= 0 {
			x.drain()
			x.failStatus(f.Status, f.RetryAfter)
			return false
		}
	case KindStall:
		// A request whose client went away during the stall is not served: carried on,
		// a stalled status query would change its session after the client's next
		// request had begun, superseding it.
		if f.AfterBytes <= 0 && !x.s.sleep(x.r.Context(), f.Delay) {
			x.gone = x.r.Context().Err() != nil
			return false
		}
	case KindThrottle:
		x.prepareThrottledBody()
	case KindHugeBody:
		x.drain()
		x.serveHugeBody(f.AfterBytes)
		return false
	case KindExpire:
		if x.ri.session != nil {
			x.ri.session.expire()
		}
		x.drain()
		x.fail(errSessionExpired)
		return false
	}
	return true
}

// drain reads what is left of the request body (bounded), so that a client
// that writes its whole body before reading the answer sees the answer
// rather than a broken pipe.
func (x *exchange) drain() {
	_, _ = io.CopyN(io.Discard, x.r.Body, 256<<20)
}

func (x *exchange) fail(e *apiError) {
	if x.ri.xml {
		writeXMLError(x.w, e)
		return
	}
	writeAPIError(x.w, e)
}

func (x *exchange) failStatus(code int, retryAfter time.Duration) {
	if retryAfter > 0 {
		secs := int64((retryAfter + time.Second - 1) / time.Second)
		x.w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	x.fail(statusError(code))
}

// reset fails the request as a broken network path would, with no answer
// (or the rest of one) ever arriving. Over HTTP/1.1 it resets the TCP
// connection, which carries this request alone; over HTTP/2 it resets the
// request's stream (RST_STREAM), and the connection's other streams carry
// on, as when a GCS front end fails one request.
func (x *exchange) reset() {
	if x.r.ProtoMajor == 2 {
		x.resetStream()
		return
	}
	x.resetConn()
}

// dropConn resets the request's TCP connection: over HTTP/2 every stream on
// it fails, not just this request's, as when the path to GCS breaks.
func (x *exchange) dropConn() {
	ci := connOf(x.r)
	if x.r.ProtoMajor != 2 || ci == nil {
		x.resetConn()
		return
	}
	x.w.dead, x.abort = true, true
	raw := rawConn(ci.conn)
	setLinger0(raw)
	raw.Close()
}

// resetStream ends an HTTP/2 request with RST_STREAM once the handler
// returns (see exchange.abort). What was written of the response is
// flushed first, so that the client reads it before the reset.
func (x *exchange) resetStream() {
	if x.w.status != 0 && !x.w.dead {
		_ = http.NewResponseController(x.w.ResponseWriter).Flush()
	}
	x.w.dead, x.abort = true, true
}

// resetConn closes an HTTP/1 connection with an RST: SO_LINGER 0 makes
// close discard unsent data and send a reset, which clients see as
// "connection reset by peer" rather than a clean EOF.
func (x *exchange) resetConn() {
	conn, _, err := http.NewResponseController(x.w.ResponseWriter).Hijack()
	if err != nil {
		// Not hijackable (HTTP/2 in another http.Server): reset the stream.
		x.resetStream()
		return
	}
	x.w.dead = true
	// The socket closes first: a TLS connection's own Close would send a
	// close_notify alert, which the client reads as a clean EOF before the
	// RST arrives.
	raw := rawConn(conn)
	setLinger0(raw)
	raw.Close()
	conn.Close()
}

// setLinger0 makes c's close a reset.
func setLinger0(c net.Conn) {
	switch c := c.(type) {
	case interface{ SetLinger(int) error }: // TCP, and rttConn, which resets after what is in flight
		_ = c.SetLinger(0)
	case pipeEnd: // the in-memory client's: its peer then reads a reset, not EOF
		c.rst.Store(true)
	}
}

// bodyError answers a failed body read: a fault cut acts as scripted;
// otherwise the client went away or sent less than it announced.
func (x *exchange) bodyError(err error) {
	if errors.Is(err, errFaultCut) {
		x.cutAction()
		return
	}
	if clientGone(x.r, err) {
		// Nobody is left to read an answer: the log says so rather than blaming the
		// request with a 400 that was never delivered.
		x.gone = true
		return
	}
	x.fail(errf(400, "invalid", "fakegcs: reading the request body: %v", err))
}

// clientGone reports whether a body read failed because the client went away
// (its connection closed or reset mid-body), rather than because the body was
// malformed.
func clientGone(r *http.Request, err error) bool {
	return r.Context().Err() != nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// cutAction is what a mid-body fault does once its AfterBytes were read.
func (x *exchange) cutAction() {
	f := x.fault
	switch f.Kind {
	case KindStatus:
		x.failStatus(f.Status, f.RetryAfter)
	default:
		x.reset()
	}
}

// baseURL is the scheme and host the client used, for links and session URIs.
func (x *exchange) baseURL() string {
	scheme := "http"
	if x.r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + x.r.Host
}

// prepareThrottledBody makes a throttled upload stop promptly when its
// client dies: a small receive buffer keeps the kernel from queueing
// megabytes the client already "sent", and an interim 100 Continue, which
// a client blocked writing its body has not read, makes the client's
// kernel answer its death with a RST instead of a FIN after the queued
// bytes. (Clients skip unsolicited 1xx responses.)
//
// Over HTTP/2 neither applies: the socket is shared by other streams, and a
// client that dies takes the whole connection, and the request's context,
// with it.
func (x *exchange) prepareThrottledBody() {
	if x.r.ContentLength == 0 || x.r.Method == http.MethodGet || x.r.Method == http.MethodHead || x.r.ProtoMajor != 1 {
		return
	}
	if ci := connOf(x.r); ci != nil {
		if rb, ok := rawConn(ci.conn).(interface{ SetReadBuffer(int) error }); ok {
			_ = rb.SetReadBuffer(64 << 10)
		}
	}
	x.w.ResponseWriter.WriteHeader(http.StatusContinue)
}

// serveHugeBody answers 200 with a JSON object of n bytes (hugeBodyDefault
// when n <= 0), written as it goes: a client that stops reading ends it.
func (x *exchange) serveHugeBody(n int64) {
	if n <= 0 {
		n = hugeBodyDefault
	}
	const head, tail = `{"kind":"storage#object"`, "}"
	n = max(n, int64(len(head)+len(tail)))
	x.w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	x.w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	x.w.WriteHeader(http.StatusOK)
	if _, err := io.WriteString(x.w, head); err != nil {
		return
	}
	pad := bytes.Repeat([]byte(" "), 64<<10)
	for left := n - int64(len(head)+len(tail)); left > 0; {
		k, err := x.w.Write(pad[:min(left, int64(len(pad)))])
		if err != nil {
			return
		}
		left -= int64(k)
	}
	_, _ = io.WriteString(x.w, tail)
}
