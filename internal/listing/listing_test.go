package listing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/upload"
)

func setup(t *testing.T, names ...string) (*fakegcs.Server, *upload.Client) {
	t.Helper()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	for _, n := range names {
		if _, err := srv.PutObject("bkt", n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := upload.New(context.Background(), upload.Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, c
}

func collect(t *testing.T, it func(yield func(string, error) bool)) ([]string, error) {
	t.Helper()
	var got []string
	var err error
	it(func(s string, e error) bool {
		if e != nil {
			err = e
			return false
		}
		got = append(got, s)
		return true
	})
	return got, err
}

func objects(t *testing.T, c *upload.Client, object string, o Options) ([]string, error) {
	return collect(t, func(yield func(string, error) bool) {
		for a, err := range Objects(context.Background(), c, upload.URL{Bucket: "bkt", Object: object}, o) {
			if err != nil {
				yield("", err)
				return
			}
			if !yield(a.Name+a.Prefix, nil) {
				return
			}
		}
	})
}

// gs://b/p names the object p and the folder p/, never photos/ or pq; a
// wildcard's folders are listed once, or whole with Recursive.
func TestObjectsNames(t *testing.T) {
	_, c := setup(t, "p", "p/x", "p/sub/z", "photos/y", "pq")
	for _, tc := range []struct {
		object    string
		recursive bool
		want      []string
		err       string
	}{
		{"p", false, []string{"p", "p/x", "p/sub/"}, ""},
		{"p", true, []string{"p", "p/sub/z", "p/x"}, ""},
		{"photos", false, []string{"photos/y"}, ""},
		{"pq", false, []string{"pq"}, ""},
		{"p/", false, []string{"p/x", "p/sub/"}, ""},
		{"ph", false, nil, "gs://bkt/ph: no objects match"},
		{"ph/", false, nil, "gs://bkt/ph/: no objects match"},
		{"", false, []string{"p", "pq", "p/", "photos/"}, ""}, // a page's objects, then its prefixes
		{"p*", false, []string{"p", "pq", "p/", "photos/"}, ""},
		{"p*", true, []string{"p", "pq", "p/sub/z", "p/x", "photos/y"}, ""},
	} {
		got, err := objects(t, c, tc.object, Options{Recursive: tc.recursive})
		if fmt.Sprint(err) != fmt.Sprint(errOrNil(tc.err)) || !slices.Equal(got, tc.want) {
			t.Errorf("Objects(%q, recursive %v) = %q, %v; want %q, %v", tc.object, tc.recursive, got, err, tc.want, tc.err)
		}
	}
	if _, err := objects(t, c, "zz*", Options{}); !errors.Is(err, upload.ErrNoMatch) {
		t.Errorf("a wildcard matching nothing: %v, want ErrNoMatch", err)
	}
	if _, err := objects(t, c, "p", Options{Versions: true}); err != nil {
		t.Errorf("versions: %v", err)
	}
}

func errOrNil(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// A consumer that stops after the first entry stops the walk: no page is
// asked after it (gs://bkt/d first asks whether the object d exists).
func TestObjectsStopsWithTheConsumer(t *testing.T) {
	var ns []string
	for i := range 2500 {
		ns = append(ns, fmt.Sprintf("d/o%04d", i))
	}
	srv, c := setup(t, ns...)
	for object, pages := range map[string]int{"d/": 1, "d": 2, "d/**": 1} {
		srv.ResetStats()
		n := 0
		for _, err := range Objects(context.Background(), c, upload.URL{Bucket: "bkt", Object: object}, Options{Recursive: true}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			break
		}
		if got := srv.Count("storage.objects.list"); n != 1 || got != pages {
			t.Errorf("%s: %d entries, %d list requests after a stop; want 1, %d", object, n, got, pages)
		}
	}
}

// Usage counts everything under the folder a name means (p means p/, not
// the object p), and under a wildcard's folders; a listing error names the
// prefix.
func TestUsage(t *testing.T) {
	srv, c := setup(t, "p", "p/x", "p/sub/z", "photos/y", "pq")
	usage := func(object string) ([]string, error) {
		return collect(t, func(yield func(string, error) bool) {
			for a, err := range Usage(context.Background(), c, upload.URL{Bucket: "bkt", Object: object}) {
				if err != nil {
					yield("", err)
					return
				}
				if !yield(a.Name, nil) {
					return
				}
			}
		})
	}
	for object, want := range map[string][]string{
		"p":    {"p/sub/z", "p/x"},
		"p*":   {"p", "pq", "p/sub/z", "p/x", "photos/y"}, // the matched objects, then the folders
		"":     {"p", "p/sub/z", "p/x", "photos/y", "pq"},
		"nope": nil,
	} {
		if got, err := usage(object); err != nil || !slices.Equal(got, want) {
			t.Errorf("Usage(%q) = %q, %v; want %q", object, got, err, want)
		}
	}
	srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Kind: fakegcs.KindStatus, Status: 403})
	if _, err := usage("p"); err == nil || err.Error()[:24] != "listing gs://bkt/p/: goo" {
		t.Errorf("a failed listing: %v, want it to name gs://bkt/p/", err)
	}
}
