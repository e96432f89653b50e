package retry_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/gcsput/gcsput/retry"
	"google.golang.org/api/googleapi"
)

// clientTimeout mimics http.Client's timeout error: a net.Error that claims to be
// context.DeadlineExceeded without being it.
type clientTimeout struct{}

func (clientTimeout) Error() string        { return "net/http: request canceled (Client.Timeout exceeded)" }
func (clientTimeout) Timeout() bool        { return true }
func (clientTimeout) Temporary() bool      { return true }
func (clientTimeout) Is(target error) bool { return target == context.DeadlineExceeded }

func urlErr(err error) error { return &url.Error{Op: "Put", URL: "http://127.0.0.1/upload", Err: err} }

func opErr(op string, errno syscall.Errno) error {
	return urlErr(&net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError(op, errno)})
}

func TestIsRetryable(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"408", apiErr(408), true},
		{"429", apiErr(429), true},
		{"500", apiErr(500), true},
		{"502", apiErr(502), true},
		{"503", apiErr(503), true},
		{"504", apiErr(504), true},
		{"599", apiErr(599), true},
		{"wrapped 503", fmt.Errorf("chunk 3: %w", apiErr(503)), true},
		{"joined 503", errors.Join(errors.New("upload"), apiErr(503)), true},
		{"400", apiErr(400), false},
		{"401", apiErr(401), false},
		{"403", apiErr(403), false},
		{"404", apiErr(404), false},
		{"410", apiErr(410), false},
		{"412", apiErr(412), false},
		{"permanent 503", retry.Permanent(apiErr(503)), false},
		{"wrapped permanent", fmt.Errorf("x: %w", retry.Permanent(apiErr(500))), false},
		{"caller cancelled", context.Canceled, false},
		{"caller deadline", context.DeadlineExceeded, false},
		{"cancelled request", urlErr(context.Canceled), false},
		{"request past the caller's deadline", urlErr(context.DeadlineExceeded), false},
		{"joined with a cancel", errors.Join(io.ErrUnexpectedEOF, context.Canceled), false},
		{"http.Client timeout", urlErr(clientTimeout{}), true},
		{"connection refused", opErr("dial", syscall.ECONNREFUSED), true},
		{"connection reset", opErr("read", syscall.ECONNRESET), true},
		{"broken pipe", opErr("write", syscall.EPIPE), true},
		{"unexpected EOF", fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), true},
		{"EOF before the response", urlErr(io.EOF), true},
		{"plain EOF", io.EOF, false},
		{"closed connection", urlErr(net.ErrClosed), true},
		{"DNS timeout", urlErr(&net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}), true},
		{"no such host", urlErr(&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}), false},
		{"HTTP/2 GOAWAY as text", errors.New("http2: server sent GOAWAY and closed the connection"), true},
		{"HTTP/2 stream reset by the server", urlErr(errors.New("stream error: stream ID 7; INTERNAL_ERROR; received from peer")), true},
		{"HTTP/2 stream error of another code", urlErr(errors.New("stream error: stream ID 7; PROTOCOL_ERROR")), false},
		{"reset, flattened to text", errors.New("upload: read tcp 1.2.3.4: connection reset by peer"), true},
		{"server closed idle connection", urlErr(errors.New("http: server closed idle connection")), true},
		{"out of descriptors to dial", opErr("dial", syscall.EMFILE), true},
		{"system out of descriptors", opErr("socket", syscall.ENFILE), true},
		{"bad certificate", urlErr(x509.UnknownAuthorityError{}), false},
		{"anything else", errors.New("checksum mismatch"), false},
	}
	for _, c := range cases {
		if got := retry.IsRetryable(c.err); got != c.want {
			t.Errorf("%s: IsRetryable(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

func TestIsThrottle(t *testing.T) {
	for code, want := range map[int]bool{429: true, 503: true, 500: false, 502: false, 408: false, 404: false} {
		if got := retry.IsThrottle(fmt.Errorf("w: %w", apiErr(code))); got != want {
			t.Errorf("IsThrottle(%d) = %v", code, got)
		}
	}
	if retry.IsThrottle(errors.New("429")) {
		t.Error("a bare text is not a throttle")
	}
}

// TestRealTransportFailures classifies what net/http really returns on loopback: a refused
// connection and a server that hangs up without answering.
func TestRealTransportFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	_, err = client.Get("http://" + addr + "/")
	if err == nil || !retry.IsRetryable(err) {
		t.Errorf("refused: IsRetryable(%v) = false", err)
	}

	hangup := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer hangup.Close()
	_, err = client.Get(hangup.URL)
	if err == nil || !retry.IsRetryable(err) {
		t.Errorf("hang-up: IsRetryable(%v) = false", err)
	}

	// An HTTP/2 server that resets one request's stream (RST_STREAM INTERNAL_ERROR), as GCS's
	// front ends do.
	h2 := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	h2.EnableHTTP2 = true
	h2.StartTLS()
	defer h2.Close()
	_, err = h2.Client().Get(h2.URL)
	if err == nil || !retry.IsRetryable(err) {
		t.Errorf("HTTP/2 stream reset: IsRetryable(%v) = false", err)
	}

	// A real 503 through googleapi.CheckResponse is retryable and carries its Retry-After.
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(503)
		io.WriteString(w, `{"error":{"code":503,"message":"slow down"}}`)
	}))
	defer busy.Close()
	resp, err := client.Get(busy.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	err = googleapi.CheckResponse(resp)
	var ge *googleapi.Error
	if !retry.IsRetryable(err) || !retry.IsThrottle(err) || !errors.As(err, &ge) || ge.Header.Get("Retry-After") != "3" {
		t.Errorf("503: %v", err)
	}
}
