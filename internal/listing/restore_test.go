package listing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gcsput/gcsput/upload"
)

// Restorable keeps a named generation, leaves a name alone to Restore (the
// one deleted last), or with all lists each soft-deleted generation, oldest
// first; a wildcard matches names among the soft-deleted, each once.
func TestRestorable(t *testing.T) {
	srv, c := setup(t)
	if err := srv.SetSoftDelete("bkt", 7*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var gens []int64 // of r.txt, oldest first
	for _, n := range []string{"r.txt", "r.txt", "r.txt.bak", "s.txt"} {
		a, err := srv.PutObject("bkt", n, []byte(n))
		if err != nil {
			t.Fatal(err)
		}
		if n == "r.txt" {
			gens = append(gens, a.Generation)
		}
	}
	for _, n := range []string{"r.txt", "r.txt.bak", "s.txt"} {
		if err := c.Delete(ctx, upload.URL{Bucket: "bkt", Object: n}, upload.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	u := func(o string) upload.URL { return upload.URL{Bucket: "bkt", Object: o} }
	text := func(gs []Generation) []string {
		var out []string
		for _, g := range gs {
			out = append(out, fmt.Sprintf("%s#%d", g.URL.Object, g.Generation))
		}
		return out
	}
	for _, tc := range []struct {
		named []Generation
		all   bool
		want  []string
	}{
		{[]Generation{{u("r.txt"), 0}}, false, []string{"r.txt#0"}},
		{[]Generation{{u("r.txt"), gens[0]}}, true, []string{fmt.Sprintf("r.txt#%d", gens[0])}},
		{[]Generation{{u("r.txt"), 0}}, true, []string{fmt.Sprintf("r.txt#%d", gens[0]), fmt.Sprintf("r.txt#%d", gens[1])}},
		{[]Generation{{u("*.txt"), 0}}, false, []string{"r.txt#0", "s.txt#0"}},
	} {
		got, err := Restorable(ctx, c, tc.named, tc.all)
		if err != nil || !slices.Equal(text(got), tc.want) {
			t.Errorf("Restorable(%v, all %v) = %q, %v; want %q", tc.named, tc.all, text(got), err, tc.want)
		}
	}
	if _, err := Restorable(ctx, c, []Generation{{u("nope*"), 0}}, false); !errors.Is(err, upload.ErrNoMatch) && !errors.Is(err, upload.ErrNotSoftDeleted) {
		t.Errorf("a wildcard matching nothing: %v", err)
	}
	if _, err := Restorable(ctx, c, []Generation{{u("r.tx"), 0}}, true); !errors.Is(err, upload.ErrNotSoftDeleted) || err.Error() != "gs://bkt/r.tx: no soft-deleted generation" {
		t.Errorf("a name with nothing soft-deleted (a prefix of one that has): %v", err)
	}
}
