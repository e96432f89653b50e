package upload

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/state"
)

// A saved copy whose source is gone fails one Resume (ErrUnfinishable, and
// storage.ErrObjectNotExist is no longer lost on the way), is skipped by the
// next, and GCSessions removes it.
func TestResumeUnfinishableOnce(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}})
	c := newClient(t, srv, nil)
	rec := &state.Record{Kind: state.KindRewrite, Source: "gs://bkt/gone", Dest: "gs://dst/copy", Size: 10,
		Rewrite: &state.Rewrite{Token: "T", Endpoint: srv.URL(), SourceGeneration: 1}}
	if err := c.store.Save(rec); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rs, err := c.Resume(ctx)
	if err == nil || len(rs) != 1 || rs[0].Status != StatusFailed || !errors.Is(rs[0].Err, ErrUnfinishable) {
		t.Fatalf("first Resume: %+v, %v", rs, err)
	}
	if want := "cannot finish: its source gs://bkt/gone is gone; nothing was written to gs://dst/copy; later resumes skip it, and 'gcsput sessions gc' removes its record"; rs[0].Err.Error() != want {
		t.Errorf("error %q\nwant  %q", rs[0].Err, want)
	}
	rs, err = c.Resume(ctx)
	if err != nil || len(rs) != 1 || rs[0].Status != StatusSkipped || rs[0].Note != "cannot finish: its source gs://bkt/gone is gone; 'gcsput sessions gc' removes its record" {
		t.Fatalf("second Resume: %+v, %v", rs, err)
	}
	if n := srv.Count("storage.objects.rewrite"); n != 0 {
		t.Errorf("%d rewrite calls", n)
	}
	got, err := c.GCSessions(ctx)
	if err != nil || len(got.Sessions) != 1 || got.Sessions[0].Unfinishable != "its source gs://bkt/gone is gone" {
		t.Fatalf("GCSessions: %+v, %v", got, err)
	}
	if ss, _ := c.Sessions(); len(ss) != 0 {
		t.Errorf("sessions left: %+v", ss)
	}
	if _, err := c.Copy(ctx, URL{testBucket, "gone"}, URL{"dst", "copy"}, CopyOptions{}); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("Copy of a missing source: %v, want storage.ErrObjectNotExist", err)
	}
}

// An edited record is never sent a request, by Resume or by CancelSession,
// which finds it by the Session that Sessions listed.
func TestEditedRecordNeverContacted(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	src := writeTemp(t, t.TempDir(), "a.bin", randBytes(1<<20, 1))
	rec := &state.Record{Kind: state.KindUpload, Source: src, Dest: "gs://bkt/a.bin", Size: 1 << 20,
		Upload: &state.Upload{Options: json.RawMessage(`{}`)}}
	if err := c.store.Save(rec); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(c.store.Path(rec.Key()))
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	m["dest"] = "gs://bkt/elsewhere"
	b, _ = json.Marshal(m)
	if err := os.WriteFile(c.store.Path(rec.Key()), b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rs, err := c.Resume(ctx)
	if err == nil || len(rs) != 1 || !errors.Is(rs[0].Err, ErrUnfinishable) || rs[0].Dest != "gs://bkt/elsewhere" {
		t.Fatalf("Resume: %+v, %v", rs, err)
	}
	ss, err := c.Sessions()
	if err != nil || len(ss) != 1 || ss[0].Unfinishable != state.EditedWhy {
		t.Fatalf("Sessions: %+v, %v", ss, err)
	}
	if err := c.CancelSession(ctx, ss[0]); err != nil {
		t.Fatalf("CancelSession: %v", err)
	}
	if n := len(srv.Log()); n != 0 {
		t.Errorf("%d requests sent for an edited record: %+v", n, srv.Log())
	}
	if left, _ := filepath.Glob(filepath.Join(c.store.Dir, "*.json")); len(left) != 0 {
		t.Errorf("records left: %v", left)
	}
}

// Resume judges a record it listed; if another process saves the transfer
// anew before Resume marks it (a copy started again once its source was
// back), that newer record is not the one judged and is not marked: later
// resumes run it, and GCSessions keeps it.
func TestResumeDoesNotMarkARecordSavedMeanwhile(t *testing.T) {
	var other *state.Store
	var saveErr error
	fired := false
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}, Logf: func(string, ...any) {
		// The source's 404: another process saves the copy anew meanwhile.
		fired = true
		saveErr = other.Save(&state.Record{Kind: state.KindRewrite, Source: "gs://bkt/gone", Dest: "gs://dst/copy", Size: 10,
			Rewrite: &state.Rewrite{Token: "T2", Endpoint: "http://127.0.0.1:1", SourceGeneration: 2}})
	}})
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Bucket: testBucket, Object: "gone", Kind: fakegcs.KindStatus, Status: 404})
	c := newClient(t, srv, nil)
	var err error
	if other, err = state.Open(c.store.Dir); err != nil {
		t.Fatal(err)
	}
	rec := &state.Record{Kind: state.KindRewrite, Source: "gs://bkt/gone", Dest: "gs://dst/copy", Size: 10,
		Rewrite: &state.Rewrite{Token: "T", Endpoint: srv.URL(), SourceGeneration: 1}}
	if err := c.store.Save(rec); err != nil {
		t.Fatal(err)
	}
	rs, _ := c.Resume(context.Background())
	if !fired || saveErr != nil {
		t.Fatalf("the other process's save: fired %v, %v", fired, saveErr)
	}
	if len(rs) != 1 || rs[0].Status != StatusFailed || errors.Is(rs[0].Err, ErrUnfinishable) {
		t.Errorf("Resume: %+v; want the copy's own failure, not ErrUnfinishable", rs)
	}
	got, err := c.store.Load(rec.Key())
	if err != nil || got.Rewrite.Token != "T2" || got.Unfinishable != "" {
		t.Fatalf("the record saved meanwhile: %+v, %v; want it unmarked", got, err)
	}
}

// A record whose upload's file is missing but which a live transfer holds
// (its lock taken) is in use, not unfinishable: the holder may be uploading
// the file put back. Resume says so and leaves the record unmarked.
func TestResumeHeldUnfinishableIsInUse(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	rec := &state.Record{Kind: state.KindUpload, Source: filepath.Join(t.TempDir(), "gone.bin"), Dest: "gs://bkt/gone.bin", Size: 10,
		Upload: &state.Upload{Options: json.RawMessage(`{}`)}}
	if err := c.store.Save(rec); err != nil {
		t.Fatal(err)
	}
	l, err := c.store.Lock(rec.Key()) // the live holder
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	rs, err := c.Resume(context.Background())
	if err == nil || len(rs) != 1 || !errors.Is(rs[0].Err, ErrInUse) || errors.Is(rs[0].Err, ErrUnfinishable) {
		t.Fatalf("Resume of a held record: %+v, %v; want one failure matching ErrInUse, not ErrUnfinishable", rs, err)
	}
	if ss, _ := c.Sessions(); len(ss) != 1 || ss[0].Unfinishable != "" {
		t.Errorf("sessions: %+v; want the record kept, unmarked", ss)
	}
}
