package fakegcs_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/gcsput/gcsput/fakegcs"
	"google.golang.org/api/iterator"
)

// TestListFields: a listing's fields parameter keeps what it names, with
// nested selectors and "*", as GCS does: fields=nextPageToken is the token
// alone, items(name,size) those two members of each item.
func TestListFields(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	for _, n := range []string{"a", "d/x", "é"} {
		if _, err := srv.PutObject("bkt", n, []byte("hey")); err != nil {
			t.Fatal(err)
		}
	}
	list := "/storage/v1/b/bkt/o?maxResults=2&delimiter=/&"
	token := fakegcsToken(t, srv)
	for _, c := range []struct{ fields, want string }{
		{"nextPageToken", `{"nextPageToken":"` + token + `"}`},
		{"items(name,size)", `{"items":[{"name":"a","size":"3"}]}`},
		{"items/name,prefixes", `{"prefixes":["d/"],"items":[{"name":"a"}]}`},
		{"kind,items(name),items(bucket)", `{"kind":"storage#objects","items":[{"name":"a","bucket":"bkt"}]}`},
		{"items,items(name)", "items"}, // the whole of items wins over a part
		{"*", "*"},
		{"prefixes,items/metadata", `{"prefixes":["d/"],"items":[{}]}`},
		{"items(owner(entity),name)", `{"items":[{"name":"a"}]}`},
		{"items/customerEncryption/keySha256", `{"items":[{}]}`},
		// gcloud storage rsync's selection: metadata keys with "-".
		{"items/name,items/metadata/goog-reserved-file-mtime,nextPageToken", `{"nextPageToken":"` + token + `","items":[{"name":"a"}]}`},
	} {
		r := do(t, srv, "GET", list+"fields="+url.QueryEscape(c.fields), nil)
		if r.status != 200 {
			t.Fatalf("fields=%s: %d %s", c.fields, r.status, r.body)
		}
		if c.want == "items" || c.want == "*" { // whole items; "*" everything else too
			if !strings.HasPrefix(r.body, `{"`+map[string]string{"items": "items", "*": "kind"}[c.want]) ||
				!strings.Contains(r.body, `"selfLink"`) || strings.Contains(r.body, `"nextPageToken"`) != (c.want == "*") {
				t.Errorf("fields=%s: %s, want whole items", c.fields, r.body)
			}
			continue
		}
		if r.body != c.want {
			t.Errorf("fields=%s:\n got %s\nwant %s", c.fields, r.body, c.want)
		}
	}
	// "*(name)" applies to every member that has members: items.
	r := do(t, srv, "GET", list+"fields="+url.QueryEscape("*(name)"), nil)
	if want := `{"kind":"storage#objects","nextPageToken":"` + token + `","prefixes":["d/"],"items":[{"name":"a"}]}`; r.body != want {
		t.Errorf("fields=*(name):\n got %s\nwant %s", r.body, want)
	}
}

// fakegcsToken is the token of the first page of TestListFields' listing.
func fakegcsToken(t *testing.T, srv *fakegcs.Server) string {
	r := do(t, srv, "GET", "/storage/v1/b/bkt/o?maxResults=2&delimiter=/&fields=nextPageToken", nil)
	tok, ok := strings.CutPrefix(r.body, `{"nextPageToken":"`)
	tok, ok2 := strings.CutSuffix(tok, `"}`)
	if !ok || !ok2 || tok == "" {
		t.Fatalf("first page: %s", r.body)
	}
	return tok
}

// TestInvalidFields: a fields expression that is malformed, names a member
// the resource does not define, or selects inside a plain value is GCS's
// 400 "Invalid field selection", and the request does nothing.
func TestInvalidFields(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	if _, err := srv.PutObject("bkt", "o", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, fields, bad string }{
		{"/storage/v1/b/bkt/o", "nosuch", "nosuch"},
		{"/storage/v1/b/bkt/o", "items(nosuch)", "items/nosuch"},
		{"/storage/v1/b/bkt/o", "items(name", "items(name"},
		{"/storage/v1/b/bkt/o", "items)", ")"},
		{"/storage/v1/b/bkt/o", "items,,kind", ",kind"},
		{"/storage/v1/b/bkt/o", "items/name/x", "items/name"},
		{"/storage/v1/b/bkt/o", "kind(x)", "kind"},
		{"/storage/v1/b/bkt/o", "items name", "items name"},
		{"/storage/v1/b/bkt/o", "items/**", "*"},
		{"/storage/v1/b/bkt/o/o", "items", "items"},
		{"/storage/v1/b/bkt/o/o", "size(x)", "size"},
	} {
		r := do(t, srv, "GET", c.path+"?fields="+url.QueryEscape(c.fields), nil)
		want := fmt.Sprintf("Invalid field selection %s", c.bad)
		if r.status != 400 || !strings.Contains(r.body, want) || !strings.Contains(r.body, `"invalidParameter"`) {
			t.Errorf("GET %s fields=%s: %d %s, want 400 %q", c.path, c.fields, r.status, r.body, want)
		}
	}
	r := do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=new&fields=generation,nosuch", []byte("x"))
	if r.status != 400 || !strings.Contains(r.body, "Invalid field selection nosuch") {
		t.Fatalf("insert with fields=generation,nosuch: %d %s", r.status, r.body)
	}
	if names, _ := srv.ObjectNames("bkt"); len(names) != 1 {
		t.Fatalf("an insert refused for its fields stored an object: %q", names)
	}
}

// TestListAttrSelectionWithOfficialClient: the official Go client's
// Query.SetAttrSelection sends fields (items(name,size,…),prefixes,
// nextPageToken); fakegcs answers with those members alone, and the client
// pages through a listing with them.
func TestListAttrSelectionWithOfficialClient(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	var want []string
	for i := range 25 {
		n := fmt.Sprintf("d%d/o-%02d", i%2, i)
		want = append(want, n)
		if _, err := srv.PutObject("bkt", n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	c := newClient(t, srv)
	q := &storage.Query{}
	if err := q.SetAttrSelection([]string{"Name", "Size", "CRC32C"}); err != nil {
		t.Fatal(err)
	}
	it := c.Bucket("bkt").Objects(context.Background(), q)
	it.PageInfo().MaxSize = 7
	var got []string
	for {
		a, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if a.Size != int64(len(a.Name)) || a.CRC32C == 0 || a.Generation != 0 || a.ContentType != "" {
			t.Fatalf("%s: size %d crc %x generation %d type %q: want name, size and crc32c only",
				a.Name, a.Size, a.CRC32C, a.Generation, a.ContentType)
		}
		got = append(got, a.Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("listed %q, want %q", got, want)
	}
	if n := srv.Count("storage.objects.list"); n != 4 {
		t.Fatalf("%d listing requests for 25 names in pages of 7, want 4", n)
	}
}
