package upload

import (
	"context"
	"errors"
	"slices"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
)

// Delete's options: Generation picks the generation to delete (live or
// noncurrent), IfGenerationMatch conditions deleting the live one. Both
// at once, an IfGenerationMatch of 0 or a negative number are refused
// before any request.
func TestDeleteOptions(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	if err := srv.SetVersioning(testBucket, true); err != nil {
		t.Fatal(err)
	}
	var gens []int64
	for _, data := range []string{"v1", "v2", "v3", "v4"} {
		a, err := srv.PutObject(testBucket, "o", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		gens = append(gens, a.Generation)
	}
	c := newClient(t, srv, nil)
	ctx := context.Background()
	u := URL{testBucket, "o"}
	left := func() []int64 {
		t.Helper()
		var out []int64
		for a, err := range c.Versions(ctx, testBucket, "o", "") {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a.Generation)
		}
		return out
	}
	want := func(what string, gens ...int64) {
		t.Helper()
		if got := left(); !slices.Equal(got, gens) {
			t.Fatalf("after %s: generations %v, want %v", what, got, gens)
		}
	}

	for _, o := range []DeleteOptions{{IfGenerationMatch: new(int64(0))}, {Generation: -1}, {IfGenerationMatch: new(int64(-2))},
		{Generation: gens[1], IfGenerationMatch: &gens[3]}} {
		err := c.Delete(ctx, u, o)
		if !errors.Is(err, ErrBadOption) {
			t.Errorf("Delete(%+v): %v, want ErrBadOption", o, err)
		}
	}
	err := c.Delete(ctx, u, DeleteOptions{IfGenerationMatch: new(int64(0))})
	if want := "upload: delete gs://bkt/o: bad option: DeleteOptions.IfGenerationMatch 0 (only if absent) can delete nothing: give the live generation, or nil"; err == nil || err.Error() != want {
		t.Errorf("Delete(IfGenerationMatch 0): %v, want %q", err, want)
	}
	if n := srv.Count("storage.objects.delete"); n != 0 {
		t.Fatalf("%d delete requests for refused options, want 0", n)
	}

	if err := c.Delete(ctx, u, DeleteOptions{Generation: gens[0]}); err != nil {
		t.Fatal(err)
	}
	want("Generation g1", gens[1], gens[2], gens[3])

	if err := c.Delete(ctx, u, DeleteOptions{Generation: gens[3]}); err != nil { // the live one
		t.Fatal(err)
	}
	want("Generation g4 (live)", gens[1], gens[2])
	if _, err := c.Stat(ctx, u); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("live object after deleting its generation: %v, want ErrObjectNotExist", err)
	}
	if _, err := srv.PutObject(testBucket, "o", []byte("v5")); err != nil {
		t.Fatal(err)
	}
	live, err := c.Stat(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	gens = append(gens, live.Generation)

	if err := c.Delete(ctx, u, DeleteOptions{IfGenerationMatch: &gens[2]}); !isStatus(err, 412) {
		t.Errorf("Delete(if live is g3): %v, want 412", err)
	}
	want("a failed condition", gens[1], gens[2], gens[4])
	if err := c.Delete(ctx, u, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(ctx, u); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("live object after Delete: %v, want ErrObjectNotExist", err)
	}
	if a, err := c.StatGeneration(ctx, u, gens[4]); err != nil || a.Deleted.IsZero() {
		t.Errorf("g5 after Delete in a versioned bucket: %v, %+v; want noncurrent", err, a)
	}
	if err := c.Delete(ctx, u, DeleteOptions{Generation: gens[0]}); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("Delete of a deleted generation: %v, want ErrObjectNotExist", err)
	}
}
