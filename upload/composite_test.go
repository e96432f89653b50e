package upload

import (
	"context"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// The composite upload tests compose files of at least 1 MiB, in
// components of at least 256 or 512 KiB, sent in 256 KiB chunks.

// composeOpts makes a Client compose files of at least 1 MiB in components
// of at least comp bytes, and collect its warnings in w.
func composeOpts(comp int64, w *warnings, mod func(*Options)) func(*Options) {
	return func(o *Options) {
		o.ParallelThreshold, o.ComponentSize = 1<<20, comp
		if w != nil {
			o.Warn = w.add
		}
		if mod != nil {
			mod(o)
		}
	}
}

// warnings collects Options.Warn messages from concurrent workers.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(m string) {
	w.mu.Lock()
	w.msgs = append(w.msgs, m)
	w.mu.Unlock()
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

// planOf returns the components of the file at path uploaded to dst in
// components of at least per bytes, as the upload plans them.
func planOf(t testing.TB, path string, dst URL, per int64) []state.Component {
	t.Helper()
	abs, _ := filepath.Abs(path)
	fi, err := os.Stat(abs)
	if err != nil {
		t.Fatal(err)
	}
	return componentPlan(state.FingerprintOf(abs, fi), dst, per)
}

// wantNoComponents fails if a temporary component is left in the bucket.
func wantNoComponents(t testing.TB, srv *fakegcs.Server) {
	t.Helper()
	names, _ := srv.ObjectNames(testBucket)
	for _, n := range names {
		if strings.HasPrefix(n, ComponentPrefix) {
			t.Errorf("component %s left in the bucket", n)
		}
	}
}

// sentTo sums the object bytes of the logged upload requests per object
// (the bodies of all but the initiations, which carry metadata).
func sentTo(log []fakegcs.Request) map[string]int64 {
	m := map[string]int64{}
	for _, r := range log {
		if r.Op == "storage.objects.insert" && r.Phase != fakegcs.PhaseInitiate {
			m[r.Object] += r.BytesIn
		}
	}
	return m
}

const notice = "gs://bkt: large files are uploaded as composite objects: they carry a CRC32C but no MD5 (--parallel-upload off to avoid)"

// A file of 1 MiB + 1000 bytes in components of 256 KiB goes up as 5
// components, composed with the upload's metadata into an object with its
// bytes and CRC32C and no MD5; the components and the record are gone
// after. The notice comes once per bucket.
func TestCompositeUpload(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	var w warnings
	c := newClient(t, srv, composeOpts(256<<10, &w, nil))
	data := randBytes(1<<20+1000, 40)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	o := UploadOptions{Attrs: Attrs{ContentType: "text/plain", Metadata: map[string]string{"k": "v"}}}
	r, err := c.UploadFile(context.Background(), src, URL{testBucket, "big.bin"}, o)
	if err != nil {
		t.Fatal(err)
	}
	crc := crc32.Checksum(data, castagnoli)
	if r.Status != StatusUploaded || r.Note != "composite of 5 components" || r.CRC32C != crc || r.Size != int64(len(data)) ||
		r.Transferred != int64(len(data)) || r.Attempts != 1 || r.Saved || r.ResumedFrom != 0 {
		t.Errorf("result %+v", r)
	}
	attrs := wantObject(t, srv, "big.bin", data)
	if attrs.ComponentCount != 5 || attrs.CRC32C != crc || attrs.MD5 != nil || attrs.ContentType != "text/plain" || attrs.Metadata["k"] != "v" {
		t.Errorf("object %+v", attrs)
	}
	wantNoComponents(t, srv)
	// The compose deletes the components (deleteSourceObjects): no delete request.
	if n, d := srv.Count("storage.objects.compose"), srv.Count("storage.objects.delete"); n != 1 || d != 0 {
		t.Errorf("%d composes and %d deletes, want 1 and 0", n, d)
	}
	sent := sentTo(srv.Log())
	for i, comp := range planOf(t, src, URL{testBucket, "big.bin"}, 256<<10) {
		if want := comp.End - comp.Start; sent[comp.Name] != want || want != min(256<<10, int64(len(data))-comp.Start) {
			t.Errorf("component %d (%s): %d bytes sent, want %d", i, comp.Name, sent[comp.Name], want)
		}
	}
	if recs, _ := c.Sessions(); len(recs) != 0 {
		t.Errorf("records left: %+v", recs)
	}
	if _, err := c.UploadFile(context.Background(), src, URL{testBucket, "again.bin"}, UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := w.all(); !slices.Equal(got, []string{notice}) {
		t.Errorf("warnings %q, want the notice once", got)
	}
}

// Component sizes: at least ComponentSize each but the last, at most 32
// components, none for a file that would have fewer than 2.
func TestComponentPlan(t *testing.T) {
	for _, tc := range []struct {
		size, least, per, n int64
	}{
		{1<<20 + 1000, 256 << 10, 256 << 10, 5},
		{512 << 10, 256 << 10, 256 << 10, 2},
		{256 << 10, 256 << 10, 256 << 10, 1},
		{10<<20 + 1, 256 << 10, 327681, 32}, // 40 components' worth: 32 larger ones
		{32 << 20, 1 << 20, 1 << 20, 32},
		{32<<20 + 1, 1 << 20, 1<<20 + 1, 32},
		{100, 1, 4, 25},
	} {
		per, n := componentSize(tc.size, tc.least)
		if per != tc.per || n != tc.n {
			t.Errorf("componentSize(%d, %d) = %d, %d; want %d, %d", tc.size, tc.least, per, n, tc.per, tc.n)
		}
		plan := componentPlan(state.Fingerprint{Path: "/f", Size: tc.size}, URL{"b", "o"}, tc.least)
		if tc.n < 2 {
			if plan != nil {
				t.Errorf("size %d: plan of %d components, want none", tc.size, len(plan))
			}
			continue
		}
		if err := state.CheckComponents(plan, tc.size, "b"); err != nil || int64(len(plan)) != tc.n {
			t.Errorf("size %d: %d components, %v", tc.size, len(plan), err)
		}
		for i, comp := range plan[:len(plan)-1] {
			if comp.End-comp.Start != per || !isComponentName(comp.Name) {
				t.Errorf("size %d: component %d is %s, %d bytes", tc.size, i, comp.Name, comp.End-comp.Start)
			}
		}
	}
}

// The component names are the same for the same file and destination, and
// differ for another destination, another version of the file and another
// component size; only names of that form are components.
func TestComponentNames(t *testing.T) {
	fp := state.Fingerprint{Path: "/data/f", Size: 1 << 20, ModTime: 1, CTime: 2, Inode: 3, Device: 4}
	dst := URL{"b", "o"}
	base := componentDir(fp, dst, 256<<10)
	if again := componentDir(fp, dst, 256<<10); again != base || !strings.HasPrefix(base, "gcsput-tmp/") || len(base) != len("gcsput-tmp/")+33 {
		t.Fatalf("dir %q, then %q", base, again)
	}
	changed := fp
	changed.ModTime++
	for what, d := range map[string]string{
		"destination": componentDir(fp, URL{"b", "o2"}, 256<<10), "bucket": componentDir(fp, URL{"c", "o"}, 256<<10),
		"file version": componentDir(changed, dst, 256<<10), "component size": componentDir(fp, dst, 512<<10),
	} {
		if d == base {
			t.Errorf("another %s, same directory %s", what, d)
		}
	}
	for name, want := range map[string]bool{
		base + "0": true, base + "31": true, base + "32": false, base + "01": false, base + "-1": false, base: false,
		strings.ToUpper(base) + "1": false, "gcsput-tmp/x/1": false, "other/" + base[11:] + "1": false, base + "1/2": false,
	} {
		if got := isComponentName(name); got != want {
			t.Errorf("isComponentName(%q) = %v", name, got)
		}
	}
}

// A 412 on a component's initiation is an earlier run's component: taken
// as uploaded if its size and CRC32C are the component's (not sent again),
// else the upload fails naming it, and nothing is composed.
func TestCompositeExistingComponent(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, composeOpts(256<<10, nil, nil))
	data := randBytes(1<<20, 41)
	src := writeTemp(t, t.TempDir(), "f.bin", data)
	dst := URL{testBucket, "f.bin"}
	plan := planOf(t, src, dst, 256<<10)
	srv.PutObject(testBucket, plan[1].Name, data[plan[1].Start:plan[1].End])
	r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "f.bin", data)
	if sent := sentTo(srv.Log()); sent[plan[1].Name] != 0 || r.Transferred != 3<<18 {
		t.Errorf("sent %d bytes to the existing component, %d in all; want 0 and %d", sent[plan[1].Name], r.Transferred, 3<<18)
	}
	wantNoComponents(t, srv)

	srv.PutObject(testBucket, plan[2].Name, []byte("not this file's"))
	r, err = c.UploadFile(context.Background(), src, dst, UploadOptions{})
	want := "upload: component 2 of gs://bkt/f.bin: gs://bkt/" + plan[2].Name + " exists and is not bytes 524288-786431 of " + src +
		" (it has 15 bytes and crc32c "
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, resumable.ErrPreconditionFailed) || r.Status != StatusFailed {
		t.Fatalf("error %v; want one with %q", err, want)
	}
	if n := srv.Count("storage.objects.compose"); n != 1 {
		t.Errorf("%d composes, want only the first upload's", n)
	}
}
