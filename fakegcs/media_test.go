package fakegcs_test

import (
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// A PhaseMedia fault counts and fails downloads of content only: a client
// that reads the metadata first meets it on the same download as one that
// does not.
func TestPhaseMediaSkipsMetadata(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	if _, err := srv.PutObject("bkt", "o", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	// The second download fails, and every one after it.
	in := srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Phase: fakegcs.PhaseMedia, Skip: 1, Times: -1,
		Kind: fakegcs.KindStatus, Status: 503})
	for i, c := range []struct {
		method, path string
		status       int
		phase        string
	}{
		{"GET", "/storage/v1/b/bkt/o/o", 200, ""},
		{"GET", "/storage/v1/b/bkt/o/o?alt=media", 200, fakegcs.PhaseMedia}, // skipped
		{"GET", "/storage/v1/b/bkt/o/o?fields=size", 200, ""},
		{"HEAD", "/bkt/o", 200, ""},
		{"GET", "/storage/v1/b/bkt/o/o?alt=media", 503, fakegcs.PhaseMedia},
		{"GET", "/download/storage/v1/b/bkt/o/o?alt=media", 503, fakegcs.PhaseMedia},
		{"GET", "/bkt/o", 503, fakegcs.PhaseMedia},
		{"GET", "/storage/v1/b/bkt/o/o", 200, ""},
	} {
		if r := do(t, srv, c.method, c.path, nil); r.status != c.status {
			t.Errorf("%d: %s %s: %d, want %d", i, c.method, c.path, r.status, c.status)
		}
		log := srv.Log()
		if got := log[len(log)-1].Phase; got != c.phase {
			t.Errorf("%d: %s %s: logged phase %q, want %q", i, c.method, c.path, got, c.phase)
		}
	}
	if in.Fired() != 3 {
		t.Errorf("fired %d times, want 3", in.Fired())
	}
}
