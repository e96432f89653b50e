package upload

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// Every component meets a 503 on its first chunk and a connection reset on
// its second, and the compose a 503: each component is retried from the
// server's offset on its own session, the upload succeeds with one retry
// per fault, and each component's session received no byte twice beyond
// the chunk the reset cut.
func TestCompositeFailuresOnEveryComponent(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(5*512<<10, 50)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	dst := URL{testBucket, "big.bin"}
	plan := planOf(t, src, dst, 512<<10)
	var injected []*fakegcs.Injection
	for _, comp := range plan {
		chunk := func(off int64, k fakegcs.Kind, status int) fakegcs.Fault {
			return fakegcs.Fault{Op: "storage.objects.insert", Object: comp.Name, Phase: fakegcs.PhaseChunk, Offset: new(off), Kind: k, Status: status}
		}
		injected = append(injected, srv.Inject(chunk(0, fakegcs.KindStatus, 503)), srv.Inject(chunk(256<<10, fakegcs.KindReset, 0)))
	}
	injected = append(injected, srv.Inject(fakegcs.Fault{Op: "storage.objects.compose", Kind: fakegcs.KindStatus, Status: 503}))
	var events eventLog
	c := newClient(t, srv, composeOpts(512<<10, nil, func(o *Options) { o.OnEvent = events.add }))
	r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "big.bin", data)
	wantNoComponents(t, srv)
	for _, in := range injected {
		if in.Fired() != 1 {
			t.Errorf("fault %+v fired %d times", in.Fault(), in.Fired())
		}
	}
	if r.Attempts != 12 || events.count(resumable.EventRetry) != 11 || r.Status != StatusUploaded {
		t.Errorf("%s after %d attempts (%d retry events); want uploaded after 12 (1 + 2 per component + 1 compose)", r.Status, r.Attempts, events.count(resumable.EventRetry))
	}
	for i, comp := range plan {
		s, _ := srv.LastSession(testBucket, comp.Name)
		if s.Seq == 0 || s.State != "finalized" || s.Received > 512<<10+256<<10 {
			t.Errorf("component %d: session %+v; want one session, finalized, at most one chunk re-sent", i, s)
		}
	}
}

// A compose that fails for good keeps the record with every component
// uploaded: the rerun only composes, sending no byte.
func TestCompositeComposeFailsThenResumes(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(5*512<<10, 51)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	dst, stateDir := URL{testBucket, "big.bin"}, t.TempDir()
	refuse := srv.Inject(fakegcs.Fault{Op: "storage.objects.compose", Kind: fakegcs.KindStatus, Status: 403})
	c := newClient(t, srv, composeOpts(512<<10, nil, func(o *Options) { o.StateDir = stateDir }))
	r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if err == nil || !strings.Contains(err.Error(), "upload: gs://bkt/big.bin: resumable: compose gs://bkt/big.bin") || !strings.Contains(err.Error(), "403") || !r.Saved {
		t.Fatalf("error %v, saved %v; want the compose's 403, saved", err, r.Saved)
	}
	if refuse.Fired() != 1 {
		t.Fatalf("compose fault fired %d times", refuse.Fired())
	}
	ss, _ := c.Sessions()
	if len(ss) != 1 || ss[0].ComponentsDone != 5 || ss[0].Offset != int64(len(data)) {
		t.Fatalf("saved %+v; want all 5 components done", ss)
	}
	logFrom := len(srv.Log())
	r, err = c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "big.bin", data)
	wantNoComponents(t, srv)
	if r.Status != StatusResumed || r.Transferred != 0 || r.ResumedFrom != int64(len(data)) || len(sentTo(srv.Log()[logFrom:])) != 0 {
		t.Errorf("rerun %s from %d, %d sent; want resumed from %d with nothing sent", r.Status, r.ResumedFrom, r.Transferred, len(data))
	}
}

// -n (NoClobber): an existing destination skips the file before any
// component is sent; one created while the components go up makes the
// compose's ifGenerationMatch=0 fail: "skipped: exists", the object left
// as it is, the components deleted. A compose whose reply was lost and
// whose retry meets 412 finds its own object: uploaded.
func TestCompositeIfAbsent(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(5*512<<10, 52)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	ctx := context.Background()
	srv.PutObject(testBucket, "there", []byte("old"))
	c := newClient(t, srv, composeOpts(512<<10, nil, func(o *Options) {
		o.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventStarted && e.Part == 5 {
				srv.PutObject(testBucket, "raced", []byte("theirs")) // while the components go up
			}
		}
	}))
	r, err := c.UploadFile(ctx, src, URL{testBucket, "there"}, UploadOptions{NoClobber: true})
	if err != nil || r.Status != StatusSkipped || r.Note != "exists" || srv.Count("storage.objects.insert") != 0 {
		t.Fatalf("existing: %s %q, %v, %d upload requests", r.Status, r.Note, err, srv.Count("storage.objects.insert"))
	}
	r, err = c.UploadFile(ctx, src, URL{testBucket, "raced"}, UploadOptions{NoClobber: true})
	if err != nil || r.Status != StatusSkipped || r.Note != "exists" || r.Size != 6 {
		t.Fatalf("raced: %s %q size %d, %v; want skipped: exists", r.Status, r.Note, r.Size, err)
	}
	wantObject(t, srv, "raced", []byte("theirs"))
	wantNoComponents(t, srv)

	lost := srv.Inject(fakegcs.Fault{Op: "storage.objects.compose", Kind: fakegcs.KindDropResponse})
	r, err = c.UploadFile(ctx, src, URL{testBucket, "new"}, UploadOptions{NoClobber: true})
	if err != nil || r.Status != StatusUploaded || r.Attempts != 2 || lost.Fired() != 1 {
		t.Fatalf("lost compose reply: %s after %d attempts, %v", r.Status, r.Attempts, err)
	}
	wantObject(t, srv, "new", data)
	wantNoComponents(t, srv)
}

// Cleanup where the server leaves the components (it ignores
// deleteSourceObjects, so gcsput deletes them): a component already gone
// when it is deleted (404) counts as deleted; one that cannot be deleted
// leaves the upload a success, with a warning that says how to remove the
// components.
func TestCompositeCleanup(t *testing.T) {
	srv := newServer(t, fakegcs.Options{IgnoreComposeDeleteSources: true})
	data := randBytes(5*512<<10, 53)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	plan := planOf(t, src, URL{testBucket, "a"}, 512<<10)
	var w warnings
	c := newClient(t, srv, composeOpts(512<<10, &w, func(o *Options) {
		o.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventFinished && e.Object == "a" && e.Parts == 0 {
				srv.DeleteObject(testBucket, plan[3].Name) // gone before its delete
			}
		}
	}))
	if _, err := c.UploadFile(context.Background(), src, URL{testBucket, "a"}, UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	wantNoComponents(t, srv)
	if got := w.all(); !slices.Equal(got, []string{notice}) {
		t.Errorf("warnings %q; want only the notice", got)
	}
	plan = planOf(t, src, URL{testBucket, "b"}, 512<<10)
	srv.Inject(fakegcs.Fault{Op: "storage.objects.delete", Object: plan[2].Name, Kind: fakegcs.KindStatus, Status: 403, Times: -1})
	r, err := c.UploadFile(context.Background(), src, URL{testBucket, "b"}, UploadOptions{})
	if err != nil || r.Status != StatusUploaded {
		t.Fatalf("%s, %v", r.Status, err)
	}
	want := "gs://bkt/b: uploaded, but its temporary components could not all be deleted (gs://bkt/" + plan[2].Name +
		": googleapi: Error 403: "
	hint := "remove them with 'gcsput rm -r gs://bkt/" + componentDirOf(plan[2].Name) + "'"
	if got := w.all(); len(got) != 2 || !strings.HasPrefix(got[1], want) || !strings.HasSuffix(got[1], hint) {
		t.Errorf("warnings %q; want the notice, then %q…%q", got, want, hint)
	}
	if names, _ := srv.ObjectNames(testBucket); !slices.Equal(names, []string{"a", "b", plan[2].Name}) {
		t.Errorf("objects %q", names)
	}
}

// -j bounds data streams, not files: with Parallelism 2 a composite upload
// never has more than 2 chunk requests in flight, and with 1 never more
// than 1, counted on the wire by the Client's own HTTP client.
func TestCompositeStreamBudget(t *testing.T) {
	for _, par := range []int{1, 2} {
		srv := newServer(t, fakegcs.Options{})
		srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindThrottle, BytesPerSecond: 8 << 20, Times: -1})
		data := randBytes(8*256<<10, 54)
		src := writeTemp(t, t.TempDir(), "big.bin", data)
		cc := &concurrency{base: srv.Client().Transport}
		c := newClient(t, srv, composeOpts(256<<10, nil, func(o *Options) {
			o.Parallelism, o.HTTPClient = par, &http.Client{Transport: cc}
		}))
		r, err := c.UploadFile(context.Background(), src, URL{testBucket, "big.bin"}, UploadOptions{})
		if err != nil || r.Note != "composite of 8 components" {
			t.Fatalf("-j %d: %v %q", par, err, r.Note)
		}
		wantObject(t, srv, "big.bin", data)
		if cc.most != par {
			t.Errorf("-j %d: at most %d chunk requests at once, want %d", par, cc.most, par)
		}
	}
}

// concurrency counts the chunk requests (PUTs to a session) in flight.
type concurrency struct {
	base      http.RoundTripper
	mu        sync.Mutex
	now, most int
}

func (c *concurrency) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPut {
		return c.base.RoundTrip(req)
	}
	c.mu.Lock()
	c.now++
	c.most = max(c.most, c.now)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.now--
		c.mu.Unlock()
	}()
	return c.base.RoundTrip(req)
}

// A composite upload abandoned (here: -n met an object created meanwhile)
// whose components cannot all be deleted keeps its record, with a warning;
// cancelling it then deletes the rest.
func TestCompositeAbandonKeepsRecordUntilDeleted(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(5*512<<10, 55)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	dst := URL{testBucket, "raced"}
	plan := planOf(t, src, dst, 512<<10)
	var w warnings
	c := newClient(t, srv, composeOpts(512<<10, &w, func(o *Options) {
		o.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventStarted && e.Part == 5 {
				srv.PutObject(testBucket, "raced", []byte("theirs"))
			}
		}
	}))
	refuse := srv.Inject(fakegcs.Fault{Op: "storage.objects.delete", Object: plan[1].Name, Kind: fakegcs.KindStatus, Status: 403})
	r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{NoClobber: true})
	if err != nil || r.Status != StatusSkipped || r.Note != "exists" || refuse.Fired() != 1 {
		t.Fatalf("%s %q, %v", r.Status, r.Note, err)
	}
	want := "gs://bkt/raced: the components of the abandoned composite upload were not all deleted (gs://bkt/" + plan[1].Name + ": "
	if got := w.all(); len(got) != 2 || !strings.HasPrefix(got[1], want) || !strings.HasSuffix(got[1], "its record is kept for 'gcsput sessions cancel'") {
		t.Fatalf("warnings %q; want the notice, then %q…", got, want)
	}
	if ss, _ := c.Sessions(); len(ss) != 1 || ss[0].ComponentsDone != 5 {
		t.Fatalf("sessions %+v; want the record kept", ss)
	}
	if names := objectsIn(t, srv, testBucket); !slices.Equal(names, []string{plan[1].Name, "raced"}) {
		t.Fatalf("objects %q", names)
	}
	ss, _ := c.Sessions()
	if err := c.CancelSession(context.Background(), ss[0]); err != nil {
		t.Fatal(err)
	}
	wantNoComponents(t, srv)
	wantObject(t, srv, "raced", []byte("theirs"))
	if ss, _ := c.Sessions(); len(ss) != 0 {
		t.Errorf("sessions %+v", ss)
	}
}
