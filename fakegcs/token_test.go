package fakegcs_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/gcsput/gcsput/fakegcs"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
)

// TestToken: with Options.Token, a request without the bearer token gets
// GCS's 401 and nothing is stored; the official client carrying the token
// through an oauth2.TokenSource uploads in several resumable chunks (the
// session requests are exempt, as on GCS) and reads the object back.
func TestToken(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Token: "sekrit"})

	r := do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=anon", []byte("x"))
	if r.status != 401 || !strings.Contains(r.body, `"reason":"required"`) {
		t.Fatalf("anonymous insert: %d %s; want 401 required", r.status, r.body)
	}
	if r := do(t, srv, "GET", "/storage/v1/b/bkt/o", nil, "Authorization: Bearer wrong"); r.status != 401 {
		t.Fatalf("wrong token: %d; want 401", r.status)
	}
	if r := do(t, srv, "GET", "/b/bkt/o/anon", nil); r.status != 401 {
		t.Fatalf("anonymous XML read: %d; want 401", r.status)
	}
	if _, _, err := srv.Object("bkt", "anon"); err == nil {
		t.Fatal("an unauthenticated insert stored an object")
	}

	// The session URI is the credential: its requests need no token.
	loc := initiate(t, srv, "viaSession", "Authorization: Bearer sekrit")
	if r := do(t, srv, "PUT", strings.TrimPrefix(loc, srv.URL()), []byte("abc"), "Content-Range: bytes 0-2/3"); r.status != 200 {
		t.Fatalf("session PUT without a token: %d %s; want 200", r.status, r.body)
	}

	ctx := context.Background()
	tokens := 0
	ts := oauth2.ReuseTokenSource(nil, tokenFunc(func() (*oauth2.Token, error) {
		tokens++
		return &oauth2.Token{AccessToken: "sekrit", TokenType: "Bearer"}, nil
	}))
	c, err := storage.NewClient(ctx, option.WithEndpoint(srv.Endpoint()), option.WithTokenSource(ts))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data := make([]byte, 600<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	w := c.Bucket("bkt").Object("o").NewWriter(ctx)
	w.ChunkSize = 256 << 10
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := c.Bucket("bkt").Object("o").NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rd)
	rd.Close()
	if err != nil || string(got) != string(data) {
		t.Fatalf("read back %d bytes (%v); want %d", len(got), err, len(data))
	}
	if tokens != 1 {
		t.Errorf("token source asked %d times; want 1 (the token is reused)", tokens)
	}
	if n := srv.Stats().Requests["storage.objects.insert"]; n < 3 {
		t.Errorf("%d insert requests; want the initiation and at least 2 chunks", n)
	}

	anon, err := storage.NewClient(ctx, option.WithEndpoint(srv.Endpoint()), option.WithoutAuthentication(),
		option.WithHTTPClient(&http.Client{}))
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	_, err = anon.Bucket("bkt").Object("o").Attrs(ctx)
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 401 {
		t.Fatalf("anonymous Attrs: %v; want a 401 googleapi.Error", err)
	}
}

type tokenFunc func() (*oauth2.Token, error)

func (f tokenFunc) Token() (*oauth2.Token, error) { return f() }

// TestSetToken: a rotated token is refused from the next request on, on a
// session too when the request carries it (GCS refuses a credential it
// cannot validate, even where none is needed), while a session request
// with no credentials still passes; the new token is accepted everywhere.
func TestSetToken(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Token: "old"})
	loc := strings.TrimPrefix(initiate(t, srv, "o", "Authorization: Bearer old"), srv.URL())
	srv.SetToken("new")
	if r := do(t, srv, "GET", "/storage/v1/b/bkt/o", nil, "Authorization: Bearer old"); r.status != 401 {
		t.Fatalf("list with the rotated token: %d; want 401", r.status)
	}
	if r := do(t, srv, "PUT", loc, []byte("abcd"), "Content-Range: bytes 0-3/4", "Authorization: Bearer old"); r.status != 401 {
		t.Fatalf("chunk with the rotated token: %d %s; want 401", r.status, r.body)
	}
	if r := do(t, srv, "PUT", loc, nil, "Content-Range: bytes */*"); r.status != 308 {
		t.Fatalf("status query with no credentials: %d %s; want 308", r.status, r.body)
	}
	if r := do(t, srv, "PUT", loc, []byte("abcd"), "Content-Range: bytes 0-3/4", "Authorization: Bearer new"); r.status != 200 {
		t.Fatalf("final chunk with the new token: %d %s; want 200", r.status, r.body)
	}
	if got, _, err := srv.Object("bkt", "o"); err != nil || string(got) != "abcd" {
		t.Fatalf("object %q (%v); want abcd: the refused chunk must not count", got, err)
	}
}
