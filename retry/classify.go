package retry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	"google.golang.org/api/googleapi"
)

// Permanent wraps err so that no runner retries it; errors.Is and errors.As still see err.
// Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// ErrNoProgress marks an answer that succeeded on the wire but moved nothing forward: a 308
// whose Range acknowledges no new byte. Such an answer costs an attempt and waits by the
// policy, exactly like a failure, whatever [Runner.Retryable] says: a server that never makes
// progress must end in the retry budget, not in a loop at full speed.
var ErrNoProgress = errors.New("the server made no progress")

// IsPermanent reports whether err, or an error it wraps, was marked with [Permanent].
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// IsRetryable is the default classifier of [Runner.Retryable]. It says yes to the errors Google
// asks clients to retry and to transport failures:
//
//   - a *googleapi.Error with Code 408, 429 or 500–599;
//   - connection refused, reset or aborted, a broken pipe, an unreachable network or host,
//     an unexpected EOF (also an EOF inside a *url.Error: the server closed the connection
//     before answering), a closed network connection, an HTTP/2 connection lost or GOAWAY,
//     an HTTP/2 stream reset with INTERNAL_ERROR (RST_STREAM: how GCS's front ends fail one
//     request on a connection that others share; the official Go client's ShouldRetry misses
//     it, google-cloud-go issues 784 and 7440);
//   - a connection that could not be opened for want of file descriptors (EMFILE, ENFILE):
//     other transfers release theirs, so waiting is the cure;
//   - any net.Error whose Timeout is true, such as http.Client's own Timeout, and DNS errors
//     marked temporary.
//
// It says no to nil, to an error marked [Permanent], to every other HTTP status (other 4xx
// are the request's fault), to anything else it does not recognise, and to context.Canceled
// and context.DeadlineExceeded themselves: those are the caller's decision, not the network's.
// (http.Client's Timeout error matches errors.Is(err, context.DeadlineExceeded) but is not the
// context's value, so it is still retried.) Replace it in [Runner.Retryable] for a caller's
// own rule, such as Drive's 403 rateLimitExceeded.
func IsRetryable(err error) bool {
	if err == nil || IsPermanent(err) || isContextErr(err) {
		return false
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return retryableStatus(ge.Code)
	}
	return isTransport(err)
}

// IsThrottle reports whether err is the server asking everyone to slow down: a
// *googleapi.Error with Code 429 (Too Many Requests) or 503 (Service Unavailable).
func IsThrottle(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && (ge.Code == 429 || ge.Code == 503)
}

func retryableStatus(code int) bool {
	return code == 408 || code == 429 || code >= 500 && code <= 599
}

// isContextErr reports whether err's chain holds the context package's own Canceled or
// DeadlineExceeded value. It compares identity, not errors.Is, because http.Client's
// timeout error claims to be DeadlineExceeded while being a transport timeout.
func isContextErr(err error) bool {
	for err != nil {
		if err == context.Canceled || err == context.DeadlineExceeded {
			return true
		}
		switch e := err.(type) {
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				if isContextErr(inner) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

// transportErrnos are the socket errors after which the same request can succeed.
var transportErrnos = []error{
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
	syscall.ETIMEDOUT, syscall.ENETUNREACH, syscall.EHOSTUNREACH, syscall.ENETDOWN,
	// Out of file descriptors for a new connection: others are released as
	// transfers end, so waiting is the cure (back-pressure, not a failure).
	syscall.EMFILE, syscall.ENFILE,
}

// transportTexts catch the same failures once an error's type is lost: HTTP/2 reports some
// only as text, and wrappers that format with %v drop the chain.
var transportTexts = []string{
	"connection refused", "connection reset", "broken pipe", "use of closed network connection",
	"unexpected eof", "http2: client connection lost", "http2: server sent goaway",
	"tls: handshake timeout", "i/o timeout",
	// net/http's error when the server closed a kept-alive connection as the request went
	// out on it; the official Go client retries it too.
	"http: server closed idle connection",
}

func isTransport(err error) bool {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	for _, errno := range transportErrnos {
		if errors.Is(err, errno) {
			return true
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) && errors.Is(ue.Err, io.EOF) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTimeout || dns.IsTemporary
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	msg := strings.ToLower(err.Error())
	// net/http's HTTP/2 stream error has an unexported type:
	// "stream error: stream ID 7; INTERNAL_ERROR; received from peer".
	if strings.Contains(msg, "stream error: ") && strings.Contains(msg, "; internal_error") {
		return true
	}
	for _, s := range transportTexts {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
