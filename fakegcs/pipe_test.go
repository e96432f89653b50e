package fakegcs_test

import (
	"bytes"
	"context"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/gcsput/gcsput/fakegcs"
)

// The in-memory client speaks the whole protocol without a socket: the
// official client's chunked upload survives a connection reset in mid-chunk
// and reads back the exact bytes, on a plain and on a TLS server.
func TestInMemoryClient(t *testing.T) {
	const chunk = 256 << 10
	data := randBytes(3*chunk+77, 11)
	for _, tlsOn := range []bool{false, true} {
		srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, TLS: tlsOn})
		c, err := storage.NewClient(context.Background(), option.WithEndpoint(srv.Endpoint()),
			option.WithoutAuthentication(), option.WithHTTPClient(srv.InMemoryClient()))
		if err != nil {
			t.Fatal(err)
		}
		fastRetries(c)
		at := int64(chunk)
		in := srv.Inject(fakegcs.Fault{Kind: fakegcs.KindReset, AfterBytes: chunk / 2,
			Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: &at})
		upload(t, c, "bkt", "o", data, chunk)
		if got := read(t, c, "bkt", "o", 0, -1); !bytes.Equal(got, data) {
			t.Fatalf("tls=%v: read back %d bytes, want %d", tlsOn, len(got), len(data))
		}
		if in.Fired() != 1 {
			t.Fatalf("tls=%v: reset fired %d times, want 1", tlsOn, in.Fired())
		}
		c.Close()
	}
}

// A client made after Close, or used after it, fails instead of hanging.
func TestInMemoryClientAfterClose(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	hc := srv.InMemoryClient()
	srv.Close()
	if resp, err := hc.Get(srv.Endpoint() + "b/b"); err == nil {
		resp.Body.Close()
		t.Fatalf("request after Close answered %s", resp.Status)
	}
}
