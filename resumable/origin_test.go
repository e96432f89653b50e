package resumable

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
)

// elsewhere is a plaintext server that counts what reaches it: nothing of an
// upload to an https endpoint may.
func elsewhere(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(200)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// tlsEndpoint serves h over TLS and returns a client of it whose retries do
// not sleep, and the number of requests it answered.
func tlsEndpoint(t *testing.T, h http.HandlerFunc) (*Client, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1); h(w, r) }))
	t.Cleanup(srv.Close)
	c, err := New(Options{HTTPClient: srv.Client(), Endpoint: srv.URL, ChunkSize: kib256,
		Retry: &retry.Runner{Clock: retrytest.NewClock(), Rand: retrytest.Fixed(0.5)}})
	if err != nil {
		t.Fatal(err)
	}
	return c, &n
}

func TestSessionURIOnAnotherOriginIsRefused(t *testing.T) {
	plain, reached := elsewhere(t)
	https := strings.Replace(plain.URL, "http://", "https://", 1)
	for _, loc := range []string{plain.URL, "https://127.0.0.2:443", https} {
		c, asked := tlsEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", loc+"/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=SECRET7")
			w.WriteHeader(200)
		})
		_, err := c.Start(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: 3})
		if !errors.Is(err, ErrForeignOrigin) || !strings.Contains(err.Error(), "refusing the session URI") || strings.Contains(err.Error(), "SECRET7") {
			t.Fatalf("Location %s: %v", loc, err)
		}
		if asked.Load() != 1 {
			t.Errorf("Location %s: %d initiations, want 1 (the refusal is not retried)", loc, asked.Load())
		}
	}
	if reached.Load() != 0 {
		t.Fatalf("%d requests reached the other origin", reached.Load())
	}
}

func TestSavedSessionOnAnotherOriginIsRefused(t *testing.T) {
	plain, reached := elsewhere(t)
	c, asked := tlsEndpoint(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	s := &Session{URI: plain.URL + "/upload/storage/v1/b/bkt/o?upload_id=SECRET7", Bucket: "bkt", Object: "o", Size: 3, ChunkSize: kib256}
	_, err := c.Upload(context.Background(), s, bytes.NewReader([]byte("abc")))
	if !errors.Is(err, ErrForeignOrigin) || !strings.Contains(err.Error(), "refusing the saved session") || strings.Contains(err.Error(), "SECRET7") {
		t.Fatalf("upload: %v", err)
	}
	if err := c.Cancel(context.Background(), s); !errors.Is(err, ErrForeignOrigin) {
		t.Fatalf("cancel: %v", err)
	}
	if reached.Load() != 0 || asked.Load() != 0 {
		t.Fatalf("requests: %d to the other origin, %d to the endpoint; want none", reached.Load(), asked.Load())
	}
}

func TestRedirectToAnotherOriginIsRefused(t *testing.T) {
	plain, reached := elsewhere(t)
	c, asked := tlsEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		// The object's bytes would go elsewhere, in cleartext.
		http.Redirect(w, r, plain.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
	var buf bytes.Buffer
	_, err := c.Download(context.Background(), DownloadSpec{Bucket: "bkt", Object: "o"}, &buf)
	if !errors.Is(err, ErrForeignOrigin) || !strings.Contains(err.Error(), "refusing a redirect to http://"+plain.Listener.Addr().String()) {
		t.Fatalf("download: %v", err)
	}
	if reached.Load() != 0 || asked.Load() != 1 {
		t.Fatalf("requests: %d to the other origin, %d to the endpoint; want 0 and 1 (a refusal is not retried)", reached.Load(), asked.Load())
	}
}
