package auth_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/auth/authtest"
)

// revoker is a TLS server that accepts any bearer token but those the test
// revoked, and records each request's token and body.
type revoker struct {
	URL     string
	mu      sync.Mutex
	revoked map[string]bool
	tokens  []string // the token of each request, in order
	bodies  []string
}

func newRevoker(t *testing.T) *revoker {
	v := &revoker{revoked: map[string]bool{}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		v.mu.Lock()
		v.tokens = append(v.tokens, tok)
		v.bodies = append(v.bodies, string(body))
		refused := tok == "" || v.revoked[tok]
		v.mu.Unlock()
		if refused {
			http.Error(w, `{"error":{"code":401,"message":"Invalid Credentials"}}`, http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	v.URL = srv.URL
	return v
}

func (v *revoker) revoke(tok string) {
	v.mu.Lock()
	v.revoked[tok] = true
	v.mu.Unlock()
}

func (v *revoker) seen() (tokens, bodies []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.tokens...), append([]string(nil), v.bodies...)
}

// countingTokens hands out tok-1, tok-2, … one per fetch, each valid for
// an hour in the client's eyes.
type countingTokens struct {
	mu sync.Mutex
	n  int
}

func (c *countingTokens) Token() (*oauth2.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return &oauth2.Token{AccessToken: "tok-" + string(rune('0'+c.n)), Expiry: time.Now().Add(time.Hour)}, nil
}

func (c *countingTokens) fetches() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func do(t *testing.T, c *http.Client, method, url string, body io.Reader) int {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func newRefreshingClient(t *testing.T, opts auth.Options) *http.Client {
	t.Helper()
	isolate(t)
	opts.Base = trustTLS()
	c, err := auth.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c.HTTPClient
}

// A token the server refuses is dropped and the request sent again with a
// fresh one, body and all, at most MaxRefreshes times; a body that cannot
// be sent again is not, but the next request carries a fresh token. (The
// token was reused until its expiry: every request failed for an hour.)
func TestRefusedTokenReplaced(t *testing.T) {
	v := newRevoker(t)
	src := &countingTokens{}
	// The caller's source caches: the refresh must get past its cache.
	hc := newRefreshingClient(t, auth.Options{Endpoint: v.URL, TokenSource: oauth2.ReuseTokenSource(nil, src)})

	if code := do(t, hc, "GET", v.URL, nil); code != 200 {
		t.Fatalf("first GET: %d", code)
	}
	v.revoke("tok-1")
	if code := do(t, hc, "POST", v.URL, strings.NewReader("replayed body")); code != 200 {
		t.Fatalf("POST after revocation: %d; want 200 with a fresh token", code)
	}
	v.revoke("tok-2")
	pr, pw := io.Pipe()
	go func() { pw.Write([]byte("streamed")); pw.Close() }()
	if code := do(t, hc, "PUT", v.URL, pr); code != 401 {
		t.Fatalf("streamed PUT after revocation: %d; want its 401 (the body cannot be sent again)", code)
	}
	if code := do(t, hc, "GET", v.URL, nil); code != 200 {
		t.Fatalf("GET after the refused PUT: %d; want 200 with a fresh token", code)
	}
	tokens, bodies := v.seen()
	wantTok := []string{"tok-1", "tok-1", "tok-2", "tok-2", "tok-3"}
	wantBody := []string{"", "replayed body", "replayed body", "streamed", ""}
	if strings.Join(tokens, ",") != strings.Join(wantTok, ",") || strings.Join(bodies, ",") != strings.Join(wantBody, ",") {
		t.Errorf("server saw tokens %q, bodies %q; want %q, %q", tokens, bodies, wantTok, wantBody)
	}
	if n := src.fetches(); n != 3 {
		t.Errorf("%d tokens fetched; want 3", n)
	}
}

// A token that never becomes valid: the request is sent 1+MaxRefreshes
// times, each with a new token, and the last 401 is the answer.
func TestRefusedTokenBounded(t *testing.T) {
	v := newRevoker(t)
	src := &countingTokens{}
	hc := newRefreshingClient(t, auth.Options{Endpoint: v.URL, TokenSource: src})
	for i := 1; i <= 9; i++ {
		v.revoke("tok-" + string(rune('0'+i)))
	}
	if code := do(t, hc, "GET", v.URL, nil); code != 401 {
		t.Fatalf("GET: %d; want 401", code)
	}
	tokens, _ := v.seen()
	if want := "tok-1,tok-2,tok-3"; strings.Join(tokens, ",") != want || auth.MaxRefreshes != 2 {
		t.Errorf("server saw %q; want %s (MaxRefreshes %d)", tokens, want, auth.MaxRefreshes)
	}
}

// Key files: a service account's refused token is replaced by a new JWT
// grant, an authorized user's by a new refresh grant, although their
// sources cache tokens until expiry.
func TestRefusedKeyFileTokenReplaced(t *testing.T) {
	for _, kind := range []string{"service_account", "authorized_user"} {
		t.Run(kind, func(t *testing.T) {
			ts := authtest.NewTokenServer(t, 3600)
			key := ts.ServiceAccountJSON(t)
			if kind == "authorized_user" {
				key = ts.AuthorizedUserJSON(t)
			}
			v := newRevoker(t)
			hc := newRefreshingClient(t, auth.Options{Endpoint: v.URL, CredentialsJSON: key})
			if code := do(t, hc, "GET", v.URL, nil); code != 200 {
				t.Fatalf("first GET: %d", code)
			}
			v.revoke(ts.Issued()[0])
			if code := do(t, hc, "GET", v.URL, nil); code != 200 {
				t.Fatalf("GET after revocation: %d; want 200 with a new grant", code)
			}
			if got := ts.Issued(); len(got) != 2 {
				t.Errorf("tokens issued %q; want 2", got)
			}
		})
	}
}
