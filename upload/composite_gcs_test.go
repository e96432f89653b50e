package upload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
)

// asGCS returns a transport that takes every connection, whatever the
// host, to srv (TLS) on 127.0.0.1: a Client with the endpoint
// https://storage.googleapis.com talks to fakegcs, never to Google.
func asGCS(t *testing.T, srv *fakegcs.Server) http.RoundTripper {
	t.Helper()
	addr := strings.TrimPrefix(srv.URL(), "https://")
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("fakegcs at %s, want https on 127.0.0.1", srv.URL())
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.CertPEM())
	tp := auth.NewTransport(4)
	tp.TLSClientConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	tp.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	t.Cleanup(tp.CloseIdleConnections)
	return tp
}

// GCS documents and honours deleteSourceObjects: on Google's endpoint the
// compose deletes the components and nothing reads one after it to see
// whether it did (a round trip after the compose, before the upload
// returned). On any other endpoint (an emulator, some of which predate the
// field) the check stays: TestCompositeCleanup.
func TestCompositeOnGCSTrustsDeleteSources(t *testing.T) {
	srv := newServer(t, fakegcs.Options{TLS: true})
	data := randBytes(4*512<<10, 71)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	c := newClient(t, srv, composeOpts(512<<10, nil, func(o *Options) {
		o.Endpoint = "https://storage.googleapis.com"
		o.Auth = auth.Options{NoAuth: true, Base: asGCS(t, srv)}
	}))
	r, err := c.UploadFile(context.Background(), src, URL{testBucket, "a"}, UploadOptions{})
	if err != nil || r.Note != "composite of 4 components" {
		t.Fatalf("%+v, %v", r, err)
	}
	wantObject(t, srv, "a", data)
	wantNoComponents(t, srv)
	composed := false
	for _, req := range srv.Log() {
		composed = composed || req.Op == "storage.objects.compose"
		if composed && req.Op != "storage.objects.compose" {
			t.Errorf("after the compose: %s %s %s (%d)", req.Op, req.Method, req.Path, req.Status)
		}
	}
	if !composed {
		t.Fatal("no compose")
	}
}

// Which endpoints are GCS's own, whose compose is trusted to delete its
// sources.
func TestGoogleEndpoint(t *testing.T) {
	for ep, want := range map[string]bool{
		"https://storage.googleapis.com":                true,
		"https://storage.us-east1.rep.googleapis.com":   true,
		"https://storage-psc1.p.googleapis.com:443":     true,
		"http://storage.googleapis.com":                 false,
		"https://127.0.0.1:4443":                        false,
		"https://storage.googleapis.com.example.net":    false,
		"https://xgoogleapis.com":                       false,
		"https://localhost:4443/storage.googleapis.com": false,
	} {
		if got := googleEndpoint(ep); got != want {
			t.Errorf("googleEndpoint(%q) = %v, want %v", ep, got, want)
		}
	}
}
