package upload

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/retry"
)

// A delete, patch or compose whose reply is lost (the server did it, then
// the connection broke) is retried under a precondition from the object
// just read, and the retry sees that its first attempt succeeded: no 404,
// no 412, no second effect.
func TestLostRepliesOfConditionalRequests(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.PutObject(testBucket, "a", []byte("aa"))
	srv.PutObject(testBucket, "b", []byte("bb"))
	c := newClient(t, srv, nil)
	ctx := context.Background()
	drop := func(op string) *fakegcs.Injection {
		return srv.Inject(fakegcs.Fault{Op: op, Kind: fakegcs.KindDropResponse})
	}

	in := drop("storage.objects.patch")
	attrs, err := c.Update(ctx, URL{testBucket, "a"}, storage.ObjectAttrsToUpdate{ContentType: "text/x-lost", Metadata: map[string]string{"k": "v"}}, UpdateOptions{})
	if err != nil || in.Fired() != 1 || attrs.ContentType != "text/x-lost" || attrs.Metageneration != 2 {
		t.Fatalf("update: %v, fired %d, %+v", err, in.Fired(), attrs)
	}

	in = drop("storage.objects.compose")
	attrs, err = c.Compose(ctx, URL{testBucket, "ab"}, URL{testBucket, "a"}, URL{testBucket, "b"})
	if err != nil || in.Fired() != 1 || attrs.Size != 4 || attrs.ComponentCount != 2 {
		t.Fatalf("compose: %v, fired %d, %+v", err, in.Fired(), attrs)
	}
	if gens := srv.Count("storage.objects.compose"); gens != 2 {
		t.Errorf("%d compose requests, want 2 (the lost one and its retry)", gens)
	}

	in = drop("storage.objects.delete")
	if err := c.Delete(ctx, URL{testBucket, "b"}, DeleteOptions{}); err != nil || in.Fired() != 1 {
		t.Fatalf("delete: %v, fired %d", err, in.Fired())
	}
	if _, err := srv.Attrs(testBucket, "b"); !errors.Is(err, fakegcs.ErrObjectNotFound) {
		t.Errorf("b still there: %v", err)
	}
	// A delete of what is not there is still an error.
	if err := c.Delete(ctx, URL{testBucket, "b"}, DeleteOptions{}); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("second delete: %v", err)
	}
	// The precondition protects a newer generation: deleting a generation that
	// is no longer live is refused.
	old, _ := srv.Attrs(testBucket, "a")
	srv.PutObject(testBucket, "a", []byte("newer"))
	if err := c.Delete(ctx, URL{testBucket, "a"}, DeleteOptions{IfGenerationMatch: &old.Generation}); !isStatus(err, 412) {
		t.Errorf("delete of a replaced generation: %v", err)
	}
}

// Every request carries x-goog-gcs-idempotency-token, the same value on
// each retry of one operation, and a new one for the next operation.
func TestIdempotencyTokenConstantAcrossRetries(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.PutObject(testBucket, "o", []byte("data"))
	var mu sync.Mutex
	type seen struct{ method, path, token string }
	var reqs []seen
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reqs = append(reqs, seen{r.Method, r.URL.Path, r.Header.Get(retry.IdempotencyHeader)})
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindStatus, Status: 503})
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindStatus, Status: 503})
	c := newClient(t, srv, func(o *Options) { o.Endpoint = front.URL; o.SmallFileThreshold = -1 })
	ctx := context.Background()
	if _, err := c.Stat(ctx, URL{testBucket, "o"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadReader(ctx, strings.NewReader(strings.Repeat("x", 300<<10)), URL{testBucket, "up"}, UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reqs) < 5 {
		t.Fatalf("requests %+v", reqs)
	}
	for _, r := range reqs {
		if len(r.token) != 36 {
			t.Errorf("%s %s: token %q", r.method, r.path, r.token)
		}
	}
	// The two GETs of Stat share a token; the session's start (a POST) has its own;
	// every request on the session (the chunk, its retry, the status query) shares one.
	if reqs[0].token != reqs[1].token || reqs[0].method != "GET" || reqs[1].method != "GET" {
		t.Errorf("stat's attempts: %+v", reqs[:2])
	}
	var start string
	var puts []string
	for _, r := range reqs[2:] {
		switch r.method {
		case "POST":
			start = r.token
		case "PUT":
			puts = append(puts, r.token)
		}
	}
	if len(puts) < 3 || start == "" || start == reqs[0].token || puts[0] == start {
		t.Fatalf("start %q, puts %q, stat %q", start, puts, reqs[0].token)
	}
	for _, p := range puts {
		if p != puts[0] {
			t.Errorf("session requests carry tokens %q, want one", puts)
			break
		}
	}
}
