package eventlog

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
)

func TestRetryLine(t *testing.T) {
	ge := &googleapi.Error{Code: 503, Message: "backend error"}
	if got, want := RetryLine("a.txt", 3, 12, 4200*time.Millisecond, fmt.Errorf("chunk: %w", ge)), "a.txt: retry 3/12 in 4.2s: 503 Service Unavailable"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	h := http.Header{}
	h.Set("Retry-After", "7")
	tooMany := &googleapi.Error{Code: 429, Header: h}
	if got, want := RetryLine("b", 1, 0, 7*time.Second, tooMany), "b: retry 1 in 7s: 429 Too Many Requests (Retry-After: 7)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	reset := fmt.Errorf("put: %w", syscall.ECONNRESET)
	if got, want := RetryLine("c", 2, 5, 850*time.Millisecond, reset), "c: retry 2/5 in 850ms: put: connection reset by peer"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRedact(t *testing.T) {
	in := `PUT http://127.0.0.1:1/upload/storage/v1/b/x/o?uploadType=resumable&upload_id=AbC-123_x&name=y; Authorization: Bearer ya29.a0AfH6SM"`
	got := Redact(in)
	for _, secret := range []string{"AbC-123_x", "ya29.a0AfH6SM"} {
		if strings.Contains(got, secret) {
			t.Errorf("redact left %q in %q", secret, got)
		}
	}
	if !strings.Contains(got, "upload_id=REDACTED&name=y") || !strings.Contains(got, "Bearer REDACTED") {
		t.Errorf("Redact(%q) = %q", in, got)
	}
}

// A message with no secret in it, or an empty one, comes out of redact unchanged.
func TestRedactLeavesMessagesWithoutSecrets(t *testing.T) {
	for _, in := range []string{
		"",
		"googleapi: Error 400: Bucket is a requester pays bucket but no user project provided., required",
		"PUT http://127.0.0.1:1/upload?uploadType=resumable&upload_id=&name=y",
		"Authorization: Bearer ",
		"rewriteToken= REDACTED upload_id",
	} {
		if got := Redact(in); got != in {
			t.Errorf("Redact(%q) = %q, want it unchanged", in, got)
		}
	}
}

func TestEventLog(t *testing.T) {
	name := filepath.Join(t.TempDir(), "events.ndjson")
	l, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	l.Now = func() time.Time { return time.Date(2024, 5, 1, 2, 3, 4, 0, time.UTC) }
	l.Write("retry", map[string]any{"object": "x", "attempt": 2, "cause": "PUT ...?upload_id=SECRET: 503"})
	l.Write("done", nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2024-05-01T02:03:04Z","event":"retry","attempt":2,"cause":"PUT ...?upload_id=REDACTED: 503","object":"x"}` + "\n" +
		`{"time":"2024-05-01T02:03:04Z","event":"done"}` + "\n"
	if string(b) != want {
		t.Errorf("log:\n%s\nwant:\n%s", b, want)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600", fi.Mode().Perm())
	}
	var nilLog *Log
	nilLog.Write("x", nil) // a nil log is "no --log": must not panic
}
