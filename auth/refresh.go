package auth

import (
	"io"
	"net/http"
	"sync"

	"golang.org/x/oauth2"
)

// MaxRefreshes is how many times a request the server refused with 401 is
// sent again with a fresh token, as google-auth's AuthorizedSession does
// (refresh_status_codes=(401,), max_refresh_attempts=2): a token can be
// revoked or expire early (clock skew, a rotated key) while a transfer runs.
// A 401 that survives two fresh tokens is the answer.
const MaxRefreshes = 2

// tokenCache hands out one token until it nears expiry, as
// oauth2.ReuseTokenSource does, and also drops a token the server refused,
// so that the next request fetches a new one. ReuseTokenSource cannot be
// told that its token is bad: it would send a revoked token until expiry.
type tokenCache struct {
	src oauth2.TokenSource

	mu  sync.Mutex
	tok *oauth2.Token
}

func newTokenCache(src oauth2.TokenSource) *tokenCache { return &tokenCache{src: src} }

// Token returns the cached token while it is valid, else a fresh one.
func (c *tokenCache) Token() (*oauth2.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok.Valid() {
		return c.tok, nil
	}
	tok, err := fresh(c.src)
	if err != nil {
		return nil, err
	}
	c.tok = tok
	return tok, nil
}

// refused drops access if it is still the cached token. Workers that met
// the same 401 at once cause one fetch, not one each: the first drops the
// token, the others find a newer one already cached.
func (c *tokenCache) refused(access string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok != nil && c.tok.AccessToken == access {
		c.tok = nil
	}
}

// fresh asks src for a new token, past any cache of its own: the sources
// of golang.org/x/oauth2 and of this package's key files are
// ReuseTokenSources, and ReuseTokenSource given an invalid token and such a
// source builds one that calls the source's own fetcher (a JWT grant, a
// refresh-token grant, the metadata server). Any other source is asked
// as it is.
func fresh(src oauth2.TokenSource) (*oauth2.Token, error) {
	return oauth2.ReuseTokenSource(&oauth2.Token{}, src).Token()
}

// bearer adds a token to each request and, when the server answers 401,
// drops that token and sends the request again with a fresh one, at most
// max times. Only a request whose body can be sent again (none, or
// GetBody) is repeated; for another (a resumable upload's chunk, read from
// the source as it goes) the 401 is returned with the token already
// dropped, and the caller repeats the step its own way: package resumable
// asks the session's offset, with a fresh token, and sends from there.
type bearer struct {
	tokens *tokenCache
	base   http.RoundTripper
	max    int
}

func (t *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	for refreshes := 0; ; refreshes++ {
		r, tok, err := t.authorize(req, refreshes > 0)
		if err != nil {
			return nil, err
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			return resp, err
		}
		t.tokens.refused(tok.AccessToken)
		if refreshes == t.max || !replayable(req) {
			return resp, nil
		}
		// The refusal's body is short; read it so the connection is reused.
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		resp.Body.Close()
	}
}

// authorize returns a copy of req with a token; again means the body is
// taken anew from GetBody. As a RoundTripper must, it closes req's body
// when it fails.
func (t *bearer) authorize(req *http.Request, again bool) (*http.Request, *oauth2.Token, error) {
	tok, err := transientTokens{t.tokens}.Token()
	if err != nil {
		if req.Body != nil && !again {
			req.Body.Close()
		}
		return nil, nil, err
	}
	r := req.Clone(req.Context())
	if again && req.GetBody != nil {
		if r.Body, err = req.GetBody(); err != nil {
			return nil, nil, err
		}
	}
	tok.SetAuthHeader(r)
	return r, tok, nil
}

// replayable reports whether req can be sent again: no body, or a way to
// get it again.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}
