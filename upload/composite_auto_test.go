package upload

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
)

// ParallelAuto composes only into a bucket whose default storage class is
// STANDARD, with no retention policy and no default event-based hold, and
// only uploads that name no other storage class; otherwise the file goes up
// whole, and one warning per bucket says why. Each bucket's settings are
// read once. ParallelOn composes whatever the bucket; ParallelOff never.
func TestCompositeAutoRules(t *testing.T) {
	ctx := context.Background()
	data := randBytes(4*256<<10, 60)
	for _, tc := range autoCases() {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{})
			var w warnings
			c := newClient(t, srv, composeOpts(256<<10, &w, func(o *Options) { o.ParallelUpload = tc.mode }))
			if _, err := c.gcs.Bucket(testBucket).Update(ctx, tc.bucket); err != nil {
				t.Fatal(err)
			}
			if tc.fault != nil {
				srv.Inject(*tc.fault)
			}
			src := writeTemp(t, t.TempDir(), "f.bin", data)
			for _, name := range []string{"one", "two"} {
				r, err := c.UploadFile(ctx, src, URL{testBucket, name}, UploadOptions{Attrs: Attrs{StorageClass: tc.class}})
				if err != nil {
					t.Fatal(err)
				}
				attrs := wantObject(t, srv, name, data)
				if composed := attrs.ComponentCount == 4 && r.Note == "composite of 4 components"; composed != (tc.why == "") {
					t.Errorf("%s: %d components, note %q; want composed %v", name, attrs.ComponentCount, r.Note, tc.why == "")
				}
			}
			wantNoComponents(t, srv)
			tc.checkWarnings(t, w.all())
			if n := srv.Count("storage.buckets.get"); n != btoi(tc.mode == "" && tc.class == "") {
				t.Errorf("bucket read %d times", n)
			}
		})
	}
}

type autoCase struct {
	name   string
	mode   ParallelUploadMode
	bucket storage.BucketAttrsToUpdate
	class  string // of the upload
	fault  *fakegcs.Fault
	why    string // "": composed; "-": not composed, nothing said
}

func autoCases() []autoCase {
	return []autoCase{
		{name: "standard"},
		{name: "nearline", bucket: storage.BucketAttrsToUpdate{StorageClass: "NEARLINE"},
			why: "its default storage class is NEARLINE, which charges the components for early deletion"},
		{name: "archive", bucket: storage.BucketAttrsToUpdate{StorageClass: "ARCHIVE"},
			why: "its default storage class is ARCHIVE, which charges the components for early deletion"},
		{name: "retention", bucket: storage.BucketAttrsToUpdate{RetentionPolicy: &storage.RetentionPolicy{RetentionPeriod: time.Hour}},
			why: "it has a retention policy, which keeps the components from being deleted"},
		{name: "event-based hold", bucket: storage.BucketAttrsToUpdate{DefaultEventBasedHold: true},
			why: "it holds new objects (default event-based hold), which keeps the components from being deleted"},
		{name: "coldline upload", class: "COLDLINE",
			why: "the upload's storage class is COLDLINE, which charges the components for early deletion"},
		{name: "unreadable bucket", fault: &fakegcs.Fault{Op: "storage.buckets.get", Kind: fakegcs.KindStatus, Status: 403},
			why: "its settings could not be read (googleapi: Error 403: "},
		{name: "on, nearline", mode: ParallelOn, bucket: storage.BucketAttrsToUpdate{StorageClass: "NEARLINE"}},
		{name: "off", mode: ParallelOff, why: "-"},
	}
}

// checkWarnings: the notice once when composed, the reason once when not
// (auto), nothing with off.
func (tc autoCase) checkWarnings(t *testing.T, got []string) {
	t.Helper()
	switch tc.why {
	case "":
		if !slices.Equal(got, []string{notice}) {
			t.Errorf("warnings %q; want the notice once", got)
		}
	case "-":
		if len(got) != 0 {
			t.Errorf("warnings %q; want none", got)
		}
	default:
		want := "gs://bkt: large files are uploaded whole, not as composite objects: " + tc.why
		if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.HasSuffix(got[0], "(--parallel-upload on to compose anyway)") {
			t.Errorf("warnings %q; want %q… once", got, want)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The mode and sizes are checked by New: an unknown mode or a negative
// component size is ErrBadOption; zero values are the defaults (a
// ComponentSize of 0 follows the streams: TestComponentPlanFollowsStreams).
func TestCompositeOptions(t *testing.T) {
	o, err := checkOptions(Options{})
	if err != nil || o.ParallelUpload != ParallelAuto || o.ParallelThreshold != 128<<20 || o.ComponentSize != 0 {
		t.Fatalf("defaults %q %d %d, %v", o.ParallelUpload, o.ParallelThreshold, o.ComponentSize, err)
	}
	for _, bad := range []Options{{ParallelUpload: "always"}, {ComponentSize: -1}} {
		if _, err := checkOptions(bad); err == nil || !strings.Contains(err.Error(), "bad option") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	// Below the threshold, or with fewer than 2 components, or negative: never composed.
	srv := newServer(t, fakegcs.Options{})
	for _, mod := range []func(*Options){
		func(o *Options) { o.ParallelThreshold = 4<<20 + 1 },
		func(o *Options) { o.ComponentSize = 4 << 20 },
		func(o *Options) { o.ParallelThreshold = -1 },
	} {
		c := newClient(t, srv, func(o *Options) { o.ParallelUpload = ParallelOn; o.ParallelThreshold = 1 << 20; mod(o) })
		if c.composes(context.Background(), 4<<20, URL{testBucket, "o"}, Attrs{}) {
			t.Errorf("composed with %+v", c.opts)
		}
	}
	if names, _ := srv.ObjectNames(testBucket); !slices.Equal(names, []string{}) {
		t.Errorf("objects %q", names)
	}
}
