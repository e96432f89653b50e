package upload

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
)

// TestNewEndpointForms: the forms of Options.Endpoint New takes for a
// fakegcs (its URL, and the JSON API endpoint a user of the official client
// passes to option.WithEndpoint) all reach the same server, for an upload and
// for the storage client's calls (Stat, List) alike.
func TestNewEndpointForms(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(1000, 1)
	src := writeTemp(t, t.TempDir(), "f", data)
	for _, ep := range []string{srv.URL(), srv.URL() + "/", srv.Endpoint(), strings.TrimSuffix(srv.Endpoint(), "/")} {
		t.Run(ep, func(t *testing.T) {
			c := newClient(t, srv, func(o *Options) { o.Endpoint = ep; o.Retry.MaxAttempts = 2 })
			if _, err := c.UploadFile(context.Background(), src, URL{Bucket: testBucket, Object: "o"}, UploadOptions{}); err != nil {
				t.Fatalf("upload: %v", err)
			}
			a, err := c.Stat(context.Background(), URL{Bucket: testBucket, Object: "o"})
			if err != nil || a.Size != int64(len(data)) {
				t.Fatalf("stat: %v, %+v", err, a)
			}
			n := 0
			for _, err := range c.List(context.Background(), testBucket, "", "") {
				if err != nil {
					t.Fatalf("list: %v", err)
				}
				n++
			}
			if n != 1 {
				t.Fatalf("list: %d objects, want 1", n)
			}
		})
	}
}

// TestNewEndpointRefused: an Endpoint with any other path, or with no
// scheme, is refused by New with ErrBadOption and an error naming the value
// to pass; no request is made.
func TestNewEndpointRefused(t *testing.T) {
	for _, tc := range []struct{ ep, want string }{
		{"http://127.0.0.1:4443/upload/storage/v1/", `upload: bad option: Endpoint "http://127.0.0.1:4443/upload/storage/v1/": want scheme://host[:port] without a path, e.g. "http://127.0.0.1:4443"; for fakegcs use Server.URL()`},
		{"http://127.0.0.1:4443/api", `upload: bad option: Endpoint "http://127.0.0.1:4443/api": want scheme://host[:port] without a path, e.g. "http://127.0.0.1:4443"; for fakegcs use Server.URL()`},
		{"127.0.0.1:4443", `upload: bad option: Endpoint "127.0.0.1:4443" has no scheme: want scheme://host[:port], e.g. "http://127.0.0.1:4443"; for fakegcs use Server.URL()`},
	} {
		for _, field := range []string{"Endpoint", "Auth.Endpoint"} {
			opts := Options{Auth: auth.Options{NoAuth: true}, StateDir: filepath.Join(t.TempDir(), "s")}
			want := tc.want
			if field == "Endpoint" {
				opts.Endpoint = tc.ep
			} else {
				opts.Auth.Endpoint = tc.ep
				want = strings.Replace(want, "Endpoint", "Auth.Endpoint", 1)
			}
			c, err := New(context.Background(), opts)
			if err == nil {
				c.Close()
				t.Errorf("%s %q: New succeeded, want ErrBadOption", field, tc.ep)
				continue
			}
			if !errors.Is(err, ErrBadOption) || err.Error() != want {
				t.Errorf("%s %q:\n got %v\nwant %s", field, tc.ep, err, want)
			}
		}
	}
}
