package retry

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
)

// IdempotencyHeader is the request header that tells GCS that requests
// carrying the same value are one operation retried, as Google's clients
// send it: a fresh value per operation, the same on every retry of it.
const IdempotencyHeader = "X-Goog-Gcs-Idempotency-Token"

type tokenKey struct{}

// WithIdempotencyToken returns ctx carrying an idempotency token: ctx itself
// when it already has one (an operation keeps its token through nested
// calls), else a new random one (a UUID v4). [Runner.Do] calls it once per
// operation, so every attempt of the operation carries the same token.
func WithIdempotencyToken(ctx context.Context) context.Context {
	if _, ok := IdempotencyToken(ctx); ok {
		return ctx
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	tok := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	return context.WithValue(ctx, tokenKey{}, tok)
}

// IdempotencyToken returns the token ctx carries, if any.
func IdempotencyToken(ctx context.Context) (string, bool) {
	tok, ok := ctx.Value(tokenKey{}).(string)
	return tok, ok
}

// TokenTransport is an http.RoundTripper that sends the idempotency token of
// each request's context in [IdempotencyHeader], replacing any other. It is
// for clients that make a token per call, such as
// cloud.google.com/go/storage: an operation that a [Runner] retries is
// several of their calls, and must carry one token.
type TokenTransport struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
}

// RoundTrip implements http.RoundTripper. A request whose context has no
// token is sent as it is.
func (t *TokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if tok, ok := IdempotencyToken(req.Context()); ok && req.Header.Get(IdempotencyHeader) != tok {
		r2 := *req // a RoundTripper must not change the caller's request
		r2.Header = req.Header.Clone()
		r2.Header.Set(IdempotencyHeader, tok)
		req = &r2
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(req)
}
