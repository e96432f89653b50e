package fakegcs_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

type listPage struct {
	Items         []struct{ Name string }
	NextPageToken string
}

func listPageOf(t *testing.T, srv *fakegcs.Server, token string) listPage {
	t.Helper()
	r := do(t, srv, "GET", "/storage/v1/b/bkt/o?maxResults=2&pageToken="+token, nil)
	var l listPage
	if err := json.Unmarshal([]byte(r.body), &l); err != nil {
		t.Fatalf("listing: %v\n%s", err, r.body)
	}
	return l
}

func names(l listPage) string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Name)
	}
	return strings.Join(out, ",")
}

// repeat-page-token answers the page asked for with the token it was given (the first page
// a token that lists from the start); empty-page answers no objects and a new token each
// time that lists from where the one given did.
func TestListFaults(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		srv.PutObject("bkt", n, []byte(n))
	}
	in := srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Kind: fakegcs.KindRepeatPageToken, Times: 2})
	first := listPageOf(t, srv, "")
	again := listPageOf(t, srv, first.NextPageToken)
	if names(first) != "a,b" || names(again) != "a,b" || again.NextPageToken != first.NextPageToken || first.NextPageToken == "" {
		t.Fatalf("repeat-page-token: pages %q (token %q), %q (token %q)", names(first), first.NextPageToken, names(again), again.NextPageToken)
	}
	in.Remove()
	second := listPageOf(t, srv, "")
	srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Kind: fakegcs.KindEmptyPage, Times: 2})
	e1 := listPageOf(t, srv, second.NextPageToken)
	e2 := listPageOf(t, srv, e1.NextPageToken)
	if len(e1.Items)+len(e2.Items) != 0 || e1.NextPageToken == second.NextPageToken || e2.NextPageToken == e1.NextPageToken || e2.NextPageToken == "" {
		t.Fatalf("empty-page: items %q %q, tokens %q -> %q -> %q", names(e1), names(e2), second.NextPageToken, e1.NextPageToken, e2.NextPageToken)
	}
	if after := listPageOf(t, srv, e2.NextPageToken); names(after) != "c,d" {
		t.Fatalf("after the empty pages: %q, want c,d", names(after))
	}
}

// huge-body answers a metadata request with a JSON object of afterBytes bytes.
func TestHugeBodyFault(t *testing.T) {
	faults, err := fakegcs.ParseFaults("huge-body:op=storage.objects.get,after=1M")
	if err != nil || len(faults) != 1 {
		t.Fatalf("ParseFaults: %v, %v", faults, err)
	}
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Faults: faults})
	srv.PutObject("bkt", "x", []byte("x"))
	r := do(t, srv, "GET", "/storage/v1/b/bkt/o/x", nil)
	var obj map[string]any
	if len(r.body) != 1<<20 || json.Unmarshal([]byte(r.body), &obj) != nil || obj["kind"] != "storage#object" {
		t.Fatalf("huge-body: %d bytes, %v", len(r.body), obj)
	}
}
