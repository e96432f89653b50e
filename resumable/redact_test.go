package resumable

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/api/googleapi"
)

// Every redaction of this package, given a message with no secret in it, or an empty
// secret, returns the message unchanged; given a secret, hides it. (A first rewrite call
// has no token: scrubbing "" once put REDACTED between every character of GCS's answer.)
func TestRedactionLeavesMessagesWithoutSecrets(t *testing.T) {
	const msg = "Bucket is a requester pays bucket but no user project provided."
	for _, tc := range []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"no secrets", nil, msg, msg},
		{"an empty secret", []string{""}, msg, msg},
		{"empty secrets among others", []string{"", "tok123", ""}, msg + " tok123", msg + " REDACTED"},
		{"a secret not in the message", []string{"tok123"}, msg, msg},
		{"an empty message", []string{"", "tok"}, "", ""},
	} {
		if got := scrub(tc.in, tc.secrets); got != tc.want {
			t.Errorf("scrub %s: %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:1/storage/v1/b/x/o?prefix=a", "http://127.0.0.1:1/storage/v1/b/x/o?prefix=a"},
		{"http://127.0.0.1:1/upload?upload_id=&name=y", "http://127.0.0.1:1/upload?name=y&upload_id=REDACTED"},
		{"http://127.0.0.1:1/upload?upload_id=AbC&name=y", "http://127.0.0.1:1/upload?name=y&upload_id=REDACTED"},
	} {
		if got := redactURI(tc.in); got != tc.want {
			t.Errorf("redactURI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, u := range []string{"http://h/o?rewriteToken=", "http://h/o?upload_id=&key=", "http://h/o"} {
		if got := secrets(u); len(got) != 0 {
			t.Errorf("secrets(%q) = %q, want none", u, got)
		}
	}
	plain := errors.New(msg)
	if got := redactErr(plain); got != plain {
		t.Errorf("redactErr(%v) = %v, want it unchanged", plain, got)
	}
	uerr := &url.Error{Op: "Post", URL: "http://h/b/x/o?prefix=a", Err: io.ErrUnexpectedEOF}
	if got, want := redactErr(uerr).Error(), uerr.Error(); got != want {
		t.Errorf("redactErr: %q, want %q", got, want)
	}
}

// statusError scrubs GCS's answer: with no token (a first rewrite call), the message, body
// and every error item come out as GCS wrote them.
func TestStatusErrorWithEmptySecret(t *testing.T) {
	const msg = "Bucket is a requester pays bucket but no user project provided."
	body := `{"error":{"code":400,"message":"` + msg + `","errors":[{"message":"` + msg + `","domain":"global","reason":"required"}]}}`
	for _, secret := range [][]string{nil, {""}, {"", "unrelated"}} {
		resp := &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: &http.Request{Method: "POST", URL: &url.URL{Path: "/x"}}}
		var gerr *googleapi.Error
		if !errors.As(statusError(resp, secret, false), &gerr) {
			t.Fatalf("statusError with secrets %q: not a *googleapi.Error", secret)
		}
		if gerr.Message != msg || gerr.Body != body || len(gerr.Errors) != 1 || gerr.Errors[0].Message != msg {
			t.Errorf("statusError with secrets %q: message %q, body %q, errors %+v", secret, gerr.Message, gerr.Body, gerr.Errors)
		}
	}
}
