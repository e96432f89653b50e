package upload

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// interrupt uploads src to object with a context cancelled once the server
// has at least `after` bytes, and returns the interrupted result.
func interrupt(t *testing.T, srv *fakegcs.Server, stateDir, src, object string, after int64, mods ...func(*Options)) *Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, srv, func(o *Options) {
		o.StateDir = stateDir
		o.SmallFileThreshold = -1
		for _, m := range mods {
			m(o)
		}
		o.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventChunk && e.Persisted >= after {
				cancel()
			}
		}
	})
	r, err := c.UploadFile(ctx, src, URL{testBucket, object}, UploadOptions{})
	if err == nil || r.Status != StatusInterrupted || !r.Saved {
		t.Fatalf("interrupted upload: %+v", r)
	}
	recs, _ := c.store.List()
	if len(recs) != 1 || recs[0].Offset < after || recs[0].Upload.Session.Persisted != recs[0].Offset {
		t.Fatalf("saved records %+v, want one at offset >= %d", recs, after)
	}
	return r
}

func TestResumeSavedSession(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	state := t.TempDir()
	data := randBytes(4<<20, 3)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	interrupt(t, srv, state, src, "big.bin", 1<<20)
	before, _ := srv.LastSession(testBucket, "big.bin")

	c := newClient(t, srv, func(o *Options) { o.StateDir = state; o.SmallFileThreshold = -1 })
	r, err := c.UploadFile(context.Background(), src, URL{testBucket, "big.bin"}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "big.bin", data)
	after, _ := srv.LastSession(testBucket, "big.bin")
	if after.Seq != before.Seq {
		t.Errorf("a new session was started (seq %d → %d)", before.Seq, after.Seq)
	}
	if r.Status != StatusResumed || r.Saved || r.ResumedFrom != before.Persisted || r.ResumedFrom < 1<<20 {
		t.Errorf("result %s from %d; server had %d", r.Status, r.ResumedFrom, before.Persisted)
	}
	// The rerun sent exactly the bytes the server lacked.
	if sent := after.Received - before.Received; sent != int64(len(data))-before.Persisted || r.Transferred != sent {
		t.Errorf("rerun sent %d bytes (result says %d), want %d", sent, r.Transferred, int64(len(data))-before.Persisted)
	}
	if recs, _ := c.store.List(); len(recs) != 0 {
		t.Errorf("record left after success: %+v", recs)
	}
}

func TestResumeStartsOverWhenSourceChanged(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	state := t.TempDir()
	src := writeTemp(t, t.TempDir(), "f.bin", randBytes(2<<20, 4))
	interrupt(t, srv, state, src, "f.bin", 512<<10)
	data := randBytes(2<<20+1, 5)
	os.WriteFile(src, data, 0o644)

	c := newClient(t, srv, func(o *Options) { o.StateDir = state; o.SmallFileThreshold = -1 })
	r, err := c.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "f.bin", data)
	want := "source changed since the saved session (size changed from 2097152 to 2097153 bytes): started over"
	if r.Status != StatusRestarted || r.Note != want || r.ResumedFrom != 0 {
		t.Errorf("result %s %q from %d; want restarted %q", r.Status, r.Note, r.ResumedFrom, want)
	}
}

func TestResumeStartsOverWhenSessionOld(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	state := t.TempDir()
	data := randBytes(1<<20, 6)
	src := writeTemp(t, t.TempDir(), "f.bin", data)
	interrupt(t, srv, state, src, "f.bin", 256<<10)
	later := time.Now().Add(MaxSessionAge + time.Minute)
	c := newClient(t, srv, func(o *Options) {
		o.StateDir, o.SmallFileThreshold, o.Now = state, -1, func() time.Time { return later }
	})
	r, err := c.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "f.bin", data)
	if r.Status != StatusRestarted || r.Note != "saved session older than 6.5 days: started over" {
		t.Errorf("result %s %q", r.Status, r.Note)
	}
}

func TestSessionGoneOnServerRestarts(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(1<<20, 7)
	src := writeTemp(t, t.TempDir(), "f.bin", data)
	in := srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Object: "f.bin", Phase: fakegcs.PhaseChunk,
		Offset: new(int64(512 << 10)), Kind: fakegcs.KindExpire})
	c := newClient(t, srv, func(o *Options) { o.SmallFileThreshold = -1 })
	r, err := c.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "f.bin", data)
	if in.Fired() != 1 || r.Status != StatusRestarted || r.Note != "session gone on the server (404/410): started over" {
		t.Errorf("fired %d; result %s %q", in.Fired(), r.Status, r.Note)
	}
	if st := srv.Stats(); len(st.Sessions) != 2 || st.Sessions[0].State != "expired" || st.Sessions[1].State != "finalized" {
		t.Errorf("sessions %+v", st.Sessions)
	}
}

func TestStreamSessionGoneFails(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Object: "s", Phase: fakegcs.PhaseChunk,
		Offset: new(int64(256 << 10)), Kind: fakegcs.KindExpire})
	c := newClient(t, srv, nil)
	r, err := c.UploadReader(context.Background(), strings.NewReader(string(randBytes(1<<20, 8))), URL{testBucket, "s"}, UploadOptions{})
	if err == nil || r.Status != StatusFailed || !strings.Contains(err.Error(), "a stream cannot be re-read; send it again") {
		t.Errorf("stream with a lost session: %v, %v", r.Status, err)
	}
}

// TestResumeSavedSessionInBatch reruns an interrupted upload through Upload
// (what `gcsput cp` calls), which looks saved sessions up in a listing made
// when the batch starts.
func TestResumeSavedSessionInBatch(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	state := t.TempDir()
	dir := t.TempDir()
	data := randBytes(2<<20, 6)
	src := writeTemp(t, dir, "big.bin", data)
	other := writeTemp(t, dir, "other.bin", randBytes(1<<20, 7))
	interrupt(t, srv, state, src, "big.bin", 512<<10)
	before, _ := srv.LastSession(testBucket, "big.bin")

	c := newClient(t, srv, func(o *Options) { o.StateDir = state; o.SmallFileThreshold = -1 })
	results, err := c.Upload(context.Background(), []Item{
		{Local: other, Remote: URL{testBucket, "other.bin"}},
		{Local: src, Remote: URL{testBucket, "big.bin"}},
	}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "big.bin", data)
	if r := results[1]; r.Status != StatusResumed || r.ResumedFrom != before.Persisted {
		t.Errorf("big.bin: %s from %d; server had %d", r.Status, r.ResumedFrom, before.Persisted)
	}
	if r := results[0]; r.Status != StatusUploaded {
		t.Errorf("other.bin: %s, want uploaded", r.Status)
	}
	if recs, _ := c.store.List(); len(recs) != 0 {
		t.Errorf("records left after success: %+v", recs)
	}
}
