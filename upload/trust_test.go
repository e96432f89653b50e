package upload

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// A state directory that others can write is refused, with an error that
// says how to fix it.
func TestStateDirWritableByOthersRefused(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	for _, mode := range []os.FileMode{0o777, 0o770, 0o1777} {
		dir := filepath.Join(t.TempDir(), "state")
		os.Mkdir(dir, 0o700)
		os.Chmod(dir, mode)
		_, err := New(context.Background(), Options{Endpoint: srv.URL(), StateDir: dir})
		want := "state directory " + dir + " can be written by other users (mode 0"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "chmod 700 "+dir) {
			t.Errorf("mode %v: err = %v, want %q", mode, err, want)
		}
	}
	dir := filepath.Join(t.TempDir(), "state")
	os.Mkdir(dir, 0o750)
	if _, err := New(context.Background(), Options{Endpoint: srv.URL(), StateDir: dir}); err != nil {
		t.Errorf("mode 0750: %v", err)
	}
}

// interruptedRecord leaves a saved session for src → gs://bkt/f.bin and
// returns the record's path.
func interruptedRecord(t *testing.T, srv *fakegcs.Server, state, src string) string {
	t.Helper()
	interrupt(t, srv, state, src, "f.bin", 256<<10)
	recs, _ := filepath.Glob(filepath.Join(state, "*.json"))
	if len(recs) != 1 {
		t.Fatalf("records %q", recs)
	}
	return recs[0]
}

// editRecord rewrites a saved record (still 0600) as edit changes its JSON.
func editRecord(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err == nil {
		err = os.WriteFile(path, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Records that are not regular 0600 files of the user are ignored with a
// warning: the upload starts a new session; the planted one is untouched.
func TestUntrustedRecordsIgnored(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		plant     func(t *testing.T, rec string)
	}{
		{"0644", "its mode is 0644, not 0600", func(t *testing.T, rec string) { os.Chmod(rec, 0o644) }},
		{"symlink", "it is a symbolic link", func(t *testing.T, rec string) {
			elsewhere := filepath.Join(t.TempDir(), "planted.json")
			os.Rename(rec, elsewhere)
			os.Symlink(elsewhere, rec)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{})
			state := filepath.Join(t.TempDir(), "state")
			data := randBytes(1<<20, 21)
			src := writeTemp(t, t.TempDir(), "f.bin", data)
			rec := interruptedRecord(t, srv, state, src)
			tc.plant(t, rec)
			var warnings []string
			c := newClient(t, srv, func(o *Options) {
				o.StateDir, o.SmallFileThreshold = state, -1
				o.Warn = func(m string) { warnings = append(warnings, m) }
			})
			r, err := c.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{})
			if err != nil || r.Status != StatusUploaded || r.ResumedFrom != 0 {
				t.Fatalf("%s from %d: %v", r.Status, r.ResumedFrom, err)
			}
			wantObject(t, srv, "f.bin", data)
			want := "ignoring the saved session " + rec + ": " + tc.why
			if len(warnings) != 1 || !strings.Contains(warnings[0], want) {
				t.Errorf("warnings %q, want one with %q", warnings, want)
			}
			if st := srv.Stats(); len(st.Sessions) != 2 {
				t.Errorf("%d sessions, want the interrupted one and a new one", len(st.Sessions))
			}
		})
	}
}

// A record whose session URI points anywhere but the endpoint in use is
// never contacted (not resumed, not cancelled, no token, no bytes): the
// upload starts over on the endpoint, with a warning.
func TestForeignSessionURINeverContacted(t *testing.T) {
	var mu sync.Mutex
	var hits []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.Method+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(308)
	}))
	defer elsewhere.Close()
	srv := newServer(t, fakegcs.Options{})
	state := filepath.Join(t.TempDir(), "state")
	data := randBytes(1<<20, 22)
	src := writeTemp(t, t.TempDir(), "f.bin", data)
	recPath := interruptedRecord(t, srv, state, src)
	editRecord(t, recPath, func(m map[string]any) {
		sess := m["upload"].(map[string]any)["session"].(map[string]any)
		sess["uri"] = elsewhere.URL + "/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=planted"
	})

	var warnings []string
	c := newClient(t, srv, func(o *Options) {
		o.StateDir, o.SmallFileThreshold = state, -1
		o.Warn = func(m string) { warnings = append(warnings, m) }
	})
	recs, _ := c.Sessions()
	if len(recs) != 1 {
		t.Fatalf("%d sessions listed", len(recs))
	}
	err := c.CancelSession(context.Background(), recs[0])
	if err == nil || !strings.Contains(err.Error(), "its session is on "+elsewhere.URL+", not on the endpoint in use ("+srv.URL()+")") {
		t.Errorf("cancel: %v", err)
	}
	results, err := c.Resume(context.Background())
	if err != nil || len(results) != 0 {
		t.Errorf("resume: %d results, %v", len(results), err)
	}
	r, err := c.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{})
	if err != nil || r.Status != StatusUploaded {
		t.Fatalf("%s: %v", r.Status, err)
	}
	wantObject(t, srv, "f.bin", data)
	mu.Lock()
	defer mu.Unlock()
	if len(hits) != 0 {
		t.Errorf("the planted session URI was contacted: %q", hits)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "its session is on "+elsewhere.URL) || strings.Contains(warnings[0], "planted") {
		t.Errorf("warnings %q", warnings)
	}
}

// A worker never resumes (nor removes) a session saved by another shard.
func TestAnotherShardsSessionIsLeftAlone(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	state := filepath.Join(t.TempDir(), "state")
	data := randBytes(1<<20, 23)
	src := writeTemp(t, t.TempDir(), "f.bin", data)
	recPath := interruptedRecord(t, srv, state, src)
	editRecord(t, recPath, func(m map[string]any) { m["shard"] = "0/2" })

	var warnings []string
	c := newClient(t, srv, func(o *Options) {
		o.StateDir, o.SmallFileThreshold, o.Shard = state, -1, "1/2"
		o.Warn = func(m string) { warnings = append(warnings, m) }
	})
	if results, err := c.Resume(context.Background()); err != nil || len(results) != 0 {
		t.Fatalf("resume under 1/2: %d results, %v", len(results), err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `saved by shard "0/2", and this is shard "1/2"`) {
		t.Errorf("warnings %q", warnings)
	}
	r, err := c.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{})
	if err != nil || r.Status != StatusUploaded || r.ResumedFrom != 0 {
		t.Fatalf("%s from %d: %v", r.Status, r.ResumedFrom, err)
	}
	if _, err := os.Stat(recPath); err != nil {
		t.Errorf("shard 0/2's record was removed: %v", err)
	}
}
