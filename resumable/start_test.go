package resumable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	storage "google.golang.org/api/storage/v1"
)

func TestStartRequest(t *testing.T) {
	loc := http.Header{"Location": {"http://127.0.0.1:1/upload/storage/v1/b/bk/o?uploadType=resumable&upload_id=SECRETID42"}}
	sc := newScript(t,
		step{want: "POST start", status: 503},
		step{want: "POST start", status: 200, hdr: loc})
	c, clk, events := testClient(t, sc, kib256)
	spec := ObjectSpec{Bucket: "bk", Name: "a/b c.txt", Size: 1234, ContentType: "text/plain",
		CacheControl: "no-cache", ContentDisposition: "attachment", ContentEncoding: "gzip", ContentLanguage: "en",
		Metadata: map[string]string{"k": "v"}, StorageClass: "NEARLINE", KMSKeyName: "projects/p/keys/k", DoesNotExist: true}
	s, err := c.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if s.URI != loc.Get("Location") || s.Size != 1234 || s.ChunkSize != kib256 || s.Bucket != "bk" || s.Object != "a/b c.txt" || !s.fresh {
		t.Fatalf("session %#v", s)
	}
	if len(clk.Sleeps()) != 1 || len(*events) != 2 || (*events)[0].Kind != EventRetry || (*events)[1].Kind != EventStarted {
		t.Fatalf("waits %v, events %v", clk.Sleeps(), *events)
	}
	req := sc.got[1]
	q, _ := url.ParseQuery(req.query)
	if q.Get("uploadType") != "resumable" || q.Get("name") != "a/b c.txt" || q.Get("ifGenerationMatch") != "0" || q.Get("kmsKeyName") != "projects/p/keys/k" {
		t.Errorf("query %q", req.query)
	}
	if req.header.Get("X-Upload-Content-Length") != "1234" || req.header.Get("X-Upload-Content-Type") != "text/plain" ||
		!strings.HasPrefix(req.header.Get("Content-Type"), "application/json") {
		t.Errorf("headers %v", req.header)
	}
	var obj storage.Object
	if err := json.Unmarshal(req.data, &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Name != spec.Name || obj.ContentType != "text/plain" || obj.CacheControl != "no-cache" || obj.ContentDisposition != "attachment" ||
		obj.ContentEncoding != "gzip" || obj.ContentLanguage != "en" || obj.Metadata["k"] != "v" || obj.StorageClass != "NEARLINE" || obj.KmsKeyName != "" {
		t.Errorf("initiation body %s", req.data)
	}
}

func TestStartPreconditionsAndErrors(t *testing.T) {
	sc := newScript(t,
		step{want: "POST start", status: 412, body: errJSON(412, "At least one of the pre-conditions you specified did not hold.")},
		step{want: "POST start", status: 200},
		step{want: "POST start", status: 200, hdr: http.Header{"Location": {"http://127.0.0.1:1/x"}}})
	c, _, _ := testClient(t, sc, kib256)
	_, err := c.Start(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: -1, GenerationMatch: 42, MetagenerationMatch: 3})
	if !errors.Is(err, ErrPreconditionFailed) || !strings.Contains(err.Error(), "pre-conditions you specified") {
		t.Fatalf("412: %v", err)
	}
	q, _ := url.ParseQuery(sc.got[0].query)
	if q.Get("ifGenerationMatch") != "42" || q.Get("ifMetagenerationMatch") != "3" || sc.got[0].header.Get("X-Upload-Content-Length") != "" {
		t.Errorf("query %q, headers %v", sc.got[0].query, sc.got[0].header)
	}
	if _, err := c.Start(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o"}); err == nil || !strings.Contains(err.Error(), "no valid Location") {
		t.Fatalf("missing Location: %v", err)
	}
	s, err := c.Start(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o"})
	if err != nil || s.URI != "http://127.0.0.1:1/x" || s.Size != 0 {
		t.Fatalf("%v %v", s, err)
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t, kib256)
	data := testData(3 * kib256)
	s, err := e.c.Start(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.Cancel(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if ss, _ := e.srv.LastSession("bkt", "o"); ss.State != "cancelled" {
		t.Fatalf("session state %q", ss.State)
	}
	// Cancelling again (a retried DELETE) succeeds; uploading does not.
	if err := e.c.Cancel(context.Background(), s); err != nil {
		t.Fatalf("second cancel: %v", err)
	}
	_, err = e.c.Upload(context.Background(), s, bytes.NewReader(data))
	if !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("upload to a cancelled session: %v", err)
	}
	checkRedacted(t, e.events, err)

	sc := newScript(t, step{want: "DELETE", status: 403, body: errJSON(403, "denied")})
	c, _, _ := testClient(t, sc, kib256)
	if err := c.Cancel(context.Background(), testSession(1, kib256)); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("403 cancel: %v", err)
	}
}
