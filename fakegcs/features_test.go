package fakegcs_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

func TestRetryTestAPI(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	srv.PutObject("bkt", "o", []byte("hello"))
	r := do(t, srv, "POST", "/retry_test", []byte(`{"instructions":{"storage.objects.get":["return-503","return-reset-connection"],"storage.objects.list":["return-429"]}}`))
	var rt struct {
		ID           string
		Instructions map[string][]string
		Completed    bool
	}
	if err := json.Unmarshal([]byte(r.body), &rt); err != nil || r.status != 200 || rt.ID == "" {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	id := "x-retry-test-id: " + rt.ID
	if r := do(t, srv, "GET", "/storage/v1/b/bkt/o/o", nil, id); r.status != 503 {
		t.Fatalf("first get: %d", r.status)
	}
	req, _ := http.NewRequest("GET", srv.URL()+"/bkt/o", nil)
	req.Header.Set("x-retry-test-id", rt.ID)
	if res, err := freshClient(srv).Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("second get: want a reset, got %d", res.StatusCode)
	}
	if r := do(t, srv, "GET", "/storage/v1/b/bkt/o/o", nil, id); r.status != 200 {
		t.Fatalf("third get: %d", r.status)
	}
	if r := do(t, srv, "GET", "/storage/v1/b/bkt/o", nil); r.status != 200 {
		t.Fatalf("list without the header must not be affected: %d", r.status)
	}
	r = do(t, srv, "GET", "/retry_test/"+rt.ID, nil)
	json.Unmarshal([]byte(r.body), &rt)
	if rt.Completed || len(rt.Instructions["storage.objects.list"]) != 1 || len(rt.Instructions["storage.objects.get"]) != 0 {
		t.Fatalf("state: %s", r.body)
	}
	if r := do(t, srv, "GET", "/storage/v1/b/bkt/o", nil, id); r.status != 429 {
		t.Fatalf("list: %d", r.status)
	}
	r = do(t, srv, "DELETE", "/retry_test/"+rt.ID, nil)
	json.Unmarshal([]byte(r.body), &rt)
	if !rt.Completed {
		t.Fatalf("not completed: %s", r.body)
	}
	if r := do(t, srv, "GET", "/retry_test/"+rt.ID, nil); r.status != 404 {
		t.Fatalf("after delete: %d", r.status)
	}
	if r := do(t, srv, "POST", "/retry_test", []byte(`{"instructions":{"storage.objects.get":["explode"]}}`)); r.status != 400 {
		t.Fatalf("unknown instruction: %d", r.status)
	}
}

// return-503-after-256K on an upload persists the first 256 KiB, then 503.
func TestRetryTestAfterBytes(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	r := do(t, srv, "POST", "/retry_test", []byte(`{"instructions":{"storage.objects.insert":["return-503-after-256K"]}}`))
	var rt struct{ ID string }
	json.Unmarshal([]byte(r.body), &rt)
	uri := initiate(t, srv, "o", "x-retry-test-id: "+rt.ID) // initiation carries no bytes: not consumed
	data := randBytes(2*q, 1)
	if r := do(t, srv, "PUT", uri, data, "Content-Range: bytes 0-524287/*", "x-retry-test-id: "+rt.ID); r.status != 503 {
		t.Fatalf("chunk: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "PUT", uri, nil, "Content-Range: bytes */*"); r.header.Get("Range") != "bytes=0-262143" {
		t.Fatalf("status: %d %q", r.status, r.header.Get("Range"))
	}
}

func TestControlAPI(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	r := do(t, srv, "POST", "/_fakegcs/faults", []byte(`{"op":"storage.objects.list","kind":"status","status":429,"retryAfter":"2s","times":2}`))
	if r.status != 200 || !strings.Contains(r.body, `"id":1`) {
		t.Fatalf("inject: %d %s", r.status, r.body)
	}
	for range 2 {
		r := do(t, srv, "GET", "/storage/v1/b/bkt/o", nil)
		if r.status != 429 || r.header.Get("Retry-After") != "2" {
			t.Fatalf("list: %d %q", r.status, r.header.Get("Retry-After"))
		}
	}
	if r := do(t, srv, "GET", "/storage/v1/b/bkt/o", nil); r.status != 200 {
		t.Fatalf("third list: %d", r.status)
	}
	r = do(t, srv, "GET", "/_fakegcs/faults", nil)
	if !strings.Contains(r.body, `"fired":2`) || !strings.Contains(r.body, `"retryAfter":"2s"`) {
		t.Fatalf("faults: %s", r.body)
	}
	var st fakegcs.Stats
	r = do(t, srv, "GET", "/_fakegcs/stats", nil)
	if err := json.Unmarshal([]byte(r.body), &st); err != nil || st.Requests["storage.objects.list"] != 3 || st.Faults[fakegcs.KindStatus] != 2 {
		t.Fatalf("stats: %s", r.body)
	}
	if r := do(t, srv, "DELETE", "/_fakegcs/faults", nil); r.status != 204 || len(srv.Faults()) != 0 {
		t.Fatalf("clear: %d", r.status)
	}
	if r := do(t, srv, "POST", "/_fakegcs/faults", []byte(`{"kind":"nonsense"}`)); r.status != 400 {
		t.Fatalf("bad fault: %d", r.status)
	}
}

func TestParseFaults(t *testing.T) {
	fs, err := fakegcs.ParseFaults("status:op=storage.objects.insert,status=503,p=0.05; throttle:bps=1M,times=-1;reset:phase=chunk,offset=8M,after=1M,persist=512K")
	if err != nil || len(fs) != 3 {
		t.Fatalf("%v %v", fs, err)
	}
	if f := fs[0]; f.Kind != fakegcs.KindStatus || f.Status != 503 || f.Probability != 0.05 || f.Op != "storage.objects.insert" {
		t.Fatalf("%+v", f)
	}
	if f := fs[1]; f.BytesPerSecond != 1<<20 || f.Times != -1 {
		t.Fatalf("%+v", f)
	}
	if f := fs[2]; *f.Offset != 8<<20 || f.AfterBytes != 1<<20 || f.Persist != 512<<10 || f.Phase != "chunk" {
		t.Fatalf("%+v", f)
	}
	for _, bad := range []string{"status:status=999", "stall", "boom", "reset:after=x", "reset:nokey"} {
		if _, err := fakegcs.ParseFaults(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "4096": 4096, "512K": 512 << 10, "50M": 50 << 20, "2G": 2 << 30} {
		if got, err := fakegcs.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "M", "1.5M", "50MB", "9000000000G"} {
		if got, err := fakegcs.ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, no error", bad, got)
		}
	}
}

// Gcloud and gsutil send a single-quoted boundary with "=" in it and LF line
// endings; GCS accepts that, so fakegcs must too.
func TestMultipartAsPythonClientsSendIt(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	const bnd = "===============5301388784524729547=="
	body := "--" + bnd + "\nContent-Type: application/json\nMIME-Version: 1.0\n\n" +
		`{"bucket": "bkt", "contentType": "text/plain", "name": "small.txt", "metadata": {"a": "1"}}` + "\n--" + bnd +
		"\nContent-Type: text/plain\nMIME-Version: 1.0\nContent-Transfer-Encoding: binary\n\nhello world\n--" + bnd + "--"
	r := do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?alt=json&uploadType=multipart", []byte(body),
		"Content-Type: multipart/related; boundary='"+bnd+"'")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	got, a, err := srv.Object("bkt", "small.txt")
	if err != nil || string(got) != "hello world" || a.ContentType != "text/plain" || a.Metadata["a"] != "1" {
		t.Fatalf("%q %+v %v", got, a, err)
	}
	var o struct{ Md5Hash, Crc32c, Size string }
	json.Unmarshal([]byte(r.body), &o)
	if o.Size != "11" || o.Md5Hash != "XrY7u+Ae7tCTyyK7j1rNww==" || o.Crc32c != crcB64([]byte("hello world")) {
		t.Fatalf("object JSON %s", r.body)
	}
}

func TestListPagination(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	for _, n := range []string{"a", "d/1", "d/2", "e/x/1", "f", "g/"} {
		srv.PutObject("bkt", n, []byte(n))
	}
	var items, prefixes []string
	token, pages := "", 0
	for {
		r := do(t, srv, "GET", "/storage/v1/b/bkt/o?delimiter=/&maxResults=2&pageToken="+token, nil)
		var l struct {
			Items         []struct{ Name string }
			Prefixes      []string
			NextPageToken string
		}
		json.Unmarshal([]byte(r.body), &l)
		for _, it := range l.Items {
			items = append(items, it.Name)
		}
		prefixes = append(prefixes, l.Prefixes...)
		pages++
		if token = l.NextPageToken; token == "" {
			break
		}
	}
	if fmt.Sprint(items) != "[a f]" || fmt.Sprint(prefixes) != "[d/ e/ g/]" || pages != 3 {
		t.Fatalf("items %v prefixes %v pages %d", items, prefixes, pages)
	}
	r := do(t, srv, "GET", "/storage/v1/b/bkt/o?prefix=d/&startOffset=d/2", nil)
	if !strings.Contains(r.body, `"name":"d/2"`) || strings.Contains(r.body, `"name":"d/1"`) {
		t.Fatalf("startOffset: %s", r.body)
	}
}

func TestBuckets(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{})
	if r := do(t, srv, "POST", "/storage/v1/b?project=p", []byte(`{"name":"new-bkt"}`)); r.status != 200 || !strings.Contains(r.body, `"id":"new-bkt"`) {
		t.Fatalf("insert: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/storage/v1/b?project=p", []byte(`{"name":"new-bkt"}`)); r.status != 409 {
		t.Fatalf("re-insert: %d", r.status)
	}
	if r := do(t, srv, "GET", "/storage/v1/b?project=p", nil); !strings.Contains(r.body, `"name":"new-bkt"`) {
		t.Fatalf("list: %s", r.body)
	}
	srv.PutObject("new-bkt", "o", nil)
	if r := do(t, srv, "DELETE", "/storage/v1/b/new-bkt", nil); r.status != 409 {
		t.Fatalf("delete non-empty: %d", r.status)
	}
	srv.DeleteObject("new-bkt", "o")
	if r := do(t, srv, "DELETE", "/storage/v1/b/new-bkt", nil); r.status != 204 {
		t.Fatalf("delete: %d", r.status)
	}
	if r := do(t, srv, "GET", "/storage/v1/b/new-bkt", nil); r.status != 404 {
		t.Fatalf("get deleted: %d", r.status)
	}
}

func TestTLS(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{TLS: true, Buckets: []string{"bkt"}})
	if !strings.HasPrefix(srv.URL(), "https://127.0.0.1:") || len(srv.CertPEM()) == 0 {
		t.Fatalf("url %s", srv.URL())
	}
	c := newClient(t, srv)
	data := randBytes(2*q+1, 4)
	upload(t, c, "bkt", "o", data, q)
	if got := read(t, c, "bkt", "o", 0, -1); !bytes.Equal(got, data) {
		t.Fatal("TLS round trip differs")
	}
	r := do(t, srv, "GET", "/storage/v1/b/bkt/o/o", nil)
	if !strings.Contains(r.body, `"mediaLink":"https://127.0.0.1:`) {
		t.Fatalf("mediaLink must be https: %s", r.body)
	}
	// The client took HTTP/2, offered by ALPN as GCS does, and a reset is a
	// stream reset there (TestResetOverHTTP2 shows the connection survives).
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindReset})
	if _, err := freshClient(srv).Get(srv.URL() + "/bkt/o"); !isStreamReset(err) {
		t.Fatalf("reset over TLS with h2: %v, want a stream reset", err)
	}
	if p := srv.Stats().Protocols; p["HTTP/2.0"].Requests == 0 || p["HTTP/1.1"].Requests != 0 {
		t.Fatalf("protocols %v, want HTTP/2.0 only", p)
	}
}

// With HTTP/2 not offered, a reset over TLS is an RST of the connection, not
// a close_notify (EOF).
func TestTLSResetHTTP1(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{TLS: true, HTTP1Only: true, Buckets: []string{"bkt"}})
	srv.PutObject("bkt", "o", []byte("hello"))
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindReset})
	if _, err := freshClient(srv).Get(srv.URL() + "/bkt/o"); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("reset over TLS: %v, want ECONNRESET", err)
	}
}

func TestGzipTranscoding(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte("plain text, compressed"))
	zw.Close()
	if _, err := srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: "bkt", Name: "z", ContentEncoding: "gzip", ContentType: "text/plain"}, bytes.NewReader(zb.Bytes())); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", srv.URL()+"/bkt/z", nil)
	req.Header.Set("Accept-Encoding", "identity")
	res, err := srv.Client().Transport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	got.ReadFrom(res.Body)
	res.Body.Close()
	if got.String() != "plain text, compressed" || res.Header.Get("X-Goog-Stored-Content-Encoding") != "gzip" {
		t.Fatalf("transcoded: %q %v", got.String(), res.Header)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	res, _ = srv.Client().Transport.RoundTrip(req)
	got.Reset()
	got.ReadFrom(res.Body)
	res.Body.Close()
	if !bytes.Equal(got.Bytes(), zb.Bytes()) || res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("stored bytes: %d, %v", got.Len(), res.Header)
	}
}

// A stall longer than the client's timeout makes the client give up; Close
// ends the stalled handler at once.
func TestStallAndThrottle(t *testing.T) { forWires(t, testStallAndThrottle) }

func testStallAndThrottle(t *testing.T, opts fakegcs.Options) *fakegcs.Server {
	srv := fakegcs.NewTest(t, opts)
	srv.PutObject("bkt", "o", randBytes(64<<10, 2))
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindStall, Delay: time.Hour, AfterBytes: 1000})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/bkt/o", nil)
	res, err := srv.Client().Do(req)
	if err == nil {
		var b bytes.Buffer
		_, err = b.ReadFrom(res.Body)
		res.Body.Close()
		if b.Len() < 1000 {
			t.Fatalf("only %d bytes before the stall", b.Len())
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stalled read: %v", err)
	}

	// 64 KiB at 256 KiB/s takes at least 250 ms (a lower bound only).
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindThrottle, BytesPerSecond: 256 << 10})
	start := time.Now()
	r := do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=t", randBytes(64<<10, 3))
	if el := time.Since(start); r.status != 200 || el < 240*time.Millisecond {
		t.Fatalf("throttled upload: %d in %v", r.status, el)
	}
	return srv
}

func TestNewTestReportsUnfiredFaults(t *testing.T) {
	ft := &fakeTB{TB: t}
	srv := fakegcs.NewTest(ft, fakegcs.Options{})
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindStatus, Status: 503})
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindReset, Optional: true})
	ft.runCleanups()
	if len(ft.errs) != 1 || !strings.Contains(ft.errs[0], "never fired") {
		t.Fatalf("errors: %q", ft.errs)
	}
}

// fakeTB records errors and cleanups instead of failing the real test.
type fakeTB struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// freshClient uses a new connection per request: on a reused connection,
// net/http silently retries a GET that was reset before any response byte,
// so the test would not see the reset (the fault still counts as fired).
func freshClient(srv *fakegcs.Server) *http.Client {
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	return &http.Client{Transport: tr}
}

// The dir backend keeps one file per live object and leaves none behind for
// deleted objects, replaced generations or cancelled uploads.
func TestDirBackendFiles(t *testing.T) {
	dir := t.TempDir()
	srv := fakegcs.NewTest(t, fakegcs.Options{Backend: fakegcs.BackendDir, Dir: dir, Buckets: []string{"bkt"}})
	count := func() int {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	srv.PutObject("bkt", "x", randBytes(q+5, 1))
	srv.PutObject("bkt", "x", randBytes(10, 2)) // a new generation replaces the file
	if n := count(); n != 1 {
		t.Fatalf("%d files after two generations", n)
	}
	uri := initiate(t, srv, "y")
	runTrace(t, srv, uri, randBytes(q, 3), []step{
		{cr: "bytes 0-262143/*", to: q, status: 308, rng: "bytes=0-262143"},
		{method: "DELETE", status: 499},
	})
	srv.DeleteObject("bkt", "x")
	if n := count(); n != 0 {
		t.Fatalf("%d files left", n)
	}
	if r := do(t, srv, "GET", "/storage/v1/b/bkt/o?pageToken=!!", nil); r.status != 400 {
		t.Fatalf("bad page token: %d", r.status)
	}
}
