package fakegcs_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// invalidReply checks that r is GCS's 400 invalid, naming what it refused.
func invalidReply(t *testing.T, what string, r reply, mention string) {
	t.Helper()
	e, err := parseAPIError(r.body)
	if err != nil || r.status != 400 || e.Error.Code != 400 ||
		len(e.Error.Errors) != 1 || e.Error.Errors[0].Reason != "invalid" {
		t.Errorf("%s: %d %s, want GCS's 400 invalid", what, r.status, r.body)
		return
	}
	if !strings.Contains(e.Error.Message, mention) {
		t.Errorf("%s: message %q does not mention %q", what, e.Error.Message, mention)
	}
}

var badObjectNames = map[string]string{
	".":                            `"." or ".."`,
	"..":                           `"." or ".."`,
	"a\r\nHTTP/1.1 200 OK":         "line feed",
	"a\nb":                         "line feed",
	"nul\x00x":                     "NUL",
	strings.Repeat("x", 1025):      "1024 bytes",
	".well-known/acme-challenge/t": "acme-challenge",
	"bad-\xff-utf8":                "UTF-8",
}

// fakegcs refuses the names GCS refuses, whichever way the name arrives:
// the name= parameter of a media or resumable upload, the JSON metadata of a
// resumable or multipart upload, a compose or copy destination.
func TestInvalidObjectNamesRefused(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	if _, err := srv.PutObject("bkt", "src", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for name, mention := range badObjectNames {
		q := url.QueryEscape(name)
		invalidReply(t, "media "+q, do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name="+q, []byte("data")), mention)
		invalidReply(t, "resumable "+q, do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name="+q, nil), mention)
		invalidReply(t, "copy "+q, do(t, srv, "POST", "/storage/v1/b/bkt/o/src/copyTo/b/bkt/o/"+url.PathEscape(name), nil), mention)
		invalidReply(t, "compose "+q, do(t, srv, "POST", "/storage/v1/b/bkt/o/"+url.PathEscape(name)+"/compose",
			[]byte(`{"sourceObjects":[{"name":"src"}]}`)), mention)
		if _, err := srv.PutObject("bkt", name, []byte("x")); err == nil || !strings.Contains(err.Error(), mention) {
			t.Errorf("PutObject(%q): %v", q, err)
		}
	}
	// Invalid UTF-8 inside JSON metadata: encoding/json would quietly
	// rename the object to U+FFFD; GCS refuses it.
	meta := []byte(`{"name":"bad-` + "\xff" + `-utf8"}`)
	invalidReply(t, "resumable metadata", do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable", meta,
		"Content-Type: application/json"), "UTF-8")
	names, _ := srv.ObjectNames("bkt")
	if len(names) != 1 || names[0] != "src" {
		t.Fatalf("objects after refusals: %q", names)
	}
}

func TestInvalidBucketNamesRefused(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{})
	for name, mention := range map[string]string{
		"b": "3 to 63", "../x": "lowercase", "A B": "lowercase", "-ab": "start and end",
		"192.168.5.4": "IP address", "googbucket": "goog", "my-google-data": "google",
		strings.Repeat("a", 64): "3 to 63", "a..b": "dot-separated",
	} {
		invalidReply(t, "insert "+name, do(t, srv, "POST", "/storage/v1/b", []byte(`{"name":`+strconvQuote(name)+`}`)), mention)
		if err := srv.CreateBucket(name); err == nil {
			t.Errorf("CreateBucket(%q) accepted", name)
		}
	}
	for _, ok := range []string{"bkt", "my_bucket-1", "a.b.c", strings.Repeat("a", 63)} {
		if r := do(t, srv, "POST", "/storage/v1/b", []byte(`{"name":`+strconvQuote(ok)+`}`)); r.status != 200 {
			t.Errorf("insert %q: %d %s", ok, r.status, r.body)
		}
	}
	if _, err := fakegcs.New(fakegcs.Options{Buckets: []string{"b"}}); err == nil || !strings.Contains(err.Error(), "3 to 63") {
		t.Errorf("New with bucket \"b\": %v", err)
	}
}

// LaxNames lets a test plant the hostile names a downloader must survive.
func TestLaxNamesAcceptsHostileNames(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"b"}, LaxNames: true})
	for name := range badObjectNames {
		if _, err := srv.PutObject("b", name, []byte(name)); err != nil {
			t.Errorf("PutObject(%q): %v", name, err)
		}
		got, _, err := srv.Object("b", name)
		if err != nil || string(got) != name {
			t.Errorf("Object(%q) = %q, %v", name, got, err)
		}
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
