package resumable

import (
	"bytes"
	"context"
	"hash/crc32"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
)

// env is a fakegcs server and a Client for it whose retries never sleep.
type env struct {
	srv    *fakegcs.Server
	c      *Client
	clk    *retrytest.Clock
	events []Event
	hook   func(Event) // called after each event is recorded
	cur    *Session    // the session a hook may save
}

func newEnv(t testing.TB, chunk int) *env {
	t.Helper()
	return newEnvWith(t, chunk, fakegcs.Options{})
}

// newEnvWith is newEnv with the fake server's options (its bucket is added).
func newEnvWith(t testing.TB, chunk int, fopts fakegcs.Options) *env {
	t.Helper()
	fopts.Buckets = append(fopts.Buckets, "bkt")
	return newEnvOn(t, chunk, fakegcs.NewTest(t, fopts))
}

// newEnvOn is newEnv with a client of an existing server: a later process
// resuming what an earlier one saved.
func newEnvOn(t testing.TB, chunk int, srv *fakegcs.Server) *env {
	t.Helper()
	e := &env{srv: srv}
	e.clk = retrytest.NewClock()
	c, err := New(Options{
		HTTPClient:   e.srv.Client(),
		Endpoint:     e.srv.URL(),
		ChunkSize:    chunk,
		Retry:        &retry.Runner{Clock: e.clk, Rand: retrytest.Fixed(0.5)},
		StallTimeout: 30 * time.Second, // tests of the watchdog set their own
		OnEvent: func(ev Event) {
			e.events = append(e.events, ev)
			if e.hook != nil {
				e.hook(ev)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	return e
}

func TestFakeRoundTrip(t *testing.T) {
	e := newEnv(t, kib256)
	ctx := context.Background()
	data := testData(1<<20 + 5)
	s, err := e.c.Start(ctx, ObjectSpec{Bucket: "bkt", Name: "dir/obj", Size: int64(len(data)), ContentType: "text/plain",
		Metadata: map[string]string{"k": "v"}, DoesNotExist: true})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := e.c.Upload(ctx, s, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, attrs, err := e.srv.Object("bkt", "dir/obj")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("stored object differs (%v)", err)
	}
	if attrs.ContentType != "text/plain" || attrs.Metadata["k"] != "v" || attrs.Generation != obj.Generation {
		t.Errorf("attrs %+v, object %+v", attrs, obj)
	}
	var buf bytes.Buffer
	res, err := e.c.Download(ctx, DownloadSpec{Bucket: "bkt", Object: "dir/obj"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), data) || !res.Verified || res.Hashes.CRC32C != crc32.Checksum(data, castagnoli) {
		t.Fatalf("download: %d bytes, result %+v", buf.Len(), res)
	}
	t.Log(e.srv.Log())
}
