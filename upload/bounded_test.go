package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// listAll lists bucket and returns the names yielded and the error that ended the listing.
func listAll(c *Client, prefix, delim string) ([]string, error) {
	var names []string
	for a, err := range c.List(context.Background(), testBucket, prefix, delim) {
		if err != nil {
			return names, err
		}
		names = append(names, a.Name+a.Prefix)
	}
	return names, nil
}

func putObjects(t *testing.T, srv *fakegcs.Server, n int) {
	t.Helper()
	for i := range n {
		if _, err := srv.PutObject(testBucket, fmt.Sprintf("o/%05d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
}

// A server that answers every page with the token it was given would make a listing run
// forever: the second request for the same token is refused, before it goes out.
func TestListRepeatedPageTokenEnds(t *testing.T) {
	for _, tc := range []struct {
		name          string
		objects       int
		wantListed    int // yielded before the error
		wantRequests  int
		wantErrSubstr string
	}{
		// Within one page of 1,000: the storage client's pager asks again for the rest.
		{"short pages", 5, 0, 2, "the server gave the same page token twice (after 2 pages)"},
		// Full pages: the token comes back to the listing itself.
		{"full pages", 1001, 1000, 2, "the server gave a page token it had given before (after 2 pages of 1000)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{})
			putObjects(t, srv, tc.objects)
			srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Kind: fakegcs.KindRepeatPageToken, Times: -1})
			c := newClient(t, srv, nil)
			names, err := listAll(c, "", "")
			if !errors.Is(err, ErrListNoProgress) || !strings.Contains(err.Error(), tc.wantErrSubstr) {
				t.Fatalf("listing: %v, want ErrListNoProgress with %q", err, tc.wantErrSubstr)
			}
			if len(names) != tc.wantListed {
				t.Errorf("%d names listed before the error, want %d", len(names), tc.wantListed)
			}
			if n := srv.Count("storage.objects.list"); n != tc.wantRequests {
				t.Errorf("%d list requests, want %d", n, tc.wantRequests)
			}
		})
	}
}

// A server that answers empty pages with ever new tokens: the listing ends after
// maxListRequests requests without a full page.
func TestListEmptyPagesEnd(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	putObjects(t, srv, 3)
	srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Kind: fakegcs.KindEmptyPage, Times: -1})
	c := newClient(t, srv, nil)
	names, err := listAll(c, "", "/")
	want := fmt.Sprintf("%s: %d pages in a row brought fewer than 1000 objects; gcsput stops a listing that makes no progress", ErrListNoProgress, maxListRequests)
	if err == nil || err.Error() != want || len(names) != 0 {
		t.Fatalf("listing: %q (%v listed), want %q", err, names, want)
	}
	if n := srv.Count("storage.objects.list"); n != maxListRequests {
		t.Errorf("%d list requests, want %d", n, maxListRequests)
	}
}

// A fault that fires a few times only is not an error: the listing carries on from the
// tokens it was given and lists everything once.
func TestListSurvivesSomeEmptyPages(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	putObjects(t, srv, 3)
	srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Kind: fakegcs.KindEmptyPage, Times: 5})
	c := newClient(t, srv, nil)
	names, err := listAll(c, "", "")
	if err != nil || strings.Join(names, ",") != "o/00000,o/00001,o/00002" {
		t.Fatalf("listing: %v, %v", names, err)
	}
}

// A metadata or listing answer longer than MaxJSONAnswer is an error naming the bound, read
// no further; object data is not capped, whatever its content type.
func TestJSONAnswersAreBounded(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	big := bytes.Repeat([]byte(`{"a":1}`), (MaxJSONAnswer+(1<<20))/7)
	if _, err := srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: testBucket, Name: "big.json", ContentType: "application/json"}, bytes.NewReader(big)); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		op   string
		call func() error
		path string
	}{
		{"storage.objects.get", func() error { _, err := c.Stat(ctx, URL{Bucket: testBucket, Object: "big.json"}); return err }, "/storage/v1/b/bkt/o/big.json"},
		{"storage.objects.list", func() error { _, err := listAll(c, "", ""); return err }, "/storage/v1/b/bkt/o"},
	} {
		in := srv.Inject(fakegcs.Fault{Op: tc.op, Kind: fakegcs.KindHugeBody, AfterBytes: 100 << 20, Times: -1})
		err := tc.call()
		in.Remove()
		want := "the server's JSON answer is too large: the answer to GET " + tc.path + " is longer than 32 MiB, the most gcsput reads of one JSON answer"
		if !errors.Is(err, ErrAnswerTooLarge) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s with a 100 MiB answer: %v, want ErrAnswerTooLarge with %q", tc.op, err, want)
		}
		if n := in.Fired(); n != 1 {
			t.Errorf("%s: the huge answer was asked for %d times, want 1 (not retried)", tc.op, n)
		}
	}
	var got bytes.Buffer
	if n, err := c.ReadRange(ctx, URL{Bucket: testBucket, Object: "big.json"}, 0, -1, &got); err != nil || n != int64(len(big)) || !bytes.Equal(got.Bytes(), big) {
		t.Errorf("reading a %d-byte JSON object: %d bytes, %v", len(big), n, err)
	}
	if a, err := c.Stat(ctx, URL{Bucket: testBucket, Object: "big.json"}); err != nil || a.Size != int64(len(big)) {
		t.Errorf("stat after the faults: %v, %v", a, err)
	}
}

// cappedBody passes a body of exactly the bound, and fails one byte more.
func TestCappedBody(t *testing.T) {
	for _, tc := range []struct {
		n       int
		wantErr bool
	}{{0, false}, {10, false}, {11, true}, {1000, true}} {
		b := &cappedBody{ReadCloser: io.NopCloser(bytes.NewReader(make([]byte, tc.n))), left: 10, what: "GET /x"}
		got, err := io.ReadAll(b)
		if tc.wantErr != errors.Is(err, ErrAnswerTooLarge) || len(got) > 10 || (!tc.wantErr && len(got) != tc.n) {
			t.Errorf("%d bytes under a bound of 10: read %d, %v", tc.n, len(got), err)
		}
	}
}
