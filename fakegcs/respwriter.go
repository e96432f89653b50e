package fakegcs

import (
	"errors"
	"io"
	"net/http"
)

var (
	errFaultCut  = errors.New("fakegcs: request body cut by an injected fault")
	errConnReset = errors.New("fakegcs: connection reset by an injected fault")
)

// respWriter records the status and body size of a response and applies the
// faults that act on it: drop-response (reset instead of answering) and, on
// a download body, truncate, corrupt, stall-after and throttle.
type respWriter struct {
	http.ResponseWriter
	x       *exchange
	status  int
	written int64
	dead    bool // the connection was reset: nothing more can be sent

	media    bool  // the body is object content, so body faults apply
	bodyLen  int64 // the media body's length
	stalled  bool
	throttle *throttle
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *respWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *respWriter) WriteHeader(code int) {
	if w.dead || w.status != 0 {
		return
	}
	if f := w.x.fault; f != nil && f.Kind == KindDropResponse {
		// The request was fully processed; the client must not learn it.
		w.x.dropConn()
		return
	}
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *respWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.dead {
		return 0, errConnReset
	}
	if w.media && w.x.fault != nil {
		return w.writeFaulty(p)
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

// ReadFrom keeps io.Copy on the fast path (sendfile for files) when no body
// fault applies.
func (w *respWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.dead || (w.media && w.x.fault != nil) {
		return io.Copy(struct{ io.Writer }{w}, r)
	}
	n, err := io.Copy(w.ResponseWriter, r)
	w.written += n
	return n, err
}

// faultPoint is the body offset at which a download fault acts: AfterBytes,
// or the middle of the body when AfterBytes is not inside it.
func (w *respWriter) faultPoint() int64 {
	at := w.x.fault.AfterBytes
	if at <= 0 || at >= w.bodyLen {
		at = w.bodyLen / 2
	}
	return at
}

func (w *respWriter) writeFaulty(p []byte) (int, error) {
	f := w.x.fault
	switch f.Kind {
	case KindTruncate, KindReset, KindStatus:
		return w.writeTruncated(p)
	case KindCorrupt:
		return w.writeCorrupt(p)
	case KindStall:
		return w.writeStalled(p)
	case KindThrottle:
		return w.writeThrottled(p)
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

func (w *respWriter) writeTruncated(p []byte) (int, error) {
	cut := w.faultPoint()
	room := cut - w.written
	if int64(len(p)) < room {
		n, err := w.ResponseWriter.Write(p)
		w.written += int64(n)
		return n, err
	}
	n, _ := w.ResponseWriter.Write(p[:room])
	w.written += int64(n)
	// What was written is flushed (by Hijack over HTTP/1.1), then the reset
	// cuts the connection, or over HTTP/2 the stream.
	w.x.reset()
	return n, errConnReset
}

func (w *respWriter) writeCorrupt(p []byte) (int, error) {
	at := w.faultPoint() - w.written
	if at >= 0 && at < int64(len(p)) {
		q := append([]byte(nil), p...)
		q[at] ^= 0xff
		p = q
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

func (w *respWriter) writeStalled(p []byte) (int, error) {
	f := w.x.fault
	total := 0
	if !w.stalled && f.AfterBytes > 0 {
		room := f.AfterBytes - w.written
		if room < int64(len(p)) {
			if room > 0 {
				n, err := w.ResponseWriter.Write(p[:room])
				w.written += int64(n)
				total += n
				if err != nil {
					return total, err
				}
				p = p[room:]
			}
			_ = http.NewResponseController(w.ResponseWriter).Flush()
			w.stalled = true
			w.x.s.sleep(w.x.r.Context(), f.Delay)
		}
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return total + n, err
}

func (w *respWriter) writeThrottled(p []byte) (int, error) {
	if w.throttle == nil {
		w.throttle = newThrottle(w.x.fault.BytesPerSecond)
	}
	t := w.throttle
	total := 0
	for len(p) > 0 {
		k := min(len(p), t.step())
		n, err := w.ResponseWriter.Write(p[:k])
		w.written += int64(n)
		total += n
		if err != nil {
			return total, err
		}
		_ = http.NewResponseController(w.ResponseWriter).Flush()
		if !t.wait(w.x, int64(n)) {
			return total, errConnReset
		}
		p = p[n:]
	}
	return total, nil
}
