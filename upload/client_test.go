package upload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

func TestIfAbsentAndSkipUnchanged(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, func(o *Options) { o.SmallFileThreshold = 512 << 10 })
	dir := t.TempDir()
	for _, size := range []int{100, 1 << 20} { // multipart and resumable
		data := randBytes(size, uint64(size))
		p := writeTemp(t, dir, "f", data)
		u := URL{testBucket, "obj-" + itoa(int64(size))}
		first, err := c.UploadFile(context.Background(), p, u, UploadOptions{NoClobber: true})
		if err != nil || first.Status != StatusUploaded {
			t.Fatalf("first upload: %+v %v", first, err)
		}
		inserts := srv.Count("storage.objects.insert")
		r, err := c.UploadFile(context.Background(), p, u, UploadOptions{NoClobber: true})
		if err != nil || r.Status != StatusSkipped || r.Note != "exists" || r.Generation != first.Generation {
			t.Errorf("size %d, NoClobber again: %+v %v", size, r, err)
		}
		r, err = c.UploadFile(context.Background(), p, u, UploadOptions{SkipUnchanged: true})
		if err != nil || r.Status != StatusSkipped || r.Note != "unchanged" || r.CRC32C != first.CRC32C {
			t.Errorf("size %d, unchanged: %+v %v", size, r, err)
		}
		if n := srv.Count("storage.objects.insert"); n != inserts {
			t.Errorf("size %d: skipped uploads sent %d insert requests", size, n-inserts)
		}
		data[size/2] ^= 1 // same size, different content
		writeTemp(t, dir, "f", data)
		r, err = c.UploadFile(context.Background(), p, u, UploadOptions{SkipUnchanged: true})
		if err != nil || r.Status != StatusUploaded || r.Generation == first.Generation {
			t.Errorf("size %d, changed: %+v %v", size, r, err)
		}
		wantObject(t, srv, u.Object, data)
	}
}

// TestIfAbsentRace: the object appears between the check and the upload's
// end; ifGenerationMatch=0 makes the server refuse, and the result is
// "skipped: exists", not an overwrite.
func TestIfAbsentRace(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, func(o *Options) {
		o.SmallFileThreshold = -1
		o.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventStarted {
				srv.PutObject(testBucket, "race", []byte("theirs"))
			}
		}
	})
	p := writeTemp(t, t.TempDir(), "f", randBytes(600<<10, 1))
	r, err := c.UploadFile(context.Background(), p, URL{testBucket, "race"}, UploadOptions{NoClobber: true})
	if err != nil || r.Status != StatusSkipped || r.Note != "exists" {
		t.Fatalf("%+v %v", r, err)
	}
	wantObject(t, srv, "race", []byte("theirs"))
}

func TestMultipartRetriedAfterLostResponseWithIfAbsent(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	in := srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindDropResponse})
	c := newClient(t, srv, nil)
	data := []byte("small file")
	p := writeTemp(t, t.TempDir(), "f", data)
	r, err := c.UploadFile(context.Background(), p, URL{testBucket, "o"}, UploadOptions{NoClobber: true})
	if err != nil || r.Status != StatusUploaded || r.Attempts != 2 || in.Fired() != 1 {
		t.Fatalf("%+v %v (fault fired %d)", r, err, in.Fired())
	}
	attrs := wantObject(t, srv, "o", data)
	if r.Generation != attrs.Generation {
		t.Errorf("generation %d, server %d", r.Generation, attrs.Generation)
	}
}

func TestUploadReader(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	data := randBytes(700<<10+3, 2)
	r, err := c.UploadReader(context.Background(), bytes.NewReader(data), URL{testBucket, "stream.txt"},
		UploadOptions{Attrs: Attrs{CacheControl: "no-cache", Metadata: map[string]string{"k": "v"}}})
	if err != nil {
		t.Fatal(err)
	}
	attrs := wantObject(t, srv, "stream.txt", data)
	if r.Status != StatusUploaded || r.Source != "-" || r.Size != int64(len(data)) || r.CRC32C != attrs.CRC32C {
		t.Errorf("result %+v", r)
	}
	if attrs.ContentType != "text/plain; charset=utf-8" || attrs.CacheControl != "no-cache" || attrs.Metadata["k"] != "v" {
		t.Errorf("attrs %+v", attrs)
	}
}

func TestObjectCalls(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindStatus, Status: 503})
	srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Kind: fakegcs.KindStatus, Status: 500})
	c := newClient(t, srv, nil)
	ctx := context.Background()
	for _, n := range []string{"a/1", "a/2", "a/b/3", "c"} {
		srv.PutObject(testBucket, n, []byte(n))
	}
	attrs, err := c.Stat(ctx, URL{testBucket, "a/1"})
	if err != nil || attrs.Size != 3 {
		t.Fatalf("Stat after a 503: %+v %v", attrs, err)
	}
	if _, err := c.Stat(ctx, URL{testBucket, "nope"}); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("Stat missing: %v", err)
	}
	attrs, err = c.Update(ctx, URL{testBucket, "a/1"}, storage.ObjectAttrsToUpdate{
		ContentType: "text/plain", Metadata: map[string]string{"owner": "me"}}, UpdateOptions{})

	if err != nil || attrs.ContentType != "text/plain" || attrs.Metadata["owner"] != "me" {
		t.Errorf("Update: %+v %v", attrs, err)
	}
	attrs, err = c.Compose(ctx, URL{testBucket, "joined"}, URL{testBucket, "a/1"}, URL{testBucket, "a/2"})
	if b, _, _ := srv.Object(testBucket, "joined"); err != nil || string(b) != "a/1a/2" {
		t.Errorf("Compose: %q %v", b, err)
	}
	if _, err := c.Compose(ctx, URL{testBucket, "x"}, URL{"other", "a"}); err == nil || err.Error() != "upload: compose: gs://other/a is not in bucket bkt" {
		t.Errorf("Compose across buckets: %v", err)
	}
	var names []string
	for a, err := range c.List(ctx, testBucket, "a/", "/") {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, a.Name+a.Prefix)
	}
	if strings.Join(names, ",") != "a/1,a/2,a/b/" {
		t.Errorf("List with delimiter: %v", names)
	}
	if err := c.Delete(ctx, URL{testBucket, "c"}, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, URL{testBucket, "c"}, DeleteOptions{}); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("second Delete: %v", err)
	}
}

func TestListPages(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	for i := range 2500 {
		srv.PutObject(testBucket, "p/"+itoa(int64(10000+i)), nil)
	}
	in := srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Kind: fakegcs.KindStatus, Status: 503, Skip: 1})
	c := newClient(t, srv, nil)
	n := 0
	for a, err := range c.List(context.Background(), testBucket, "p/", "") {
		if err != nil {
			t.Fatal(err)
		}
		if a.Name != "p/"+itoa(int64(10000+n)) {
			t.Fatalf("object %d is %s", n, a.Name)
		}
		n++
	}
	if n != 2500 || in.Fired() != 1 {
		t.Errorf("listed %d objects, fault fired %d times; want 2500 in 3 pages, the second one retried", n, in.Fired())
	}
}

func TestNewNoCredentials(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv(auth.ADCEnv, "")
	t.Setenv(auth.EmulatorHostEnv, "")
	t.Setenv(auth.MetadataHostEnv, "127.0.0.1:1")
	_, err := New(context.Background(), Options{NoState: true})
	if !errors.Is(err, auth.ErrNoCredentials) || !strings.Contains(err.Error(), "gcloud auth application-default login") {
		t.Errorf("New without credentials: %v", err)
	}
	// A key that was given but cannot be used: its own error, not "none found".
	key := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(key, []byte(`{"type": "service_account"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), Options{NoState: true, Auth: auth.Options{CredentialsFile: key}})
	if !errors.Is(err, auth.ErrBadCredentials) || errors.Is(err, auth.ErrNoCredentials) || !strings.Contains(err.Error(), key+": service_account key lacks client_email, private_key") {
		t.Errorf("New with a key lacking its fields: %v", err)
	}
	t.Setenv(auth.EmulatorHostEnv, "127.0.0.1:9")
	c, err := New(context.Background(), Options{NoState: true})
	if err != nil || c.endpoint != "http://127.0.0.1:9" {
		t.Errorf("with STORAGE_EMULATOR_HOST: %v %v", c, err)
	}
}

func TestInterruptedBatch(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	dir := t.TempDir()
	for i := range 20 {
		writeTemp(t, dir, "f"+itoa(int64(100+i)), randBytes(600<<10, uint64(i)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := newClient(t, srv, func(o *Options) {
		o.Parallelism = 2
		o.SmallFileThreshold = -1
		o.Progress = func(p Progress) {
			if strings.HasSuffix(p.Source, "f103") && p.Done > 0 {
				cancel()
			}
		}
	})
	results, err := c.UploadDir(ctx, dir, URL{testBucket, ""}, UploadOptions{})
	if !errors.Is(err, ErrSomeFailed) {
		t.Fatalf("err %v", err)
	}
	counts := map[Status]int{}
	for _, r := range results {
		counts[r.Status]++
	}
	// Interrupted transfers are said to be interrupted, not failed.
	var be *batchFailures
	if !errors.As(err, &be) || be.Interrupted != counts[StatusInterrupted] || be.Failed != be.Interrupted ||
		!strings.Contains(err.Error(), itoa(int64(be.Interrupted))+" of 20 transfers interrupted (saved ones resume on a rerun)") {
		t.Errorf("batch error %q (%+v), %d interrupted", err, be, counts[StatusInterrupted])
	}
	recs, _ := c.Sessions()
	if counts[StatusUploaded] < 2 || counts[StatusInterrupted] < 10 || len(recs) == 0 || len(recs) > 2 {
		t.Errorf("statuses %v, %d saved sessions; want some uploaded, the rest interrupted, ≤ 2 saved", counts, len(recs))
	}
	// Resume finishes what was in flight.
	results, err = c.Resume(context.Background())
	if err != nil || len(results) != len(recs) {
		t.Fatalf("Resume: %d results, %v", len(results), err)
	}
	for _, r := range results {
		if r.Status != StatusResumed {
			t.Errorf("resumed %s: %s %v", r.Source, r.Status, r.Err)
		}
		data, _ := readFile(r.Source)
		wantObject(t, srv, filepath.Base(r.Source), data)
	}
	if recs, _ := c.Sessions(); len(recs) != 0 {
		t.Errorf("%d sessions left", len(recs))
	}
}

func TestCancelAndGCSessions(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	state := t.TempDir()
	src := writeTemp(t, t.TempDir(), "f.bin", randBytes(1<<20, 3))
	interrupt(t, srv, state, src, "f.bin", 256<<10)
	c := newClient(t, srv, func(o *Options) { o.StateDir = state })
	recs, err := c.Sessions()
	if err != nil || len(recs) != 1 || recs[0].Kind != "upload" || recs[0].Dest != "gs://bkt/f.bin" {
		t.Fatalf("Sessions: %+v %v", recs, err)
	}
	if err := c.CancelSession(context.Background(), recs[0]); err != nil {
		t.Fatal(err)
	}
	if s, _ := srv.LastSession(testBucket, "f.bin"); s.State != "cancelled" {
		t.Errorf("server session %s, want cancelled", s.State)
	}
	if recs, _ := c.Sessions(); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
	if err := c.CancelSession(context.Background(), recs[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cancelling it again: %v, want os.ErrNotExist", err)
	}
	nostate := newClient(t, srv, func(o *Options) { o.NoState = true })
	if _, err := nostate.Sessions(); !errors.Is(err, ErrNoState) {
		t.Errorf("Sessions with NoState: %v", err)
	}
}

// A library writes no state on its own: without StateDir nothing lands in
// the user's home. And an http endpoint (an emulator) needs no NoAuth: it
// gets no credentials anyway, so none need to be found.
func TestLibraryDefaultsWriteNothingAndNeedNoCredentials(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv(auth.EmulatorHostEnv, "")
	srv := newServer(t, fakegcs.Options{})
	c, err := New(context.Background(), Options{Endpoint: srv.URL(), SmallFileThreshold: -1})
	if err != nil {
		t.Fatalf("New with an http endpoint and no credentials: %v", err)
	}
	defer c.Close()
	src := writeTemp(t, t.TempDir(), "f.bin", randBytes(300<<10, 30))
	if _, err := c.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	if c.store != nil {
		t.Error("a store was opened without StateDir")
	}
	if ents, _ := os.ReadDir(home); len(ents) != 0 {
		t.Errorf("the library wrote into the home directory: %v", ents)
	}
}
