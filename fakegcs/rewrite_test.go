package fakegcs_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"

	"github.com/gcsput/gcsput/fakegcs"
)

// rewriteReply is the part of a RewriteResponse the tests read.
type rewriteReply struct {
	Done                bool   `json:"done"`
	ObjectSize          int64  `json:"objectSize,string"`
	TotalBytesRewritten int64  `json:"totalBytesRewritten,string"`
	RewriteToken        string `json:"rewriteToken"`
	Resource            *struct {
		Name   string `json:"name"`
		Crc32c string `json:"crc32c"`
		Md5    string `json:"md5Hash"`
	} `json:"resource"`
}

// rewriteCall sends one rewrite of bkt/src to dst/out with query q and
// returns the status and the decoded reply.
func rewriteCall(t *testing.T, srv *fakegcs.Server, q string, body []byte) (int, rewriteReply, string) {
	t.Helper()
	r := do(t, srv, "POST", "/storage/v1/b/bkt/o/src/rewriteTo/b/dst/o/out?"+q, body)
	var rr rewriteReply
	if r.status == 200 {
		if err := json.Unmarshal([]byte(r.body), &rr); err != nil {
			t.Fatalf("rewrite reply %q: %v", r.body, err)
		}
	}
	return r.status, rr, r.body
}

// A rewrite of 5 MiB + 1 at 2 MiB a call takes three calls: two answer a
// token (the same one, as GCS's) and the bytes so far, the third the
// destination, with the source's bytes, CRC32C and MD5. The stats count
// each call's bytes.
func TestRewriteManyCalls(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt", "dst"}})
	data := randBytes(5<<20+1, 7)
	src, _ := srv.PutObject("bkt", "src", data)
	q := fmt.Sprintf("maxBytesRewrittenPerCall=%d&ifSourceGenerationMatch=%d", 2<<20, src.Generation)
	var tok string
	for i, want := range []int64{2 << 20, 4 << 20} {
		status, rr, body := rewriteCall(t, srv, q+tokenParam(tok), nil)
		if status != 200 || rr.Done || rr.TotalBytesRewritten != want || rr.ObjectSize != int64(len(data)) || rr.RewriteToken == "" || (tok != "" && rr.RewriteToken != tok) {
			t.Fatalf("call %d: %d %s", i+1, status, body)
		}
		tok = rr.RewriteToken
		if _, err := srv.Attrs("dst", "out"); err == nil {
			t.Fatalf("call %d: the destination exists before the rewrite is done", i+1)
		}
	}
	status, rr, body := rewriteCall(t, srv, q+tokenParam(tok), nil)
	if status != 200 || !rr.Done || rr.TotalBytesRewritten != int64(len(data)) || rr.RewriteToken != "" || rr.Resource == nil {
		t.Fatalf("last call: %d %s", status, body)
	}
	got, attrs, err := srv.Object("dst", "out")
	if err != nil || !bytes.Equal(got, data) || attrs.CRC32C != src.CRC32C || !bytes.Equal(attrs.MD5, src.MD5) || rr.Resource.Crc32c != crcB64(data) {
		t.Fatalf("destination: %d bytes, %+v, %v", len(got), attrs, err)
	}
	st := srv.Stats()
	if st.BytesRewritten != int64(len(data)) || st.Requests["storage.objects.rewrite"] != 3 {
		t.Errorf("stats: %d bytes rewritten in %d calls", st.BytesRewritten, st.Requests["storage.objects.rewrite"])
	}
	var perCall []int64
	for _, r := range srv.Log() {
		perCall = append(perCall, r.Rewritten)
	}
	if fmt.Sprint(perCall) != fmt.Sprint([]int64{2 << 20, 2 << 20, 1<<20 + 1}) {
		t.Errorf("bytes per call: %v", perCall)
	}
	// The finished rewrite's token answers its result again: a client whose
	// last answer was lost retries with it.
	if status, rr, body := rewriteCall(t, srv, tokenParam(tok)[1:], nil); status != 200 || !rr.Done || rr.Resource == nil || rr.Resource.Crc32c != crcB64(data) {
		t.Errorf("the finished rewrite's token again: %d %s", status, body)
	}
}

func tokenParam(tok string) string {
	if tok == "" {
		return ""
	}
	return "&rewriteToken=" + tok
}

// The token names the rewrite, whose progress is the server's: a client
// that sends it again after losing an answer (or a process that saved it
// and died) continues from where the server is, and the stats count only
// what is left.
func TestRewriteTokenContinuesFromServer(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt", "dst"}, RewriteBytesPerCall: 1 << 20})
	data := randBytes(3<<20, 8)
	srv.PutObject("bkt", "src", data)
	_, first, _ := rewriteCall(t, srv, "", nil)
	if _, second, _ := rewriteCall(t, srv, tokenParam(first.RewriteToken)[1:], nil); second.TotalBytesRewritten != 2<<20 || second.RewriteToken != first.RewriteToken {
		t.Fatalf("second call: %+v", second)
	}
	srv.ResetStats()
	status, last, body := rewriteCall(t, srv, tokenParam(first.RewriteToken)[1:], nil)
	if status != 200 || !last.Done || srv.Stats().BytesRewritten != 1<<20 {
		t.Fatalf("the token again: %d %s, %d rewritten", status, body, srv.Stats().BytesRewritten)
	}
	if got, _, _ := srv.Object("dst", "out"); !bytes.Equal(got, data) {
		t.Errorf("destination: %d bytes", len(got))
	}
}

// The token binds the source, the destination and the first call's
// parameters: a call that repeats one with another value, names another
// object or sends another body gets GCS's 400; one that omits them goes on.
func TestRewriteTokenBinds(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt", "dst"}})
	src, _ := srv.PutObject("bkt", "src", randBytes(4<<20, 9))
	srv.PutObject("bkt", "other", []byte("x"))
	gen := src.Generation
	q := fmt.Sprintf("maxBytesRewrittenPerCall=%d&ifSourceGenerationMatch=%d&ifGenerationMatch=0", 1<<20, gen)
	body := []byte(`{"contentType":"text/plain","metadata":{"k":"v"}}`)
	_, first, _ := rewriteCall(t, srv, q, body)
	tok := tokenParam(first.RewriteToken)
	for name, path := range map[string]string{
		"maxBytesRewrittenPerCall": fmt.Sprintf("src/rewriteTo/b/dst/o/out?maxBytesRewrittenPerCall=%d%s", 2<<20, tok),
		"ifSourceGenerationMatch":  fmt.Sprintf("src/rewriteTo/b/dst/o/out?ifSourceGenerationMatch=%d%s", gen+1, tok),
		"ifGenerationMatch":        "src/rewriteTo/b/dst/o/out?ifGenerationMatch=5" + tok,
		"source":                   "other/rewriteTo/b/dst/o/out?x=1" + tok,
		"destination":              "src/rewriteTo/b/dst/o/elsewhere?x=1" + tok,
		"unknown token":            "src/rewriteTo/b/dst/o/out?rewriteToken=rwnope",
	} {
		r := do(t, srv, "POST", "/storage/v1/b/bkt/o/"+path, nil)
		if r.status != 400 || !strings.Contains(r.body, "rewrite token is invalid") {
			t.Errorf("%s changed: %d %s", name, r.status, r.body)
		}
	}
	if status, _, b := rewriteCall(t, srv, tok[1:], []byte(`{"contentType":"text/html"}`)); status != 400 {
		t.Errorf("another body: %d %s", status, b)
	}
	// Omitted parameters and body: the first call's hold, metadata included.
	for tok != "" {
		status, rr, b := rewriteCall(t, srv, tok[1:], nil)
		if status != 200 {
			t.Fatalf("continuing without the parameters: %d %s", status, b)
		}
		tok = tokenParam(rr.RewriteToken)
	}
	if a, err := srv.Attrs("dst", "out"); err != nil || a.ContentType != "text/plain" || a.Metadata["k"] != "v" || a.CRC32C != src.CRC32C {
		t.Errorf("destination: %+v, %v", a, err)
	}
}

// A source overwritten between calls fails the next call: 412 when it pins
// the generation (ifSourceGenerationMatch), 404 for the generation gone
// otherwise; nothing is written.
func TestRewriteSourceChanged(t *testing.T) {
	for _, pin := range []bool{true, false} {
		srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt", "dst"}, RewriteBytesPerCall: 1 << 20})
		src, _ := srv.PutObject("bkt", "src", randBytes(3<<20, 10))
		q := ""
		if pin {
			q = fmt.Sprintf("ifSourceGenerationMatch=%d", src.Generation)
		}
		_, first, _ := rewriteCall(t, srv, q, nil)
		srv.PutObject("bkt", "src", []byte("new"))
		want := 404
		if pin {
			want = 412
		}
		if status, _, body := rewriteCall(t, srv, strings.TrimPrefix(q+tokenParam(first.RewriteToken), "&"), nil); status != want {
			t.Errorf("pinned %v: %d %s, want %d", pin, status, body, want)
		}
		if _, err := srv.Attrs("dst", "out"); err == nil {
			t.Errorf("pinned %v: a destination was written", pin)
		}
	}
}

// maxBytesRewrittenPerCall must be a positive multiple of 1 MiB; the
// destination's preconditions are checked at the first call and at the
// last; a source precondition that fails is 412.
func TestRewriteRefusals(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt", "dst"}})
	src, _ := srv.PutObject("bkt", "src", randBytes(2<<20, 11))
	for _, v := range []string{"1000", "0", "-1048576", "lots"} {
		if status, _, body := rewriteCall(t, srv, "maxBytesRewrittenPerCall="+v, nil); status != 400 || !strings.Contains(body, "multiple of 1048576") {
			t.Errorf("maxBytesRewrittenPerCall=%s: %d %s", v, status, body)
		}
	}
	if status, _, _ := rewriteCall(t, srv, fmt.Sprintf("ifSourceGenerationMatch=%d", src.Generation+1), nil); status != 412 {
		t.Errorf("ifSourceGenerationMatch of another generation: %d", status)
	}
	srv.PutObject("dst", "out", []byte("here"))
	if status, _, _ := rewriteCall(t, srv, "maxBytesRewrittenPerCall=1048576&ifGenerationMatch=0", nil); status != 412 {
		t.Errorf("ifGenerationMatch=0 on an existing destination: %d", status)
	}
	if srv.Stats().BytesRewritten != 0 {
		t.Errorf("refused calls counted %d bytes", srv.Stats().BytesRewritten)
	}
	if _, err := fakegcs.New(fakegcs.Options{RewriteBytesPerCall: 1000}); err == nil {
		t.Error("RewriteBytesPerCall 1000 accepted")
	}
}

// Injected faults apply to rewrite calls: a 503 on the second is retried
// by the official client's Copier, which follows the tokens to the end;
// copyTo stays one call whatever the server's per-call limit.
func TestRewriteOfficialCopier(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt", "dst"}, RewriteBytesPerCall: 1 << 20,
		Faults: []fakegcs.Fault{{Op: "storage.objects.rewrite", Skip: 1, Kind: fakegcs.KindStatus, Status: 503}}})
	data := randBytes(3<<20+5, 12)
	srv.PutObject("bkt", "src", data)
	c := newClient(t, srv)
	c.SetRetry(storage.WithBackoff(gax.Backoff{Initial: time.Millisecond, Max: time.Millisecond}))
	ctx := context.Background()
	cp := c.Bucket("dst").Object("out").If(storage.Conditions{DoesNotExist: true}).CopierFrom(c.Bucket("bkt").Object("src"))
	var progress []uint64
	cp.ProgressFunc = func(done, _ uint64) { progress = append(progress, done) }
	attrs, err := cp.Run(ctx)
	if err != nil || attrs.Size != int64(len(data)) {
		t.Fatalf("Copier: %+v, %v", attrs, err)
	}
	got, _, _ := srv.Object("dst", "out")
	if !bytes.Equal(got, data) || fmt.Sprint(progress) != fmt.Sprint([]uint64{1 << 20, 2 << 20, 3 << 20, 3<<20 + 5}) {
		t.Errorf("%d bytes, progress %v", len(got), progress)
	}
	if st := srv.Stats(); st.Requests["storage.objects.rewrite"] != 5 || st.Faults[fakegcs.KindStatus] != 1 {
		t.Errorf("stats: %+v", st)
	}
	if r := do(t, srv, "POST", "/storage/v1/b/bkt/o/src/copyTo/b/dst/o/copy", nil); r.status != 200 || !strings.Contains(r.body, `"name":"copy"`) {
		t.Errorf("copyTo: %d %s", r.status, r.body)
	}
}

// keyHdr is the X-Goog-Encryption-* headers of key, for do.
func keyHdr(key []byte) []string {
	return []string{"X-Goog-Encryption-Algorithm: AES256",
		"X-Goog-Encryption-Key: " + base64.StdEncoding.EncodeToString(key),
		"X-Goog-Encryption-Key-Sha256: " + keySHA(key)}
}

// The token binds the destination's encryption too: a call that continues
// a rewrite under a customer-supplied key without it, with another key, or
// with a KMS key instead gets GCS's 400, and the destination is written
// under the first call's key; a rewrite under a KMS key refuses a call with
// another KMS key or a CSEK, and one that omits destinationKmsKeyName
// still writes under the first call's KMS key (the token carries it).
func TestRewriteTokenBindsDestinationKey(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt", "dst"}, RewriteBytesPerCall: 1 << 20})
	srv.PutObject("bkt", "src", randBytes(3<<20, 13))
	const kms, kms2 = "projects/p/locations/l/keyRings/r/cryptoKeys/k", "projects/p/locations/l/keyRings/r/cryptoKeys/k2"
	path := "/storage/v1/b/bkt/o/src/rewriteTo/b/dst/o/out?"
	first := do(t, srv, "POST", path+"x=1", nil, keyHdr(csekKey)...)
	var rr rewriteReply
	if err := json.Unmarshal([]byte(first.body), &rr); err != nil || first.status != 200 || rr.RewriteToken == "" {
		t.Fatalf("first call under a CSEK: %d %s", first.status, first.body)
	}
	tok := "rewriteToken=" + rr.RewriteToken
	for name, call := range map[string]reply{
		"no key":      do(t, srv, "POST", path+tok, nil),
		"another key": do(t, srv, "POST", path+tok, nil, keyHdr(csekOther)...),
		"a KMS key":   do(t, srv, "POST", path+tok+"&destinationKmsKeyName="+kms, nil),
	} {
		if call.status != 400 || !strings.Contains(call.body, "rewrite token is invalid") {
			t.Errorf("continued with %s: %d %s", name, call.status, call.body)
		}
	}
	for done := false; !done; {
		r := do(t, srv, "POST", path+tok, nil, keyHdr(csekKey)...)
		if err := json.Unmarshal([]byte(r.body), &rr); err != nil || r.status != 200 {
			t.Fatalf("continued with the key: %d %s", r.status, r.body)
		}
		done = rr.Done
	}
	if a, err := srv.Attrs("dst", "out"); err != nil || a.CustomerKeySHA256 != keySHA(csekKey) || a.KMSKeyName != "" {
		t.Fatalf("destination: %+v, %v; want the first call's key", a, err)
	}

	first = do(t, srv, "POST", strings.Replace(path, "/out?", "/kms?", 1)+"destinationKmsKeyName="+kms, nil)
	if err := json.Unmarshal([]byte(first.body), &rr); err != nil || first.status != 200 || rr.RewriteToken == "" {
		t.Fatalf("first call under a KMS key: %d %s", first.status, first.body)
	}
	path, tok = strings.Replace(path, "/out?", "/kms?", 1), "rewriteToken="+rr.RewriteToken
	for name, call := range map[string]reply{
		"another KMS key": do(t, srv, "POST", path+tok+"&destinationKmsKeyName="+kms2, nil),
		"a CSEK":          do(t, srv, "POST", path+tok, nil, keyHdr(csekKey)...),
	} {
		if call.status != 400 || !strings.Contains(call.body, "rewrite token is invalid") {
			t.Errorf("continued with %s: %d %s", name, call.status, call.body)
		}
	}
	for done := false; !done; {
		r := do(t, srv, "POST", path+tok, nil)
		if err := json.Unmarshal([]byte(r.body), &rr); err != nil || r.status != 200 {
			t.Fatalf("continued without destinationKmsKeyName: %d %s", r.status, r.body)
		}
		done = rr.Done
	}
	if a, err := srv.Attrs("dst", "kms"); err != nil || a.KMSKeyName != kms || a.CustomerKeySHA256 != "" {
		t.Fatalf("destination: %+v, %v; want the first call's KMS key %s", a, err, kms)
	}
}
