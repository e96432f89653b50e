package upload

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gcsput/gcsput/retry"
)

// meter is the HTTP transport layer that counts, per transfer, the payload
// bytes that really crossed the network: the bodies of upload chunks (any
// request with a Content-Range) and of media downloads (alt=media, XML
// reads). Events cannot give this figure, since a chunk cut by a reset is
// never acknowledged, yet its bytes were sent; Result.Transferred and the
// "no persisted byte sent twice" guarantee are measured here.
type meter struct{ base http.RoundTripper }

// counter holds one transfer's byte counts; it travels in the request
// context. progress, if set, is told the object offset an upload chunk has
// reached as its bytes go out (every 256 KiB), so progress moves smoothly
// within a chunk instead of jumping when it is acknowledged.
type counter struct {
	sent, received atomic.Int64
	progress       func(offset int64)
}

type counterKey struct{}

func withCounter(ctx context.Context, c *counter) context.Context {
	return context.WithValue(ctx, counterKey{}, c)
}

func (m *meter) RoundTrip(req *http.Request) (*http.Response, error) {
	if tok, ok := retry.IdempotencyToken(req.Context()); ok && req.Header.Get(retry.IdempotencyHeader) != tok {
		// The storage client makes a token per call; one operation retried by our runner
		// is several calls, and must carry one token.
		r2 := *req
		r2.Header = req.Header.Clone()
		r2.Header.Set(retry.IdempotencyHeader, tok)
		req = &r2
	}
	ctr, _ := req.Context().Value(counterKey{}).(*counter)
	if cr := req.Header.Get("Content-Range"); ctr != nil && req.Body != nil && req.Body != http.NoBody && cr != "" {
		r2 := *req // a RoundTripper must not change the caller's request
		r2.Body = &countingBody{ReadCloser: req.Body, n: &ctr.sent, start: chunkStart(cr), progress: ctr.progress}
		req = &r2
	}
	resp, err := m.base.RoundTrip(req)
	if ctr != nil && resp != nil && isMedia(req) {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &ctr.received}
	}
	return resp, err
}

// isMedia reports whether req downloads an object's bytes.
func isMedia(req *http.Request) bool {
	return req.Method == http.MethodGet && (req.URL.Query().Get("alt") == "media" ||
		strings.HasPrefix(req.URL.Path, "/download/"))
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
	// For progress: the chunk's first object offset, bytes read so far and
	// at the last report.
	start, read, reported int64
	progress              func(int64)
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	b.read += int64(n)
	if b.progress != nil && (b.read-b.reported >= 256<<10 || err != nil) {
		b.reported = b.read
		b.progress(b.start + b.read)
	}
	return n, err
}

// chunkStart returns the first offset of "bytes a-b/total" (0 otherwise).
func chunkStart(cr string) int64 {
	rest, ok := strings.CutPrefix(cr, "bytes ")
	first, _, ok2 := strings.Cut(rest, "-")
	n, err := strconv.ParseInt(first, 10, 64)
	if !ok || !ok2 || err != nil {
		return 0
	}
	return n
}

// metered returns a client like hc whose transport is metered. hc itself is
// not changed.
func metered(hc *http.Client) *http.Client {
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: &meter{base: base}, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar, Timeout: hc.Timeout}
}
