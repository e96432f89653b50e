package upload

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

const week = 7 * 24 * time.Hour

// softServer is a fakegcs whose test bucket keeps deleted objects a week.
func softServer(t *testing.T, opts fakegcs.Options) *fakegcs.Server {
	t.Helper()
	srv := newServer(t, opts)
	if err := srv.SetSoftDelete(testBucket, week); err != nil {
		t.Fatal(err)
	}
	return srv
}

func softDeletedNames(t *testing.T, c *Client) []string {
	t.Helper()
	var names []string
	for a, err := range c.SoftDeleted(context.Background(), testBucket, "", "") {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, a.Name)
	}
	return names
}

// A composite upload into a bucket with soft delete composes with
// deleteSourceObjects: GCS deletes the components hard, in the compose,
// so none is left soft-deleted (billed for a week) and no delete request
// is made. Before, each component was deleted by its own request and kept
// soft-deleted.
func TestCompositeComposeDeletesSources(t *testing.T) {
	srv := softServer(t, fakegcs.Options{})
	c := newClient(t, srv, composeOpts(256<<10, nil, func(o *Options) { o.ParallelUpload = ParallelOn }))
	data := randBytes(4*256<<10, 61)
	r, err := c.UploadFile(context.Background(), writeTemp(t, t.TempDir(), "f.bin", data), URL{testBucket, "big"}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := wantObject(t, srv, "big", data); a.ComponentCount != 4 || r.Note != "composite of 4 components" {
		t.Fatalf("not composed: %d components, note %q", a.ComponentCount, r.Note)
	}
	wantNoComponents(t, srv)
	if soft := softDeletedNames(t, c); len(soft) != 0 {
		t.Errorf("soft-deleted after the upload: %q; want none (deleteSourceObjects deletes hard)", soft)
	}
	if n := srv.Count("storage.objects.delete"); n != 0 {
		t.Errorf("%d delete requests; want 0", n)
	}
}

// A server that ignores deleteSourceObjects leaves the components: gcsput
// finds one still there and deletes them as before; from then on, auto
// uploads whole into a bucket with soft delete, saying why, since each
// deleted component would be kept and billed for the retention.
func TestCompositeFallbackWhenSourcesKept(t *testing.T) {
	srv := softServer(t, fakegcs.Options{IgnoreComposeDeleteSources: true})
	var w warnings
	c := newClient(t, srv, composeOpts(256<<10, &w, nil))
	data := randBytes(4*256<<10, 62)
	src := writeTemp(t, t.TempDir(), "f.bin", data)
	ctx := context.Background()
	if _, err := c.UploadFile(ctx, src, URL{testBucket, "one"}, UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	if a := wantObject(t, srv, "one", data); a.ComponentCount != 4 {
		t.Fatalf("first upload: %d components; want composed", a.ComponentCount)
	}
	wantNoComponents(t, srv)
	if n := srv.Count("storage.objects.delete"); n != 4 {
		t.Errorf("%d delete requests; want the 4 components deleted by gcsput", n)
	}
	if _, err := c.UploadFile(ctx, src, URL{testBucket, "two"}, UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	if a := wantObject(t, srv, "two", data); a.ComponentCount != 0 {
		t.Errorf("second upload: %d components; want uploaded whole", a.ComponentCount)
	}
	got := w.all()
	want := "gs://bkt: large files are uploaded whole, not as composite objects: it keeps deleted objects for 7 days (soft delete)"
	if len(got) != 2 || got[0] != notice || !strings.HasPrefix(got[1], want) {
		t.Errorf("warnings %q; want the notice, then %q…", got, want)
	}
}

// Client.Restore brings back the generation deleted last (or one named),
// under a precondition on the live one; a restore whose reply is lost is
// not made twice; a name with nothing soft-deleted is ErrNotSoftDeleted.
func TestClientRestore(t *testing.T) {
	srv := softServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	ctx := context.Background()
	u := URL{testBucket, "doc"}
	first, _ := srv.PutObject(testBucket, "doc", []byte("first"))
	if err := c.Delete(ctx, u, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	second, _ := srv.PutObject(testBucket, "doc", []byte("second"))
	if err := c.Delete(ctx, u, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if soft := softDeletedNames(t, c); len(soft) != 2 {
		t.Fatalf("soft-deleted %q; want doc twice", soft)
	}
	srv.Inject(fakegcs.Fault{Op: "storage.objects.restore", Kind: fakegcs.KindDropResponse})
	a, err := c.Restore(ctx, u, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := wantObject(t, srv, "doc", []byte("second")); got.Generation != a.Generation || a.Generation <= second.Generation {
		t.Errorf("restored generation %d, live %d", a.Generation, got.Generation)
	}
	if n := srv.Count("storage.objects.restore"); n != 2 {
		t.Errorf("%d restore requests; want 2 (one lost reply, one 412 found ours)", n)
	}
	gens, _ := srv.Generations(testBucket, "doc")
	if len(gens) != 3 {
		t.Errorf("%d generations; want the 2 soft-deleted and 1 live (the lost attempt's, not a second)", len(gens))
	}
	// The first, named: the live one is replaced (and soft-deleted).
	if _, err := c.Restore(ctx, u, RestoreOptions{Generation: first.Generation}); err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "doc", []byte("first"))
	if _, err := c.Restore(ctx, URL{testBucket, "never"}, RestoreOptions{}); !errors.Is(err, ErrNotSoftDeleted) ||
		err.Error() != "restore gs://bkt/never: no soft-deleted generation" {
		t.Errorf("restore of a name never deleted: %v", err)
	}
}

func TestParseVersionedURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		obj  string
		gen  int64
		fail bool
	}{
		{in: "gs://bkt/a#1718040001234567", obj: "a", gen: 1718040001234567},
		{in: "gs://bkt/a", obj: "a"},
		{in: "gs://bkt/a#b", obj: "a#b"},
		{in: "gs://bkt/a#", obj: "a#"},
		{in: "gs://bkt/a#-1", obj: "a#-1"},
		{in: "gs://bkt/d/#12", obj: "d/", gen: 12},
		{in: "s3://bkt/a#1", fail: true},
	} {
		u, gen, err := ParseVersionedURL(tc.in)
		if (err != nil) != tc.fail || (!tc.fail && (u.Object != tc.obj || gen != tc.gen)) {
			t.Errorf("%s: %+v #%d, %v", tc.in, u, gen, err)
		}
	}
}

// CopyVersions copies every generation in order, oldest first, each from
// its own source generation: in a destination with versioning the history
// is kept; each result names its source generation.
func TestCopyVersions(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}})
	for _, b := range []string{testBucket, "dst"} {
		if err := srv.SetVersioning(b, true); err != nil {
			t.Fatal(err)
		}
	}
	var gens []int64
	for _, v := range []string{"one", "two", "three"} {
		a, _ := srv.PutObject(testBucket, "d/a", []byte(v))
		gens = append(gens, a.Generation)
	}
	srv.PutObject(testBucket, "d/b", []byte("bee"))
	c := newClient(t, srv, nil)
	results, err := c.CopyVersions(context.Background(), URL{testBucket, "d/"}, URL{"dst", "copy/"}, CopyOptions{})
	if err != nil || len(results) != 4 {
		t.Fatalf("%d results, %v", len(results), err)
	}
	got, _ := srv.Generations("dst", "copy/a")
	var contents []string
	for _, g := range got {
		data := readGen(t, c, URL{"dst", "copy/a"}, g.Generation)
		contents = append(contents, data)
	}
	if strings.Join(contents, ",") != "one,two,three" {
		t.Errorf("destination generations hold %q; want one,two,three in order", contents)
	}
	var sources []string
	for _, r := range results {
		if strings.Contains(r.Source, "/d/a#") {
			sources = append(sources, r.Source)
		}
	}
	want := []string{}
	for _, g := range gens {
		want = append(want, "gs://bkt/d/a#"+strconv.FormatInt(g, 10))
	}
	if strings.Join(sources, " ") != strings.Join(want, " ") {
		t.Errorf("sources %q; want %q", sources, want)
	}
	if _, err := c.CopyVersions(context.Background(), URL{testBucket, "d/a"}, URL{"dst", "x"}, CopyOptions{NoClobber: true}); err == nil {
		t.Error("NoClobber accepted")
	}
}

func readGen(t *testing.T, c *Client, u URL, gen int64) string {
	t.Helper()
	var b strings.Builder
	if _, err := c.DownloadWriter(context.Background(), u, &b, DownloadOptions{Generation: gen}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
