package fakegcs_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"

	"github.com/gcsput/gcsput/fakegcs"
)

// fastRetries makes the official client retry without real waits worth
// mentioning, so fault tests stay fast. It also retries an HTTP/2 stream
// reset, which storage.ShouldRetry does not (TestOfficialClientMissesStreamResets),
// as the client's maintainers advise in google-cloud-go issue 7440.
func fastRetries(c *storage.Client) {
	c.SetRetry(storage.WithBackoff(gax.Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}),
		storage.WithPolicy(storage.RetryAlways),
		storage.WithErrorFunc(func(err error) bool { return storage.ShouldRetry(err) || isStreamReset(err) }))
}

// The official client's default retry predicate does not retry an HTTP/2
// stream reset (RST_STREAM INTERNAL_ERROR), the way GCS's front ends fail
// one request of a shared connection (google-cloud-go issues 784, 3735,
// 7440): over h2, fakegcs's reset faults fail its calls unless the caller
// adds the error, as fastRetries does.
func TestOfficialClientMissesStreamResets(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{TLS: true, Buckets: []string{"bkt"}})
	srv.PutObject("bkt", "o", []byte("hello"))
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindReset})
	c := newClient(t, srv)
	_, err := c.Bucket("bkt").Object("o").NewReader(context.Background())
	if !isStreamReset(err) || storage.ShouldRetry(err) {
		t.Fatalf("read: %v (ShouldRetry %v), want a stream reset it does not retry", err, storage.ShouldRetry(err))
	}
}

// The official client absorbs every transient fault with its own retries and
// ends with the exact bytes; fakegcs's counters show what each fault cost.
func TestClientAbsorbsUploadFaults(t *testing.T) {
	const chunk = 256 << 10
	data := randBytes(4*chunk+123, 7)
	at := func(n int64) *int64 { return &n }
	cases := []struct {
		name  string
		fault fakegcs.Fault
	}{
		{"503", fakegcs.Fault{Kind: fakegcs.KindStatus, Status: 503}},
		{"429 retry-after", fakegcs.Fault{Kind: fakegcs.KindStatus, Status: 429, RetryAfter: time.Second}},
		{"500", fakegcs.Fault{Kind: fakegcs.KindStatus, Status: 500}},
		{"502", fakegcs.Fault{Kind: fakegcs.KindStatus, Status: 502}},
		{"504", fakegcs.Fault{Kind: fakegcs.KindStatus, Status: 504}},
		{"408", fakegcs.Fault{Kind: fakegcs.KindStatus, Status: 408}},
		{"reset before", fakegcs.Fault{Kind: fakegcs.KindReset}},
		{"reset mid-chunk", fakegcs.Fault{Kind: fakegcs.KindReset, AfterBytes: chunk / 2}},
		{"503 after 128K", fakegcs.Fault{Kind: fakegcs.KindStatus, Status: 503, AfterBytes: 128 << 10}},
		{"drop response", fakegcs.Fault{Kind: fakegcs.KindDropResponse}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forWires(t, func(t *testing.T, opts fakegcs.Options) *fakegcs.Server {
				srv := fakegcs.NewTest(t, opts)
				c := newClient(t, srv)
				fastRetries(c)
				f := tc.fault
				f.Op, f.Phase, f.Offset = "storage.objects.insert", fakegcs.PhaseChunk, at(2*chunk)
				in := srv.Inject(f)
				upload(t, c, "bkt", "o", data, chunk)
				got, attrs, err := srv.Object("bkt", "o")
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("stored %d bytes (want %d), err %v", len(got), len(data), err)
				}
				if in.Fired() != 1 {
					t.Fatalf("fault fired %d times", in.Fired())
				}
				st, _ := srv.LastSession("bkt", "o")
				if st.Persisted != int64(len(data)) || st.Received > int64(len(data))+chunk {
					t.Fatalf("session: received %d persisted %d for %d bytes and one fault", st.Received, st.Persisted, len(data))
				}
				if attrs.Size != int64(len(data)) || st.Chunks < 6 {
					t.Fatalf("attrs size %d, %d chunk requests", attrs.Size, st.Chunks)
				}
				return srv
			})
		})
	}
}

func TestClientAbsorbsDownloadFaults(t *testing.T) {
	data := randBytes(1<<20, 9)
	cases := []struct {
		name  string
		fault fakegcs.Fault
	}{
		{"503", fakegcs.Fault{Kind: fakegcs.KindStatus, Status: 503}},
		{"429", fakegcs.Fault{Kind: fakegcs.KindStatus, Status: 429}},
		{"reset before", fakegcs.Fault{Kind: fakegcs.KindReset}},
		{"truncate", fakegcs.Fault{Kind: fakegcs.KindTruncate, AfterBytes: 300000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forWires(t, func(t *testing.T, opts fakegcs.Options) *fakegcs.Server {
				srv := fakegcs.NewTest(t, opts)
				if _, err := srv.PutObject("bkt", "o", data); err != nil {
					t.Fatal(err)
				}
				c := newClient(t, srv)
				fastRetries(c)
				f := tc.fault
				f.Op = "storage.objects.get"
				in := srv.Inject(f)
				if got := read(t, c, "bkt", "o", 0, -1); !bytes.Equal(got, data) {
					t.Fatalf("read %d bytes, differs", len(got))
				}
				if in.Fired() != 1 || srv.Count("storage.objects.get") != 2 {
					t.Fatalf("fired %d, gets %d", in.Fired(), srv.Count("storage.objects.get"))
				}
				return srv
			})
		})
	}
}

// A corrupted download body is caught by the client's CRC32C check.
func TestClientDetectsCorruptDownload(t *testing.T) {
	forWires(t, testClientDetectsCorruptDownload)
}

func testClientDetectsCorruptDownload(t *testing.T, opts fakegcs.Options) *fakegcs.Server {
	srv := fakegcs.NewTest(t, opts)
	data := randBytes(100000, 3)
	srv.PutObject("bkt", "o", data)
	c := newClient(t, srv)
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindCorrupt, AfterBytes: 5})
	r, err := c.Bucket("bkt").Object("o").NewReader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(r)
	if err == nil || buf.Len() != len(data) || buf.Bytes()[5] != data[5]^0xff {
		t.Fatalf("err %v, %d bytes", err, buf.Len())
	}
	return srv
}

// A request is counted when it arrives, not when its handler returns: a
// client that has read part of a reply already sees its request counted.
// (Counting at the end let TestClientAbsorbsDownloadFaults read a count the
// server had not recorded yet.)
func TestCountIsRecordedBeforeTheReply(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	if _, err := srv.PutObject("bkt", "o", randBytes(1000, 1)); err != nil {
		t.Fatal(err)
	}
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindStall, AfterBytes: 1, Delay: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/download/storage/v1/b/bkt/o/o?alt=media", nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadFull(resp.Body, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	// The handler is stalled after the first byte.
	if n := srv.Count("storage.objects.get"); n != 1 {
		t.Fatalf("while the reply is being sent, Count = %d, want 1", n)
	}
	if n := srv.Stats().Requests["storage.objects.get"]; n != 1 {
		t.Fatalf("Stats().Requests = %d, want 1", n)
	}
}
