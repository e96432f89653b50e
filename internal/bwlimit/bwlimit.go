// Package bwlimit holds a run's transfers to one bandwidth limit, shared by
// every worker and both directions, with golang.org/x/time/rate's token
// bucket. It wraps request and response bodies at the HTTP transport, so
// that every byte gcsput sends or receives (chunks, re-sent bytes, downloads,
// metadata) draws from the same budget, and it parses no protocol.
package bwlimit

import (
	"context"
	"io"
	"net/http"

	"golang.org/x/time/rate"
)

// Limit is a shared limit in bytes per second. A nil *Limit is no limit.
type Limit struct {
	l *rate.Limiter
	// wait takes n tokens, blocking until they are there; l.WaitN unless a
	// test counts the tokens instead.
	wait func(ctx context.Context, n int) error
}

// New returns a limit of bytesPerSecond, or nil (no limit) when it is 0 or
// less. The bucket holds a tenth of a second's bytes (at least 16 KiB), so a
// burst after an idle spell stays short.
func New(bytesPerSecond int64) *Limit {
	if bytesPerSecond <= 0 {
		return nil
	}
	burst := max(bytesPerSecond/10, 16<<10)
	rl := rate.NewLimiter(rate.Limit(bytesPerSecond), int(min(burst, 1<<30)))
	return &Limit{l: rl, wait: rl.WaitN}
}

// Transport returns base with every request and response body held to l.
// A nil l returns base itself.
func (l *Limit) Transport(base http.RoundTripper) http.RoundTripper {
	if l == nil {
		return base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, l: l}
}

type transport struct {
	base http.RoundTripper
	l    *Limit
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if req.Body != nil && req.Body != http.NoBody {
		r2 := req.Clone(ctx) // a RoundTripper must not change the caller's request
		r2.Body = &body{ReadCloser: req.Body, ctx: ctx, l: t.l}
		req = r2
	}
	resp, err := t.base.RoundTrip(req)
	if resp != nil && resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = &body{ReadCloser: resp.Body, ctx: ctx, l: t.l}
	}
	return resp, err
}

// body reads at most one burst at a time and waits for its tokens after the
// read, so that a slow source does not hold tokens it has not used.
type body struct {
	io.ReadCloser
	ctx context.Context
	l   *Limit
}

func (b *body) Read(p []byte) (int, error) {
	if burst := b.l.l.Burst(); len(p) > burst {
		p = p[:burst]
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		if werr := b.l.wait(b.ctx, n); werr != nil && err == nil {
			err = werr
		}
	}
	return n, err
}
