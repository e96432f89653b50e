package fakegcs_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

const q = 256 << 10 // the upload quantum

// reply is a response with its body read.
type reply struct {
	status int
	header http.Header
	body   string
}

// do sends one request to srv; hdr is "Key: value" pairs.
func do(t *testing.T, srv *fakegcs.Server, method, url string, body []byte, hdr ...string) reply {
	t.Helper()
	if strings.HasPrefix(url, "/") {
		url = srv.URL() + url
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, res.Header, string(b)}
}

// initiate starts a resumable upload of b/name and returns the session URI.
func initiate(t *testing.T, srv *fakegcs.Server, name string, hdr ...string) string {
	t.Helper()
	r := do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name="+name, []byte(`{"contentType":"text/x-test"}`), hdr...)
	if r.status != 200 || r.header.Get("Location") == "" {
		t.Fatalf("initiate: %d %s", r.status, r.body)
	}
	return r.header.Get("Location")
}

func crcB64(b []byte) string {
	var s [4]byte
	binary.BigEndian.PutUint32(s[:], crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	return base64.StdEncoding.EncodeToString(s[:])
}

// step is one request of a protocol trace and what must come back.
type step struct {
	method string // PUT by default
	cr     string // Content-Range
	from   int    // body = data[from:to]
	to     int
	hdr    []string
	status int
	rng    string // expected response Range ("" = none)
}

func runTrace(t *testing.T, srv *fakegcs.Server, uri string, data []byte, steps []step) {
	t.Helper()
	for i, s := range steps {
		m := s.method
		if m == "" {
			m = "PUT"
		}
		hdr := append([]string{"Content-Range: " + s.cr}, s.hdr...)
		r := do(t, srv, m, uri, data[s.from:s.to], hdr...)
		if r.status != s.status || r.header.Get("Range") != s.rng {
			t.Fatalf("step %d (%s %q): got %d Range %q, want %d Range %q; body %s", i, m, s.cr, r.status, r.header.Get("Range"), s.status, s.rng, r.body)
		}
	}
}

func TestResumableProtocolTraces(t *testing.T) {
	data := randBytes(3*q+100, 11)
	n := len(data)
	total := fmt.Sprint(n)
	cases := []struct {
		name  string
		hdr   []string // initiation headers
		steps []step
		size  int // the object must be data[:size] afterwards; -1: no object
	}{
		{"status query before any byte has no Range", nil, []step{
			{cr: "bytes */*", status: 308},
			{cr: "bytes */" + total, status: 308},
		}, -1},
		{"chunks by PUT and POST, final by chunk", nil, []step{
			{cr: fmt.Sprintf("bytes 0-%d/*", q-1), to: q, status: 308, rng: fmt.Sprintf("bytes=0-%d", q-1)},
			{method: "POST", cr: fmt.Sprintf("bytes %d-%d/*", q, 3*q-1), from: q, to: 3 * q, status: 308, rng: fmt.Sprintf("bytes=0-%d", 3*q-1)},
			{cr: fmt.Sprintf("bytes %d-%d/%d", 3*q, n-1, n), from: 3 * q, to: n, status: 200},
			{cr: "bytes */*", status: 200}, // a finished session answers with the object
		}, n},
		{"non-final chunk not a multiple of 256 KiB is rejected", nil, []step{
			{cr: fmt.Sprintf("bytes 0-%d/*", q), to: q + 1, status: 400},
			{cr: "bytes */*", status: 308},
		}, -1},
		{"overlapping re-send is taken from the persisted offset", nil, []step{
			{cr: fmt.Sprintf("bytes 0-%d/*", 2*q-1), to: 2 * q, status: 308, rng: fmt.Sprintf("bytes=0-%d", 2*q-1)},
			{cr: fmt.Sprintf("bytes %d-%d/%d", q, n-1, n), from: q, to: n, status: 200},
		}, n},
		{"chunk beyond the persisted offset is rejected", nil, []step{
			{cr: fmt.Sprintf("bytes 0-%d/*", q-1), to: q, status: 308, rng: fmt.Sprintf("bytes=0-%d", q-1)},
			{cr: fmt.Sprintf("bytes %d-%d/*", 2*q, 3*q-1), from: 2 * q, to: 3 * q, status: 400},
			{cr: "bytes */*", status: 308, rng: fmt.Sprintf("bytes=0-%d", q-1)},
		}, -1},
		{"status query with a larger total never finalizes", nil, []step{
			{cr: fmt.Sprintf("bytes 0-%d/*", q-1), to: q, status: 308, rng: fmt.Sprintf("bytes=0-%d", q-1)},
			{cr: "bytes */" + total, status: 308, rng: fmt.Sprintf("bytes=0-%d", q-1)},
			{cr: fmt.Sprintf("bytes %d-%d/*", q, 3*q-1), from: q, to: 3 * q, status: 308, rng: fmt.Sprintf("bytes=0-%d", 3*q-1)},
			{cr: fmt.Sprintf("bytes %d-%d/%d", 3*q, n-1, n), from: 3 * q, to: n, status: 200},
		}, n},
		{"empty final request finalizes when total equals persisted", nil, []step{
			{cr: fmt.Sprintf("bytes 0-%d/*", 3*q-1), to: 3 * q, status: 308, rng: fmt.Sprintf("bytes=0-%d", 3*q-1)},
			{cr: fmt.Sprintf("bytes */%d", 3*q), status: 200},
		}, 3 * q},
		{"X-GUploader-No-308 turns 308 into 200 with an override header", nil, []step{
			{cr: fmt.Sprintf("bytes 0-%d/*", q-1), to: q, hdr: []string{"X-GUploader-No-308: yes"}, status: 200, rng: fmt.Sprintf("bytes=0-%d", q-1)},
		}, -1},
		{"X-Upload-Content-Length is enforced", []string{"X-Upload-Content-Length: " + total}, []step{
			{cr: fmt.Sprintf("bytes 0-%d/%d", q-1, n+1), to: q, status: 400},
			{cr: fmt.Sprintf("bytes 0-%d/%d", q-1, n), to: q, status: 308, rng: fmt.Sprintf("bytes=0-%d", q-1)},
			{cr: fmt.Sprintf("bytes %d-%d/%d", q, n-1, n), from: q, to: n, status: 200},
		}, n},
		{"X-Goog-Hash mismatch on the final chunk is 400", nil, []step{
			{cr: fmt.Sprintf("bytes 0-%d/%d", n-1, n), to: n, hdr: []string{"X-Goog-Hash: crc32c=AAAAAA=="}, status: 400},
		}, -1},
		{"X-Goog-Hash match on the final chunk", nil, []step{
			{cr: fmt.Sprintf("bytes 0-%d/%d", n-1, n), to: n, hdr: []string{"X-Goog-Hash: crc32c=" + crcB64(data)}, status: 200},
		}, n},
		{"DELETE cancels with 499", nil, []step{
			{cr: fmt.Sprintf("bytes 0-%d/*", q-1), to: q, status: 308, rng: fmt.Sprintf("bytes=0-%d", q-1)},
			{method: "DELETE", status: 499},
			{cr: "bytes */*", status: 499},
		}, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
			uri := initiate(t, srv, "o", tc.hdr...)
			runTrace(t, srv, uri, data, tc.steps)
			got, attrs, err := srv.Object("bkt", "o")
			if (tc.size >= 0) != (err == nil) || (tc.size >= 0 && !bytes.Equal(got, data[:tc.size])) {
				t.Fatalf("object: %d bytes, err %v; want %d bytes", len(got), err, tc.size)
			}
			if tc.size >= 0 && attrs.ContentType != "text/x-test" {
				t.Fatalf("content type %q", attrs.ContentType)
			}
		})
	}
}

func TestResumableNo308Override(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	uri := initiate(t, srv, "o")
	r := do(t, srv, "PUT", uri, make([]byte, q), "Content-Range: bytes 0-262143/*", "X-GUploader-No-308: yes")
	if r.status != 200 || r.header.Get("X-Http-Status-Code-Override") != "308" {
		t.Fatalf("%d %v", r.status, r.header)
	}
}

func TestResumableSessionErrors(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	uri := initiate(t, srv, "o")
	unknown := strings.Replace(uri, "upload_id=", "upload_id=x", 1)
	if r := do(t, srv, "PUT", unknown, nil, "Content-Range: bytes */*"); r.status != 404 {
		t.Fatalf("unknown session: %d", r.status)
	}
	in := srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseStatus, Kind: fakegcs.KindExpire})
	for range 2 { // expired for good, not just once
		r := do(t, srv, "PUT", uri, nil, "Content-Range: bytes */*")
		if r.status != 410 || !strings.Contains(r.body, `"code":410`) {
			t.Fatalf("expired session: %d %s", r.status, r.body)
		}
	}
	if in.Fired() != 1 {
		t.Fatalf("fired %d", in.Fired())
	}
	st, _ := srv.LastSession("bkt", "o")
	if st.State != "expired" || st.Requests != 2 || st.StatusQueries != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStalledStatusQueryAbandoned: a status query stalled by a fault whose
// client gives up is dropped, not served when it wakes: served, it would take
// the session from the chunk the client sent next, which then failed with a
// 503 (found as a flaky TestStallError in package resumable).
func TestStalledStatusQueryAbandoned(t *testing.T) {
	stalling := make(chan struct{}, 1)
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Logf: func(format string, args ...any) {
		if strings.Contains(fmt.Sprintf(format, args...), "injecting stall") {
			stalling <- struct{}{}
		}
	}})
	uri := initiate(t, srv, "o")
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseStatus, Kind: fakegcs.KindStall, Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stalled := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "PUT", uri, nil)
		req.Header.Set("Content-Range", "bytes */*")
		res, err := srv.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		stalled <- err
	}()
	<-stalling

	// The next chunk is under way (its first bytes read) when the client gives up the query.
	data := bytes.Repeat([]byte("x"), q)
	pr, pw := io.Pipe()
	chunk := make(chan reply, 1)
	go func() {
		req, _ := http.NewRequest("PUT", uri, pr)
		req.ContentLength = int64(len(data))
		req.Header.Set("Content-Range", fmt.Sprintf("bytes 0-%d/*", q-1))
		res, err := srv.Client().Do(req)
		if err != nil {
			chunk <- reply{body: err.Error()}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		chunk <- reply{res.StatusCode, res.Header, string(b)}
	}()
	pw.Write(data[:q/2])
	waitFor(t, "the chunk's first bytes to reach the session", func() bool {
		st, ok := srv.LastSession("bkt", "o")
		return ok && st.Received > 0
	})
	cancel()
	if err := <-stalled; err == nil {
		t.Fatal("the stalled status query was answered")
	}
	waitFor(t, "the abandoned query to end", func() bool {
		for _, r := range srv.Log() {
			if r.Phase == fakegcs.PhaseStatus {
				return true
			}
		}
		return false
	})
	pw.Write(data[q/2:])
	pw.Close()
	if r := <-chunk; r.status != 308 || r.header.Get("Range") != fmt.Sprintf("bytes=0-%d", q-1) {
		t.Fatalf("the chunk after the abandoned query: %d %q %s", r.status, r.header.Get("Range"), r.body)
	}
	for _, r := range srv.Log() {
		if r.Phase == fakegcs.PhaseStatus && (r.Status != 499 || r.Outcome != "client gone") {
			t.Errorf("abandoned status query logged %d %q, want 499 client gone", r.Status, r.Outcome)
		}
	}
}

// waitFor polls cond until it holds, failing t after 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Faults that change what a chunk persists: the Range the server reports
// afterwards is the truth, 256 KiB aligned.
func TestResumablePartialPersistFaults(t *testing.T) {
	data := randBytes(4*q, 5)
	cases := []struct {
		name  string
		fault fakegcs.Fault
		want  int // persisted after the faulty 4-quantum chunk
	}{
		{"reset after 2.5 quanta persists 2", fakegcs.Fault{Kind: fakegcs.KindReset, AfterBytes: 5 * q / 2}, 2 * q},
		{"reset after 3 quanta persisting 1", fakegcs.Fault{Kind: fakegcs.KindReset, AfterBytes: 3 * q, Persist: q + 5}, q},
		{"short 308 persists half", fakegcs.Fault{Kind: fakegcs.KindShort308}, 2 * q},
		{"503 after 1.5 quanta persists 1", fakegcs.Fault{Kind: fakegcs.KindStatus, Status: 503, AfterBytes: 3 * q / 2}, q},
		{"drop response persists all", fakegcs.Fault{Kind: fakegcs.KindDropResponse}, 4 * q},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forWires(t, func(t *testing.T, opts fakegcs.Options) *fakegcs.Server {
				srv := fakegcs.NewTest(t, opts)
				uri := initiate(t, srv, "o")
				f := tc.fault
				f.Phase = fakegcs.PhaseChunk
				srv.Inject(f)
				req, _ := http.NewRequest("PUT", uri, bytes.NewReader(data))
				req.Header.Set("Content-Range", fmt.Sprintf("bytes 0-%d/*", 4*q-1))
				res, err := srv.Client().Do(req)
				if err == nil {
					res.Body.Close()
				}
				want := ""
				if tc.want > 0 {
					want = fmt.Sprintf("bytes=0-%d", tc.want-1)
				}
				r := do(t, srv, "PUT", uri, nil, "Content-Range: bytes */*")
				if r.status != 308 || r.header.Get("Range") != want {
					t.Fatalf("after fault (err %v): %d Range %q, want %q", err, r.status, r.header.Get("Range"), want)
				}
				// Resume from the reported offset and finish.
				last := step{cr: fmt.Sprintf("bytes %d-%d/%d", tc.want, 4*q-1, 4*q), from: tc.want, to: 4 * q, status: 200}
				if tc.want == 4*q {
					last = step{cr: fmt.Sprintf("bytes */%d", 4*q), status: 200}
				}
				runTrace(t, srv, uri, data, []step{last})
				if got, _, _ := srv.Object("bkt", "o"); !bytes.Equal(got, data) {
					t.Fatal("object differs")
				}
				return srv
			})
		})
	}
}

func TestPreconditions(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	a, _ := srv.PutObject("bkt", "o", []byte("hello"))
	gen := fmt.Sprint(a.Generation)
	cases := []struct {
		method, url string
		body        string
		hdr         []string
		status      int
	}{
		{"POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=o&ifGenerationMatch=0", "", nil, 412},
		{"POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=o&ifGenerationMatch=0", "x", nil, 412},
		{"POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=new&ifGenerationMatch=0", "x", nil, 200},
		{"GET", "/storage/v1/b/bkt/o/o?ifGenerationMatch=1", "", nil, 412},
		{"GET", "/storage/v1/b/bkt/o/o?ifGenerationMatch=" + gen, "", nil, 200},
		{"GET", "/storage/v1/b/bkt/o/o?ifGenerationNotMatch=" + gen, "", nil, 304},
		{"GET", "/storage/v1/b/bkt/o/o?ifMetagenerationMatch=2", "", nil, 412},
		{"PATCH", "/storage/v1/b/bkt/o/o?ifMetagenerationMatch=2", `{"contentType":"a/b"}`, nil, 412},
		{"PATCH", "/storage/v1/b/bkt/o/o?ifMetagenerationMatch=1", `{"contentType":"a/b"}`, nil, 200},
		{"GET", "/bkt/o", "", []string{"x-goog-if-generation-match: 7"}, 412},
		{"GET", "/bkt/o", "", []string{"x-goog-if-generation-match: " + gen}, 200},
		{"DELETE", "/storage/v1/b/bkt/o/o?ifGenerationMatch=3", "", nil, 412},
		{"DELETE", "/storage/v1/b/bkt/o/o?ifGenerationMatch=" + gen, "", nil, 204},
	}
	for _, c := range cases {
		r := do(t, srv, c.method, c.url, []byte(c.body), c.hdr...)
		if r.status != c.status {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.url, r.status, c.status, r.body)
		}
		if c.status == 412 && !strings.Contains(r.body, "conditionNotMet") && !strings.Contains(r.body, "PreconditionFailed") {
			t.Errorf("%s %s: error body %s", c.method, c.url, r.body)
		}
	}
}

func TestDownloadRanges(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	data := []byte("0123456789")
	a, _ := srv.PutObject("bkt", "o", data)
	cases := []struct {
		path, rng   string
		status      int
		body, crang string
	}{
		{"/download/storage/v1/b/bkt/o/o?alt=media", "", 200, "0123456789", ""},
		{"/storage/v1/b/bkt/o/o?alt=media", "bytes=2-4", 206, "234", "bytes 2-4/10"},
		{"/bkt/o", "bytes=7-", 206, "789", "bytes 7-9/10"},
		{"/bkt/o", "bytes=-3", 206, "789", "bytes 7-9/10"},
		{"/bkt/o", "bytes=5-100", 206, "56789", "bytes 5-9/10"},
		{"/bkt/o", "bytes=10-", 416, "", "bytes */10"},
		{"/download/storage/v1/b/bkt/o/o?alt=media", "bytes=20-30", 416, "", "bytes */10"},
	}
	for _, c := range cases {
		var hdr []string
		if c.rng != "" {
			hdr = append(hdr, "Range: "+c.rng)
		}
		r := do(t, srv, "GET", c.path, nil, hdr...)
		if r.status != c.status || r.header.Get("Content-Range") != c.crang || (c.status < 300 && r.body != c.body) {
			t.Errorf("%s %s: %d %q %q", c.path, c.rng, r.status, r.header.Get("Content-Range"), r.body)
		}
		if c.status < 300 && (r.header.Get("X-Goog-Generation") != fmt.Sprint(a.Generation) ||
			r.header.Get("X-Goog-Stored-Content-Length") != "10" ||
			!strings.Contains(r.header.Get("X-Goog-Hash"), "crc32c="+crcB64(data)) ||
			!strings.Contains(r.header.Get("X-Goog-Hash"), "md5=")) {
			t.Errorf("%s: headers %v", c.path, r.header)
		}
	}
	if r := do(t, srv, "GET", "/b/missing", nil); r.status != 404 || !strings.Contains(r.body, "NoSuchKey") {
		t.Errorf("XML 404: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "GET", fmt.Sprintf("/bkt/o?generation=%d", a.Generation+1), nil); r.status != 404 {
		t.Errorf("old generation: %d", r.status)
	}
}

func TestErrorBodyShape(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{})
	r := do(t, srv, "GET", "/storage/v1/b/nope/o/x", nil)
	e, err := parseAPIError(r.body)
	if err != nil || r.status != 404 || e.Error.Code != 404 ||
		len(e.Error.Errors) != 1 || e.Error.Errors[0].Domain != "global" || e.Error.Errors[0].Reason != "notFound" {
		t.Fatalf("%d %s (%v)", r.status, r.body, err)
	}
}

// apiError is GCS's JSON error body.
type apiError struct {
	Error struct {
		Code    int
		Message string
		Errors  []struct{ Domain, Reason, Message string }
	}
}

func parseAPIError(body string) (apiError, error) {
	var e apiError
	err := json.Unmarshal([]byte(body), &e)
	return e, err
}

// TestObjectJSONShape checks the wire form of an Object resource: int64s as
// strings, size present even for an empty object, hashes base64, as GCS
// sends them (clients parse these fields strictly).
func TestObjectJSONShape(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	r := do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=empty", nil, "Content-Type: text/plain")
	if r.status != 200 {
		t.Fatalf("insert: %d %s", r.status, r.body)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"kind": "storage#object", "name": "empty", "bucket": "bkt", "size": "0",
		"crc32c": "AAAAAA==", "md5Hash": "1B2M2Y8AsgTpgAmY7PhCfg==", "metageneration": "1",
		"contentType": "text/plain",
	} {
		if m[k] != want {
			t.Errorf("%s = %#v, want %#v", k, m[k], want)
		}
	}
	if g, ok := m["generation"].(string); !ok || g == "" || g == "0" {
		t.Errorf("generation = %#v, want a non-zero decimal string", m["generation"])
	}
	r = do(t, srv, "GET", "/storage/v1/b/bkt/o?prefix=e", nil)
	var list struct {
		Kind  string
		Items []map[string]any
	}
	if err := json.Unmarshal([]byte(r.body), &list); err != nil || list.Kind != "storage#objects" || len(list.Items) != 1 || list.Items[0]["size"] != "0" {
		t.Errorf("list: %v %s", err, r.body)
	}
}

// TestPartialResponse: "fields" cuts an Object resource to the top-level
// members it names, in encoding/json's order, on insert and on get; a
// member the object lacks is left out (partial_test.go has the rest).
func TestPartialResponse(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	r := do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=o&fields=crc32c,size,generation,owner", []byte("hello"))
	var gen int64
	if r.status != 200 {
		t.Fatalf("insert: %d %s", r.status, r.body)
	}
	if _, err := fmt.Sscanf(r.body, `{"generation":"%d","size":"5","crc32c":"mnG7TA=="}`, &gen); err != nil || gen == 0 ||
		r.body != fmt.Sprintf(`{"generation":"%d","size":"5","crc32c":"mnG7TA=="}`, gen) {
		t.Fatalf("insert with fields: %s", r.body)
	}
	for query, want := range map[string]string{
		"fields=name,metadata,contentEncoding": `{"name":"o"}`, // empty omitempty members stay out
		"fields=bucket":                        `{"bucket":"bkt"}`,
		"fields=":                              "",
		"fields=owner(entity)":                 "{}",
	} {
		r := do(t, srv, "GET", "/storage/v1/b/bkt/o/o?"+query, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", query, r.status, r.body)
		}
		if want == "" { // the whole resource
			if !strings.Contains(r.body, `"kind":"storage#object"`) || !strings.Contains(r.body, `"selfLink"`) {
				t.Errorf("%s: %s, want the whole resource", query, r.body)
			}
		} else if r.body != want {
			t.Errorf("%s: %s, want %s", query, r.body, want)
		}
	}
	// A name that encoding/json escapes comes out as encoding/json writes it.
	name := "a<b>&\"c\\é\x01"
	if r := do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name="+url.QueryEscape(name), []byte("x")); r.status != 200 {
		t.Fatalf("insert %q: %d %s", name, r.status, r.body)
	}
	r = do(t, srv, "GET", "/storage/v1/b/bkt/o/"+url.PathEscape(name)+"?fields=kind,name", nil)
	quoted, _ := json.Marshal(name)
	if want := `{"kind":"storage#object","name":` + string(quoted) + `}`; r.body != want {
		t.Errorf("escaped name: %s, want %s", r.body, want)
	}
}
