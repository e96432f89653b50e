package auth_test

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/auth/authtest"
	"github.com/gcsput/gcsput/retry"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
)

// isolate makes Application Default Credentials find nothing: no key file
// variable, an empty HOME, no emulator, and a metadata host that refuses at
// once (so nothing ever probes the network).
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(auth.ADCEnv, "")
	t.Setenv(auth.EmulatorHostEnv, "")
	t.Setenv(auth.MetadataHostEnv, "127.0.0.1:1")
	return home
}

// trustTLS is a transport that trusts httptest's TLS servers (all of them
// use the same built-in certificate). Credentials go only to https, so the
// servers that check them are TLS.
var trustTLS = sync.OnceValue(func() http.RoundTripper {
	s := httptest.NewTLSServer(http.NotFoundHandler())
	defer s.Close()
	return s.Client().Transport
})

// bearerServer records the Authorization header of each request (over
// https: see trustTLS).
type bearerServer struct {
	URL  string
	mu   sync.Mutex
	seen []string
}

func newBearerServer(t *testing.T) *bearerServer {
	b := &bearerServer{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.seen = append(b.seen, r.Header.Get("Authorization"))
		b.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	b.URL = srv.URL
	return b
}

func (b *bearerServer) get(t *testing.T, c *http.Client) string {
	t.Helper()
	resp, err := c.Get(b.URL)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seen[len(b.seen)-1]
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNoCredentials(t *testing.T) {
	home := isolate(t)
	start := time.Now()
	_, err := auth.New(context.Background(), auth.Options{})
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("lookup took %v; it must not wait on the network", took)
	}
	if !errors.Is(err, auth.ErrNoCredentials) {
		t.Fatalf("err = %v, want ErrNoCredentials", err)
	}
	var nc *auth.NoCredentialsError
	if !errors.As(err, &nc) || len(nc.Tried) != 5 {
		t.Fatalf("want *NoCredentialsError with 5 places tried, got %#v", err)
	}
	wk := filepath.Join(home, ".config", "gcloud", "application_default_credentials.json")
	for _, want := range []string{
		"no Google Cloud credentials found",
		"GOOGLE_APPLICATION_CREDENTIALS (not set)",
		"gcloud ADC file " + wk + " (not found)",
		"metadata server (not running on Google Cloud)",
		"STORAGE_EMULATOR_HOST (not set)",
		"gcloud auth application-default login",
		"--credentials FILE",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%s", want, err)
		}
	}
}

func TestNoCredentialsOnGCESeam(t *testing.T) {
	isolate(t)
	called := 0
	_, err := auth.New(context.Background(), auth.Options{OnGCE: func(context.Context) bool { called++; return false }})
	if !errors.Is(err, auth.ErrNoCredentials) || called != 1 {
		t.Fatalf("err = %v, OnGCE called %d times; want ErrNoCredentials after 1 call", err, called)
	}
}

func TestEmulatorHost(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"127.0.0.1:9023", "http://127.0.0.1:9023"},
		{"localhost:8080", "http://localhost:8080"},
		{"https://fake.example:4443/", "https://fake.example:4443"},
	} {
		t.Run(tc.env, func(t *testing.T) {
			isolate(t)
			t.Setenv(auth.EmulatorHostEnv, tc.env)
			c, err := auth.New(context.Background(), auth.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Endpoint != tc.want || !c.Emulator || c.TokenSource != nil || c.Source != "none (STORAGE_EMULATOR_HOST)" {
				t.Errorf("got endpoint %q emulator %v ts %v source %q", c.Endpoint, c.Emulator, c.TokenSource, c.Source)
			}
		})
	}
}

func TestEmulatorNeverGetsADCToken(t *testing.T) {
	isolate(t)
	ts := authtest.NewTokenServer(t, 3600)
	t.Setenv(auth.ADCEnv, writeFile(t, t.TempDir(), "sa.json", ts.ServiceAccountJSON(t)))
	srv := newBearerServer(t)
	t.Setenv(auth.EmulatorHostEnv, srv.URL)
	c, err := auth.New(context.Background(), auth.Options{Base: trustTLS()})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.get(t, c.HTTPClient); got != "" || len(ts.Issued()) != 0 {
		t.Errorf("emulator got Authorization %q, %d tokens issued; want none", got, len(ts.Issued()))
	}
}

func TestBadEndpoint(t *testing.T) {
	isolate(t)
	for _, tc := range []struct{ explicit, env, want string }{
		{"ftp://x", "", `auth: bad endpoint "ftp://x": want http(s)://host[:port] or host:port`},
		{"http://h:1/?q=1", "", `auth: bad endpoint "http://h:1/?q=1"`},
		{"", "::", `auth: bad STORAGE_EMULATOR_HOST "http://::"`},
	} {
		t.Setenv(auth.EmulatorHostEnv, tc.env)
		_, err := auth.New(context.Background(), auth.Options{Endpoint: tc.explicit, NoAuth: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("endpoint %q env %q: err = %v, want %q", tc.explicit, tc.env, err, tc.want)
		}
	}
}

func TestExplicitEndpointWinsOverEmulator(t *testing.T) {
	isolate(t)
	t.Setenv(auth.EmulatorHostEnv, "127.0.0.1:1")
	c, err := auth.New(context.Background(), auth.Options{Endpoint: "http://127.0.0.1:2/", NoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "http://127.0.0.1:2" || c.Emulator || c.Source != "none (NoAuth)" {
		t.Errorf("got %q emulator=%v source %q", c.Endpoint, c.Emulator, c.Source)
	}
}

func TestDefaultEndpoint(t *testing.T) {
	isolate(t)
	c, err := auth.New(context.Background(), auth.Options{NoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "https://storage.googleapis.com" {
		t.Errorf("endpoint %q", c.Endpoint)
	}
}

func TestServiceAccountKeyFile(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		isolate(t)
		ts := authtest.NewTokenServer(t, 3600)
		path := writeFile(t, t.TempDir(), "sa.json", ts.ServiceAccountJSON(t))
		c, err := auth.New(context.Background(), auth.Options{CredentialsFile: path, ReadOnly: readOnly, Base: trustTLS()})
		if err != nil {
			t.Fatal(err)
		}
		srv := newBearerServer(t)
		got1, got2 := srv.get(t, c.HTTPClient), srv.get(t, c.HTTPClient)
		want := "Bearer authtest-token-1"
		if got1 != want || got2 != want {
			t.Errorf("Authorization %q, %q; want %q twice (the token is reused)", got1, got2, want)
		}
		scope := auth.ScopeReadWrite
		if readOnly {
			scope = auth.ScopeReadOnly
		}
		if s := ts.Scopes(); len(s) != 1 || s[0] != scope {
			t.Errorf("scopes asked %q, want [%s]", s, scope)
		}
		if c.Source != "key file "+path {
			t.Errorf("source %q", c.Source)
		}
	}
}

func TestAuthorizedUserKeyJSON(t *testing.T) {
	isolate(t)
	ts := authtest.NewTokenServer(t, 3600)
	c, err := auth.New(context.Background(), auth.Options{CredentialsJSON: ts.AuthorizedUserJSON(t), Base: trustTLS()})
	if err != nil {
		t.Fatal(err)
	}
	srv := newBearerServer(t)
	if got := srv.get(t, c.HTTPClient); got != "Bearer authtest-token-1" {
		t.Errorf("Authorization %q", got)
	}
}

func TestTokenErrorHasNoSecrets(t *testing.T) {
	isolate(t)
	ts := authtest.NewTokenServer(t, 3600)
	ts.FailWith(http.StatusBadRequest)
	c, err := auth.New(context.Background(), auth.Options{CredentialsJSON: ts.AuthorizedUserJSON(t), Base: trustTLS()})
	if err != nil {
		t.Fatal(err)
	}
	srv := newBearerServer(t)
	_, err = c.HTTPClient.Get(srv.URL)
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("err = %v, want the token server's invalid_grant", err)
	}
	for _, secret := range []string{authtest.RefreshToken, authtest.ClientSecret} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error contains a secret: %v", err)
		}
	}
}

func TestTokenEndpointOutageIsRetryable(t *testing.T) {
	isolate(t)
	ts := authtest.NewTokenServer(t, 3600)
	c, err := auth.New(context.Background(), auth.Options{CredentialsJSON: ts.ServiceAccountJSON(t), Base: trustTLS()})
	if err != nil {
		t.Fatal(err)
	}
	srv := newBearerServer(t)
	ts.FailWith(http.StatusServiceUnavailable)
	_, err = c.HTTPClient.Get(srv.URL)
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 503 || !retry.IsRetryable(err) {
		t.Fatalf("token endpoint 503: %v; want a retryable *googleapi.Error 503", err)
	}
	ts.FailWith(http.StatusBadRequest)
	if _, err = c.HTTPClient.Get(srv.URL); err == nil || retry.IsRetryable(err) {
		t.Errorf("token endpoint 400: %v; want a permanent error", err)
	}
	ts.FailWith(0)
	if got := srv.get(t, c.HTTPClient); got != "Bearer authtest-token-1" {
		t.Errorf("after the outage: %q", got)
	}
}

func TestBadKeyFiles(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	for _, tc := range []struct{ name, content, want string }{
		{"notjson.json", "PRIVATE KEY SECRET", "not a JSON key file: invalid character"},
		{"notype.json", `{"client_email":"a@b"}`, `missing "type" (want "service_account" or "authorized_user")`},
		{"nokey.json", `{"type":"service_account","client_email":"a@b"}`, "service_account key lacks private_key"},
		{"noemail.json", `{"type":"service_account","private_key":"SECRET"}`, "service_account key lacks client_email"},
		{"user.json", `{"type":"authorized_user","client_secret":"SECRET"}`, "authorized_user key lacks client_id, refresh_token"},
		{"odd.json", `{"type":"wizard"}`, `unknown credential type: "wizard"`},
	} {
		path := writeFile(t, dir, tc.name, []byte(tc.content))
		_, err := auth.New(context.Background(), auth.Options{CredentialsFile: path})
		want := "auth: credentials file " + path + ": " + tc.want
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: error quotes the key: %v", tc.name, err)
		}
		if !errors.Is(err, auth.ErrBadCredentials) || errors.Is(err, auth.ErrNoCredentials) {
			t.Errorf("%s: %v does not match ErrBadCredentials alone", tc.name, err)
		}
		// The same key as JSON, and as the file $GOOGLE_APPLICATION_CREDENTIALS names.
		_, err = auth.New(context.Background(), auth.Options{CredentialsJSON: []byte(tc.content)})
		if want := "auth: credentials JSON: " + tc.want; err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, auth.ErrBadCredentials) {
			t.Errorf("%s as JSON: err = %v, want %q matching ErrBadCredentials", tc.name, err, want)
		}
		t.Setenv(auth.ADCEnv, path)
		_, err = auth.New(context.Background(), auth.Options{})
		if want := "auth: application default credentials (GOOGLE_APPLICATION_CREDENTIALS file " + path + "): "; err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, auth.ErrBadCredentials) {
			t.Errorf("%s as %s: err = %v, want %q matching ErrBadCredentials", tc.name, auth.ADCEnv, err, want)
		}
		os.Unsetenv(auth.ADCEnv)
	}
	_, err := auth.New(context.Background(), auth.Options{CredentialsFile: filepath.Join(dir, "missing.json")})
	if err == nil || !strings.Contains(err.Error(), "auth: reading credentials file: open "+filepath.Join(dir, "missing.json")+": no such file or directory") {
		t.Errorf("missing file: err = %v", err)
	}
	if !errors.Is(err, auth.ErrBadCredentials) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v does not match ErrBadCredentials and fs.ErrNotExist", err)
	}
}

func TestApplicationDefaultFiles(t *testing.T) {
	t.Run("env", func(t *testing.T) {
		isolate(t)
		ts := authtest.NewTokenServer(t, 3600)
		path := writeFile(t, t.TempDir(), "adc.json", ts.ServiceAccountJSON(t))
		t.Setenv(auth.ADCEnv, path)
		c, err := auth.New(context.Background(), auth.Options{Base: trustTLS()})
		if err != nil {
			t.Fatal(err)
		}
		if got := newBearerServer(t).get(t, c.HTTPClient); got != "Bearer authtest-token-1" || c.Source != "GOOGLE_APPLICATION_CREDENTIALS file "+path {
			t.Errorf("Authorization %q, source %q", got, c.Source)
		}
	})
	t.Run("gcloud file", func(t *testing.T) {
		home := isolate(t)
		ts := authtest.NewTokenServer(t, 3600)
		path := writeFile(t, home, ".config/gcloud/application_default_credentials.json", ts.AuthorizedUserJSON(t))
		c, err := auth.New(context.Background(), auth.Options{Base: trustTLS()})
		if err != nil {
			t.Fatal(err)
		}
		if got := newBearerServer(t).get(t, c.HTTPClient); got != "Bearer authtest-token-1" || c.Source != "gcloud ADC file "+path {
			t.Errorf("Authorization %q, source %q", got, c.Source)
		}
	})
	t.Run("env names a missing file", func(t *testing.T) {
		isolate(t)
		t.Setenv(auth.ADCEnv, "/nonexistent/adc.json")
		_, err := auth.New(context.Background(), auth.Options{})
		want := "auth: application default credentials (GOOGLE_APPLICATION_CREDENTIALS file /nonexistent/adc.json)"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "no such file") {
			t.Errorf("err = %v, want %q", err, want)
		}
	})
}

// TestMetadataServer points GCE_METADATA_HOST at a loopback metadata server:
// the default probe finds it and tokens come from it.
func TestMetadataServer(t *testing.T) {
	isolate(t)
	var mu sync.Mutex
	var paths []string
	md := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Metadata-Flavor", "Google")
		switch r.URL.Path {
		case "/computeMetadata/v1/":
		case "/computeMetadata/v1/project/project-id":
			w.Write([]byte("authtest"))
		case "/computeMetadata/v1/instance/service-accounts/default/token":
			if !strings.Contains(r.URL.Query().Get("scopes"), "devstorage.read_write") {
				http.Error(w, "wrong scopes "+r.URL.RawQuery, http.StatusBadRequest)
				return
			}
			w.Write([]byte(`{"access_token":"metadata-token","expires_in":3600,"token_type":"Bearer"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(md.Close)
	t.Setenv(auth.MetadataHostEnv, strings.TrimPrefix(md.URL, "http://"))
	c, err := auth.New(context.Background(), auth.Options{Base: trustTLS()})
	if err != nil {
		t.Fatal(err)
	}
	if got := newBearerServer(t).get(t, c.HTTPClient); got != "Bearer metadata-token" || c.Source != "metadata server" {
		t.Errorf("Authorization %q, source %q (metadata paths %q)", got, c.Source, paths)
	}
}

type countingSource struct{ n int }

func (s *countingSource) Token() (*oauth2.Token, error) {
	s.n++
	return &oauth2.Token{AccessToken: "caller-token", Expiry: time.Now().Add(time.Hour)}, nil
}

func TestCallerTokenSourceAndClient(t *testing.T) {
	isolate(t)
	src := &countingSource{}
	c, err := auth.New(context.Background(), auth.Options{TokenSource: src, CredentialsFile: "/ignored", Base: trustTLS()})
	if err != nil {
		t.Fatal(err)
	}
	srv := newBearerServer(t)
	for range 3 {
		if got := srv.get(t, c.HTTPClient); got != "Bearer caller-token" {
			t.Fatalf("Authorization %q", got)
		}
	}
	if src.n != 1 {
		t.Errorf("token source called %d times, want 1 (reused until expiry)", src.n)
	}
	hc := &http.Client{}
	c, err = auth.New(context.Background(), auth.Options{HTTPClient: hc, TokenSource: src})
	if err != nil || c.HTTPClient != hc || c.TokenSource != nil {
		t.Errorf("caller's client not returned as is: %v %v", c, err)
	}
}

func TestTransportSizedForParallelism(t *testing.T) {
	for _, tc := range []struct{ par, want int }{{0, 2 * auth.DefaultParallelism}, {8, 16}, {64, 128}} {
		tr := auth.NewTransport(tc.par)
		if tr.MaxIdleConnsPerHost != tc.want || tr.MaxIdleConns < tc.want || tr.DisableKeepAlives {
			t.Errorf("parallelism %d: idle per host %d, total %d, keep-alive off %v", tc.par, tr.MaxIdleConnsPerHost, tr.MaxIdleConns, tr.DisableKeepAlives)
		}
	}
}

// An endpoint URL with user:password@ over plain http would send the password in clear
// (Basic) with every request: refused, and no message quotes the password. The same in
// STORAGE_EMULATOR_HOST. Over https the userinfo stays (a proxy may want it).
func TestEndpointCredentialsOverHTTPRefused(t *testing.T) {
	isolate(t)
	for _, tc := range []struct{ explicit, env, want string }{
		{"http://alice:s3cr3t@127.0.0.1:1", "", `auth: endpoint "http://alice:xxxxx@127.0.0.1:1" holds credentials (user:password@), which would travel in clear over http: drop them from the URL (an emulator needs none), or use https`},
		{"http://alice@127.0.0.1:1", "", `auth: endpoint "http://alice@127.0.0.1:1" holds credentials (user:password@), which would travel in clear over http`},
		{"", "http://bob:s3cr3t@127.0.0.1:1", `auth: STORAGE_EMULATOR_HOST "http://bob:xxxxx@127.0.0.1:1" holds credentials (user:password@), which would travel in clear over http`},
		{"", "bob:s3cr3t@127.0.0.1:1", `auth: STORAGE_EMULATOR_HOST "http://bob:xxxxx@127.0.0.1:1" holds credentials`},
		{"ftp://alice:s3cr3t@h", "", `auth: bad endpoint "ftp://alice:xxxxx@h"`},
	} {
		t.Setenv(auth.EmulatorHostEnv, tc.env)
		_, err := auth.New(context.Background(), auth.Options{Endpoint: tc.explicit, NoAuth: true})
		if !errors.Is(err, auth.ErrBadEndpoint) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("endpoint %q env %q: err = %v, want ErrBadEndpoint %q, never the password", tc.explicit, tc.env, err, tc.want)
		}
	}
}

// A URL that does not parse is quoted with its password hidden all the same.
func TestBadEndpointHidesPasswordOfUnparsableURL(t *testing.T) {
	isolate(t)
	_, err := auth.New(context.Background(), auth.Options{Endpoint: "http://u:s3cr3t@[::1", NoAuth: true})
	if !errors.Is(err, auth.ErrBadEndpoint) || !strings.Contains(err.Error(), `"http://u:xxxxx@[::1"`) {
		t.Errorf("err = %v; want ErrBadEndpoint quoting http://u:xxxxx@[::1", err)
	}
}
