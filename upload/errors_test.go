package upload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// Tests of the errors the package documents, each as the caller meets it.

// A file that changes while it is uploaded fails with an error matching
// resumable.ErrSourceChanged, whichever way it went up: one multipart
// request, a resumable session, a composite upload, or a change noticed
// only once the object was made.
func TestSourceChangedMatchesErrSourceChanged(t *testing.T) {
	edit := func(t *testing.T, p string) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.Write([]byte("more"))
		f.Close()
	}
	for _, tc := range []struct {
		name string
		size int
		mod  func(*Options)
		when func(e resumable.Event, p Progress) bool
		want string
	}{
		{"multipart", 100 << 10, nil,
			func(_ resumable.Event, p Progress) bool { return p.Size > 0 }, "changed while being uploaded"},
		{"resumable", 1 << 20, func(o *Options) { o.SmallFileThreshold = -1 },
			func(e resumable.Event, _ Progress) bool {
				return e.Kind == resumable.EventChunk && e.Persisted >= 256<<10
			},
			"changed while being uploaded"},
		{"composite", 2 << 20, composeOpts(512<<10, nil, func(o *Options) { o.ParallelUpload = ParallelOn }),
			func(e resumable.Event, _ Progress) bool {
				return e.Kind == resumable.EventChunk && e.Persisted >= 256<<10
			},
			"changed while being uploaded"},
		{"after the last byte", 1 << 20, func(o *Options) { o.SmallFileThreshold = -1 },
			func(e resumable.Event, _ Progress) bool { return e.Kind == resumable.EventFinished },
			"changed while it was uploaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{})
			src := writeTemp(t, t.TempDir(), "f.bin", randBytes(tc.size, 31))
			var once sync.Once
			fire := func(e resumable.Event, p Progress) {
				if tc.when(e, p) {
					once.Do(func() { edit(t, src) })
				}
			}
			c := newClient(t, srv, func(o *Options) {
				if tc.mod != nil {
					tc.mod(o)
				}
				o.OnEvent = func(e resumable.Event) { fire(e, Progress{}) }
				o.Progress = func(p Progress) { fire(resumable.Event{}, p) }
			})
			r, err := c.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{})
			if !errors.Is(err, resumable.ErrSourceChanged) || !strings.Contains(err.Error(), src+" "+tc.want) || r.Status != StatusFailed {
				t.Fatalf("%s: %v; want an error matching resumable.ErrSourceChanged saying %q", r.Status, err, tc.want)
			}
		})
	}
}

// Every bad option New refuses matches ErrBadOption, as its doc says, and
// names the option: an Endpoint that is not an http(s) URL included. No
// request is made. A bad STORAGE_EMULATOR_HOST is the environment's fault,
// not an option: it matches auth.ErrBadEndpoint only.
func TestNewBadOptionsMatchErrBadOption(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Endpoint: "ftp://127.0.0.1:1"}, `upload: bad option: auth: bad endpoint "ftp://127.0.0.1:1": want http(s)://host[:port] or host:port`},
		{Options{Endpoint: "127.0.0.1:4443"}, `upload: bad option: auth: bad endpoint "127.0.0.1:4443"`},
		{Options{Endpoint: "http://127.0.0.1:1/?x=1"}, `upload: bad option: auth: bad endpoint "http://127.0.0.1:1/?x=1"`},
		{Options{Auth: auth.Options{Endpoint: "gopher://h"}}, `upload: bad option: auth: bad endpoint "gopher://h"`},
		{Options{Parallelism: -1}, "upload: bad option: parallelism -1 is negative"},
		{Options{MaxSlices: -2}, "upload: bad option: max slices -2 is negative"},
		{Options{ParallelUpload: "always"}, `upload: bad option: parallel upload mode "always" is not auto, on or off`},
		{Options{ComponentSize: -1}, "upload: bad option: component size -1 is negative"},
	} {
		tc.opts.Auth.NoAuth = true
		_, err := New(context.Background(), tc.opts)
		if !errors.Is(err, ErrBadOption) || !strings.HasPrefix(fmt.Sprint(err), tc.want) {
			t.Errorf("New: %v; want an error matching ErrBadOption starting %q", err, tc.want)
		}
	}
	t.Setenv(auth.EmulatorHostEnv, "ftp://127.0.0.1:1")
	_, err := New(context.Background(), Options{Auth: auth.Options{NoAuth: true}})
	if !errors.Is(err, auth.ErrBadEndpoint) || errors.Is(err, ErrBadOption) {
		t.Errorf("bad %s: %v; want auth.ErrBadEndpoint, not ErrBadOption", auth.EmulatorHostEnv, err)
	}
}
