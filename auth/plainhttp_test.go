package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/auth/authtest"
)

// plainServer records the Authorization header of each request over http.
func plainServer(t *testing.T) (url string, seen func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }
}

// An endpoint on plain http gets no credentials, even explicit ones; the
// caller is told they are not used, and why. No token is even fetched.
func TestPlainHTTPEndpointGetsNoCredentials(t *testing.T) {
	isolate(t)
	ts := authtest.NewTokenServer(t, 3600)
	key := writeFile(t, t.TempDir(), "sa.json", ts.ServiceAccountJSON(t))
	url, seen := plainServer(t)
	c, err := auth.New(context.Background(), auth.Options{Endpoint: url, CredentialsFile: key})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.HTTPClient.Get(url + "/storage/v1/b/bkt"); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
	}
	if got := seen(); len(got) != 1 || got[0] != "" || len(ts.Issued()) != 0 || c.TokenSource != nil {
		t.Errorf("Authorization %q, %d tokens issued; want none", got, len(ts.Issued()))
	}
	want := "the credentials file " + key + " is not used: the endpoint " + url + " is plain http"
	if c.Source != "none (plain-http endpoint)" || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], want) {
		t.Errorf("source %q, warnings %q; want %q", c.Source, c.Warnings, want)
	}
}

// With an https endpoint, the token still goes only to https requests: a
// URL on http (a session URI planted in a state file, say) gets none.
func TestTokenOnlyOverHTTPS(t *testing.T) {
	isolate(t)
	ts := authtest.NewTokenServer(t, 3600)
	c, err := auth.New(context.Background(), auth.Options{CredentialsJSON: ts.ServiceAccountJSON(t), Base: trustTLS()})
	if err != nil {
		t.Fatal(err)
	}
	url, seen := plainServer(t)
	res, err := c.HTTPClient.Post(url+"/upload?upload_id=planted", "application/octet-stream", strings.NewReader("file bytes"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := seen(); len(got) != 1 || got[0] != "" {
		t.Errorf("plain http request got Authorization %q", got)
	}
	if got := newBearerServer(t).get(t, c.HTTPClient); got != "Bearer authtest-token-1" {
		t.Errorf("https request got Authorization %q", got)
	}
}
