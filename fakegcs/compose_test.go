package fakegcs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/gcsput/gcsput/fakegcs"
)

// apiErr is the status and message of a JSON API error the client returned
// (0 and err's text for any other error).
func apiErr(err error) (int, string) {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code, ge.Message
	}
	if err == nil {
		return 0, ""
	}
	return 0, err.Error()
}

// composeServer starts a server with bucket "bkt" holding "a" and "b" and
// returns it, a client and the attributes of a and b.
func composeServer(t *testing.T, opts fakegcs.Options) (*fakegcs.Server, *storage.Client, fakegcs.ObjectAttrs, fakegcs.ObjectAttrs) {
	t.Helper()
	opts.Buckets = append(opts.Buckets, "bkt")
	srv := fakegcs.NewTest(t, opts)
	a, err := srv.PutObject("bkt", "a", []byte("first part, "))
	if err != nil {
		t.Fatal(err)
	}
	b, err := srv.PutObject("bkt", "b", []byte("second part"))
	if err != nil {
		t.Fatal(err)
	}
	return srv, newClient(t, srv), a, b
}

// The composite is the sources' bytes in order; its crc32c is theirs
// combined, its componentCount the sum of theirs, it has no md5Hash, and
// its metadata is the request's destination resource.
func TestComposeResult(t *testing.T) {
	_, c, _, _ := composeServer(t, fakegcs.Options{})
	ctx := context.Background()
	bkt := c.Bucket("bkt")
	comp := bkt.Object("ab").ComposerFrom(bkt.Object("a"), bkt.Object("b"))
	comp.ObjectAttrs = storage.ObjectAttrs{
		ContentType: "text/x-parts", ContentEncoding: "identity", ContentLanguage: "en",
		ContentDisposition: "inline", CacheControl: "no-cache", Metadata: map[string]string{"k": "v"},
	}
	ab, err := comp.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("first part, second part")
	if got := read(t, c, "bkt", "ab", 0, -1); string(got) != string(want) {
		t.Fatalf("content %q, want %q", got, want)
	}
	if crc := crc32.Checksum(want, crc32.MakeTable(crc32.Castagnoli)); ab.CRC32C != crc || len(ab.MD5) != 0 || ab.ComponentCount != 2 || ab.Size != 23 {
		t.Errorf("crc32c %08x (want %08x), md5 %x (want none), componentCount %d (want 2), size %d", ab.CRC32C, crc, ab.MD5, ab.ComponentCount, ab.Size)
	}
	if ab.ContentType != "text/x-parts" || ab.ContentEncoding != "identity" || ab.ContentLanguage != "en" ||
		ab.ContentDisposition != "inline" || ab.CacheControl != "no-cache" || ab.Metadata["k"] != "v" || len(ab.Metadata) != 1 {
		t.Errorf("metadata %+v", ab)
	}
	// A composite counts its components: 2 + a + b = 4.
	abab, err := bkt.Object("abab").ComposerFrom(bkt.Object("ab"), bkt.Object("a"), bkt.Object("b")).Run(ctx)
	if err != nil || abab.ComponentCount != 4 || abab.Size != 46 {
		t.Fatalf("compose of a composite: %+v, %v", abab, err)
	}
}

// GCS takes 1 to 32 sources; 33 is its 400 "invalid", none its 400.
func TestComposeSourceCount(t *testing.T) {
	srv, c, _, _ := composeServer(t, fakegcs.Options{})
	bkt := c.Bucket("bkt")
	srcs := make([]*storage.ObjectHandle, 33)
	for i := range srcs {
		srcs[i] = bkt.Object("a")
	}
	_, err := bkt.Object("d").ComposerFrom(srcs...).Run(context.Background())
	if code, msg := apiErr(err); code != 400 || msg != "The number of source components provided (33) exceeds the maximum (32)" {
		t.Errorf("33 sources: %d %q", code, msg)
	}
	if a, err := bkt.Object("d").ComposerFrom(srcs[:32]...).Run(context.Background()); err != nil || a.Size != 32*12 || a.ComponentCount != 32 {
		t.Errorf("32 sources: %+v, %v", a, err)
	}
	// The client refuses to send no source at all; GCS answers it so.
	for _, body := range []string{`{"sourceObjects":[]}`, `{}`} {
		r := do(t, srv, "POST", "/storage/v1/b/bkt/o/d/compose", []byte(body))
		e, _ := parseAPIError(r.body)
		if r.status != 400 || e.Error.Message != "You must provide at least one source component." {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
}

// componentCount no longer has a ceiling on GCS (it once refused more than
// 1024): it saturates at 2^31-1. Composing an empty object with itself 32
// times over builds 32^7 components in seven requests.
func TestComposeComponentCountSaturates(t *testing.T) {
	srv, c, _, _ := composeServer(t, fakegcs.Options{})
	if _, err := srv.PutObject("bkt", "x", nil); err != nil {
		t.Fatal(err)
	}
	bkt := c.Bucket("bkt")
	srcs := make([]*storage.ObjectHandle, 32)
	for i := range srcs {
		srcs[i] = bkt.Object("x")
	}
	want := []int64{32, 1024, 32768, 1 << 20, 1 << 25, 1 << 30, math.MaxInt32, math.MaxInt32}
	for i, w := range want {
		a, err := bkt.Object("x").ComposerFrom(srcs...).Run(context.Background())
		if err != nil || a.ComponentCount != w {
			t.Fatalf("compose %d: %+v, %v; want componentCount %d", i+1, a, err, w)
		}
	}
}

// A source's generation and ifGenerationMatch are honoured; a source is
// looked up in the destination's bucket only.
func TestComposeSourceConditions(t *testing.T) {
	srv, c, a, b := composeServer(t, fakegcs.Options{Buckets: []string{"other"}})
	if _, err := srv.PutObject("other", "elsewhere", []byte("x")); err != nil {
		t.Fatal(err)
	}
	bkt := c.Bucket("bkt")
	ctx := context.Background()
	cases := []struct {
		name string
		src  *storage.ObjectHandle
		code int
		msg  string
	}{
		{"live generation", bkt.Object("b").Generation(b.Generation), 200, ""},
		{"gone generation", bkt.Object("b").Generation(b.Generation - 1), 404, fmt.Sprintf("Object b (generation: %d) not found.", b.Generation-1)},
		{"ifGenerationMatch met", bkt.Object("b").If(storage.Conditions{GenerationMatch: b.Generation}), 200, ""},
		{"ifGenerationMatch unmet", bkt.Object("b").If(storage.Conditions{GenerationMatch: a.Generation}), 412, "At least one of the pre-conditions you specified did not hold."},
		{"missing", bkt.Object("nothing"), 404, "Object nothing (generation: 0) not found."},
		{"in another bucket", bkt.Object("elsewhere"), 404, "Object elsewhere (generation: 0) not found."},
	}
	for _, tc := range cases {
		attrs, err := bkt.Object("d").ComposerFrom(bkt.Object("a"), tc.src).Run(ctx)
		code, msg := apiErr(err)
		if err == nil {
			code = 200
		}
		if code != tc.code || msg != tc.msg || (err == nil && attrs.Size != a.Size+b.Size) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, code, msg, tc.code, tc.msg)
		}
	}
	// Other clients send int64s as JSON numbers, and may send
	// ifGenerationMatch 0 (the Go client cannot): a source that exists fails it.
	for body, want := range map[string]int{
		fmt.Sprintf(`{"sourceObjects":[{"name":"a","generation":%d}]}`, a.Generation):                                  200,
		`{"sourceObjects":[{"name":"a","objectPreconditions":{"ifGenerationMatch":0}}]}`:                               412,
		fmt.Sprintf(`{"sourceObjects":[{"name":"a","objectPreconditions":{"ifGenerationMatch":"%d"}}]}`, a.Generation): 200,
		`{"sourceObjects":[{"name":""}]}`:                        400,
		`{"sourceObjects":[{"name":"a","generation":"twelve"}]}`: 400,
	} {
		if r := do(t, srv, "POST", "/storage/v1/b/bkt/o/d/compose", []byte(body)); r.status != want {
			t.Errorf("%s: %d %s, want %d", body, r.status, r.body, want)
		}
	}
	if _, _, err := srv.Object("bkt", "a"); err != nil {
		t.Error("a source is gone after a compose without deleteSourceObjects")
	}
}

// Destination preconditions: ifGenerationMatch (0: must not exist) and
// ifMetagenerationMatch fail with 412 when unmet and leave the destination
// as it was.
func TestComposeDestinationConditions(t *testing.T) {
	srv, c, a, _ := composeServer(t, fakegcs.Options{})
	bkt := c.Bucket("bkt")
	ctx := context.Background()
	compose := func(cond storage.Conditions) (*storage.ObjectAttrs, error) {
		return bkt.Object("a").If(cond).ComposerFrom(bkt.Object("a"), bkt.Object("b")).Run(ctx)
	}
	for _, cond := range []storage.Conditions{
		{DoesNotExist: true}, {GenerationMatch: a.Generation + 1}, {MetagenerationMatch: 2},
		{GenerationMatch: a.Generation, MetagenerationMatch: 2},
	} {
		if _, err := compose(cond); status(err) != 412 {
			t.Errorf("%+v: %v, want 412", cond, err)
		}
	}
	if got, _, _ := srv.Object("bkt", "a"); string(got) != "first part, " {
		t.Fatalf("a failed compose changed its destination: %q", got)
	}
	appended, err := compose(storage.Conditions{GenerationMatch: a.Generation, MetagenerationMatch: 1})
	if err != nil || appended.Size != 23 || appended.Generation == a.Generation {
		t.Fatalf("append to a: %+v, %v", appended, err)
	}
	if _, err := bkt.Object("new").If(storage.Conditions{DoesNotExist: true}).ComposerFrom(bkt.Object("b")).Run(ctx); err != nil {
		t.Errorf("DoesNotExist on a new destination: %v", err)
	}
}

// The destination takes its storage class from the request (the bucket's,
// STANDARD, by default); GCS refuses sources of another class. A declared
// crc32c or md5Hash is ignored (gcloud declares its first component's).
func TestComposeStorageClassAndHashes(t *testing.T) {
	srv, c, _, _ := composeServer(t, fakegcs.Options{})
	if _, err := srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: "bkt", Name: "cold", StorageClass: "COLDLINE"}, strings.NewReader("cold")); err != nil {
		t.Fatal(err)
	}
	bkt := c.Bucket("bkt")
	ctx := context.Background()
	_, err := bkt.Object("d").ComposerFrom(bkt.Object("a"), bkt.Object("cold")).Run(ctx)
	if code, msg := apiErr(err); code != 400 || msg != "Cannot compose object with destination storage class STANDARD from source components that have different storage classes (COLDLINE)" {
		t.Errorf("mixed classes: %d %q", code, msg)
	}
	comp := bkt.Object("d").ComposerFrom(bkt.Object("cold"), bkt.Object("cold"))
	comp.StorageClass = "COLDLINE"
	if a, err := comp.Run(ctx); err != nil || a.StorageClass != "COLDLINE" {
		t.Errorf("COLDLINE from COLDLINE: %+v, %v", a, err)
	}

	want := crc32.Checksum([]byte("first part, second part"), crc32.MakeTable(crc32.Castagnoli))
	comp = bkt.Object("d").ComposerFrom(bkt.Object("a"), bkt.Object("b"))
	comp.SendCRC32C, comp.CRC32C = true, want+1
	if a, err := comp.Run(ctx); err != nil || a.CRC32C != want {
		t.Errorf("another crc32c declared: %+v, %v; want the composite's own", a, err)
	}
	comp.CRC32C = want
	if a, err := comp.Run(ctx); err != nil || a.CRC32C != want {
		t.Errorf("right crc32c: %+v, %v", a, err)
	}
	r := do(t, srv, "POST", "/storage/v1/b/bkt/o/d/compose", []byte(`{"sourceObjects":[{"name":"a"}],"destination":{"md5Hash":"AAAAAAAAAAAAAAAAAAAAAA=="}}`))
	if r.status != 200 || strings.Contains(r.body, "md5Hash") {
		t.Errorf("declared md5Hash: %d %s, want 200 without md5Hash", r.status, r.body)
	}
}

// deleteSourceObjects removes the sources once the composite exists, but
// not the destination when it is one of them (an append). Under a retention
// policy that holds a source, the compose fails (403) and changes nothing.
func TestComposeDeleteSourceObjects(t *testing.T) {
	srv, c, _, _ := composeServer(t, fakegcs.Options{})
	bkt := c.Bucket("bkt")
	comp := bkt.Object("a").ComposerFrom(bkt.Object("a"), bkt.Object("b"))
	comp.DeleteSourceObjects = true
	ctx := context.Background()
	if _, err := bkt.Update(ctx, storage.BucketAttrsToUpdate{RetentionPolicy: &storage.RetentionPolicy{RetentionPeriod: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	if _, err := comp.Run(ctx); status(err) != 403 {
		t.Fatalf("under retention: %v, want 403", err)
	}
	if got, _, _ := srv.Object("bkt", "a"); string(got) != "first part, " {
		t.Fatalf("a refused compose changed a: %q", got)
	}
	if _, err := bkt.Update(ctx, storage.BucketAttrsToUpdate{RetentionPolicy: &storage.RetentionPolicy{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := comp.Run(ctx); err != nil {
		t.Fatal(err)
	}
	names, _ := srv.ObjectNames("bkt")
	if got, _, _ := srv.Object("bkt", "a"); fmt.Sprint(names) != "[a]" || string(got) != "first part, second part" {
		t.Errorf("after compose with deleteSourceObjects: objects %v, a = %q", names, got)
	}
}

// retryTestTransport sends every request with a storage-testbench retry
// test id.
type retryTestTransport struct {
	rt http.RoundTripper
	id string
}

func (t retryTestTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-retry-test-id", t.id)
	return t.rt.RoundTrip(r)
}

// Retry conformance: the official client retries a compose only when it is
// idempotent, i.e. has a destination ifGenerationMatch (DoesNotExist
// included). fakegcs's retry-test API takes instructions for
// storage.objects.compose.
func TestComposeRetryConformance(t *testing.T) {
	srv, _, _, _ := composeServer(t, fakegcs.Options{})
	r := do(t, srv, "POST", "/retry_test", []byte(`{"instructions":{"storage.objects.compose":["return-503","return-503"]}}`))
	var rt struct{ ID string }
	if err := json.Unmarshal([]byte(r.body), &rt); r.status != 200 || err != nil {
		t.Fatalf("create retry test: %d %s", r.status, r.body)
	}
	c, err := storage.NewClient(context.Background(), option.WithEndpoint(srv.Endpoint()), option.WithoutAuthentication(),
		option.WithHTTPClient(&http.Client{Transport: retryTestTransport{srv.Client().Transport, rt.ID}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fast := storage.WithBackoff(gax.Backoff{Initial: time.Millisecond, Max: time.Millisecond})
	compose := func(name string, cond *storage.Conditions) (*storage.ObjectAttrs, error) {
		dst := c.Bucket("bkt").Object(name).Retryer(fast)
		if cond != nil {
			dst = dst.If(*cond)
		}
		return dst.ComposerFrom(c.Bucket("bkt").Object("a"), c.Bucket("bkt").Object("b")).Run(context.Background())
	}
	if _, err := compose("d", nil); status(err) != 503 {
		t.Fatalf("compose without precondition: %v, want the 503 unretried", err)
	}
	if a, err := compose("d", &storage.Conditions{DoesNotExist: true}); err != nil || a.Size != 23 {
		t.Fatalf("compose with DoesNotExist: %+v, %v; want the 503 retried", a, err)
	}
	if n := srv.Count("storage.objects.compose"); n != 3 {
		t.Errorf("%d compose requests, want 3", n)
	}
	if r := do(t, srv, "GET", "/retry_test/"+rt.ID, nil); !strings.Contains(r.body, `"completed":true`) {
		t.Errorf("retry test: %s", r.body)
	}

	// A compose whose answer is lost is retried and meets its own result:
	// 412, as on GCS. The composite exists once.
	in := srv.Inject(fakegcs.Fault{Op: "storage.objects.compose", Kind: fakegcs.KindDropResponse})
	_, err = compose("e", &storage.Conditions{DoesNotExist: true})
	if status(err) != 412 || in.Fired() != 1 {
		t.Errorf("retry after a lost answer: %v (fault fired %d times), want 412", err, in.Fired())
	}
	if got, _, _ := srv.Object("bkt", "e"); string(got) != "first part, second part" {
		t.Errorf("composite after a lost answer: %q", got)
	}
}

// A composite shares its sources' bytes (the memory backend does not copy
// them): deleting the sources, and writing new objects that reuse the
// pooled buffers theirs went back to, leaves the composite's bytes intact.
func TestComposeOutlivesSources(t *testing.T) {
	srv, c, _, _ := composeServer(t, fakegcs.Options{})
	ctx := context.Background()
	bkt := c.Bucket("bkt")
	big := make([]byte, 3<<20+5) // several pooled blocks and a short tail
	for i := range big {
		big[i] = byte(i % 251)
	}
	if _, err := srv.PutObject("bkt", "big", big); err != nil {
		t.Fatal(err)
	}
	comp := bkt.Object("c").ComposerFrom(bkt.Object("big"), bkt.Object("a"), bkt.Object("big"))
	if _, err := comp.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"big", "a"} {
		if err := bkt.Object(name).Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}
	junk := make([]byte, 3<<20)
	for i := range junk {
		junk[i] = 0xee
	}
	for i := range 8 {
		if _, err := srv.PutObject("bkt", fmt.Sprintf("junk%d", i), junk); err != nil {
			t.Fatal(err)
		}
	}
	want := string(big) + "first part, " + string(big)
	r, err := bkt.Object("c").NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got strings.Builder
	if _, err := io.Copy(&got, r); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Fatalf("composite after its sources were deleted: %d bytes, want %d (equal: %v)", got.Len(), len(want), got.String() == want)
	}
}
