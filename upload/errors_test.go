package upload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
		{Options{Endpoint: "127.0.0.1:4443"}, `upload: bad option: Endpoint "127.0.0.1:4443" has no scheme: want scheme://host[:port], e.g. "http://127.0.0.1:4443"`},
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

// An interrupted batch returns what Upload's doc says: an error matching
// ErrSomeFailed and the context's error, for every batch method, even when
// its first failure is a failure of its own (a broken symlink, an unsafe
// object name) and the interrupted transfers come after.
func TestInterruptedBatchMatchesContextError(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "a-broken")); err != nil {
		t.Fatal(err)
	}
	items := []Item{{Local: filepath.Join(dir, "a-broken"), Remote: URL{testBucket, "d/a-broken"}}}
	for i := range 3 {
		p := writeTemp(t, dir, fmt.Sprintf("f%d.bin", i), randBytes(1<<20, uint64(40+i)))
		items = append(items, Item{Local: p, Remote: URL{testBucket, fmt.Sprintf("d/f%d.bin", i)}})
	}
	srv.PutObject(testBucket, "p/../escape", []byte("refused"))
	srv.PutObject(testBucket, "p/a.bin", randBytes(1<<20, 50))
	srv.PutObject(testBucket, "p/b.bin", randBytes(1<<20, 51))
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context, c *Client) error
	}{
		{"Upload", func(ctx context.Context, c *Client) error {
			_, err := c.Upload(ctx, items, UploadOptions{})
			return err
		}},
		{"UploadDir", func(ctx context.Context, c *Client) error {
			_, err := c.UploadDir(ctx, dir, URL{testBucket, "d"}, UploadOptions{})
			return err
		}},
		{"UploadSeq", func(ctx context.Context, c *Client) error {
			return c.UploadSeq(ctx, slices.Values(items), UploadOptions{})
		}},
		{"DownloadPrefix", func(ctx context.Context, c *Client) error {
			_, err := c.DownloadPrefix(ctx, URL{testBucket, "p/"}, t.TempDir(), DownloadOptions{})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := newClient(t, srv, func(o *Options) {
				o.Parallelism, o.SmallFileThreshold = 1, -1
				o.Progress = func(p Progress) {
					if p.Done >= 256<<10 {
						cancel() // the first transfer is in flight
					}
				}
			})
			err := tc.run(ctx, c)
			if !errors.Is(err, ErrSomeFailed) || !errors.Is(err, context.Canceled) {
				t.Fatalf("%v; want an error matching ErrSomeFailed and context.Canceled", err)
			}
			if !regexp.MustCompile(`^upload: 1 of \d transfers failed and [1-3] interrupted; first: `).MatchString(err.Error()) {
				t.Errorf("error %q does not say 1 failed and some were interrupted", err)
			}
		})
	}
}

// UploadSeq stops pulling its iterator once the context is cancelled: an
// unbounded walk ends at once, the item in hand reported interrupted.
func TestUploadSeqStopsPullingWhenCancelled(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	dir := t.TempDir()
	src := writeTemp(t, dir, "f.bin", []byte("small"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var results []*Result
	c := newClient(t, srv, func(o *Options) {
		o.Parallelism = 2
		o.OnResult = func(r *Result) { mu.Lock(); results = append(results, r); mu.Unlock() }
	})
	const cancelAt, limit = 10, 100000 // limit: a bound for a loop that does not stop
	pulled := 0
	endless := func(yield func(Item) bool) {
		for pulled < limit {
			pulled++
			if pulled == cancelAt {
				cancel()
			}
			if !yield(Item{Local: src, Remote: URL{testBucket, fmt.Sprintf("seq/%d", pulled)}}) {
				return
			}
		}
	}
	err := c.UploadSeq(ctx, endless, UploadOptions{})
	if pulled != cancelAt {
		t.Errorf("pulled %d items; want %d: the iteration must stop once the context is cancelled", pulled, cancelAt)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrSomeFailed) {
		t.Errorf("error %v; want one matching ErrSomeFailed and context.Canceled", err)
	}
	mu.Lock()
	defer mu.Unlock()
	var notStarted []string
	for _, r := range results {
		if r.Status == StatusInterrupted && r.Note == "not started" {
			notStarted = append(notStarted, r.Object)
		}
	}
	if len(results) != cancelAt || !slices.Equal(notStarted, []string{fmt.Sprintf("seq/%d", cancelAt)}) {
		t.Errorf("%d results, not started: %q; want %d, only the item in hand not started", len(results), notStarted, cancelAt)
	}
}

// Without a state directory an interrupted download leaves nothing behind:
// no record says which generation its partial file holds, so nothing would
// ever continue or remove ".NAME.gcsput-partial". Whole or sliced, one file
// or a prefix.
func TestInterruptedDownloadWithoutStateLeavesNoPartial(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.PutObject(testBucket, "p/f.bin", randBytes(4<<20, 60))
	for _, tc := range []struct {
		name   string
		sliced bool
		run    func(ctx context.Context, c *Client, dir string) (*Result, error)
	}{
		{"Download", false, func(ctx context.Context, c *Client, dir string) (*Result, error) {
			return c.Download(ctx, URL{testBucket, "p/f.bin"}, filepath.Join(dir, "f.bin"), DownloadOptions{})
		}},
		{"Download sliced", true, func(ctx context.Context, c *Client, dir string) (*Result, error) {
			return c.Download(ctx, URL{testBucket, "p/f.bin"}, filepath.Join(dir, "f.bin"), DownloadOptions{})
		}},
		{"DownloadPrefix", false, func(ctx context.Context, c *Client, dir string) (*Result, error) {
			rs, err := c.DownloadPrefix(ctx, URL{testBucket, "p/"}, dir, DownloadOptions{})
			if len(rs) != 1 {
				t.Fatalf("%d results: %v", len(rs), err)
			}
			return rs[0], err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Held past the cancel at 1 MiB, which is then the only way
			// the download ends: each 1 MiB slice after 512 KiB, a whole
			// download after 1.5 MiB.
			held := int64(1536 << 10)
			if tc.sliced {
				held = 512 << 10
			}
			defer holdGets(srv, held).Remove()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := newClient(t, srv, func(o *Options) {
				o.StateDir = ""
				if tc.sliced {
					o.SliceThreshold, o.MaxSlices = 1<<20, 4
				}
				o.Progress = func(p Progress) {
					if p.Done >= 1<<20 && p.Done < p.Size {
						cancel()
					}
				}
			})
			dir := t.TempDir()
			r, err := tc.run(ctx, c, dir)
			if !errors.Is(err, context.Canceled) || r.Status != StatusInterrupted || r.Saved {
				t.Fatalf("%s (saved %v): %v; want interrupted, not saved", r.Status, r.Saved, err)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				t.Errorf("left behind: %s", e.Name())
			}
		})
	}
}

// A saved transfer that another live transfer holds: CancelSession leaves it
// alone (ErrInUse, an InUseError naming the holder's pid), and
// ForceCancelSession asks the holder to stop, whose transfer then ends with
// an error matching ErrStopped, its session cancelled.
func TestInUseThenStopped(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindThrottle, BytesPerSecond: 1 << 20, Times: -1})
	stateDir := filepath.Join(t.TempDir(), "state")
	holder := newClient(t, srv, func(o *Options) { o.StateDir, o.ChunkSize = stateDir, 256<<10 })
	other := newClient(t, srv, func(o *Options) { o.StateDir = stateDir })
	src := writeTemp(t, t.TempDir(), "big.bin", randBytes(12<<20, 3))
	done := make(chan error, 1)
	go func() {
		_, err := holder.UploadFile(context.Background(), src, URL{testBucket, "big.bin"}, UploadOptions{})
		done <- err
	}()
	var s Session
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		ss, err := other.Sessions()
		if err == nil && len(ss) == 1 {
			s = ss[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upload saved no session: %v, %v", ss, err)
		}
	}
	err := other.CancelSession(context.Background(), s)
	var busy *InUseError
	if !errors.Is(err, ErrInUse) || !errors.As(err, &busy) || busy.PID != os.Getpid() {
		t.Fatalf("CancelSession of a held session: %v (%+v); want ErrInUse naming pid %d", err, busy, os.Getpid())
	}
	if err := other.ForceCancelSession(context.Background(), s, 2*time.Minute); err != nil {
		t.Fatalf("ForceCancelSession: %v", err)
	}
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Errorf("the holder's upload: %v; want ErrStopped", err)
	}
	if ss, err := other.Sessions(); err != nil || len(ss) != 0 {
		t.Errorf("sessions after the forced cancel: %v, %v", ss, err)
	}
}

// MoveSeq stops pulling its items once the context ends, as UploadSeq does
// (both run on runSeq): before, a cancelled move batch pulled and reported
// every remaining item of the stream, so a huge one walked on after Ctrl-C.
func TestMoveSeqStopsPullingWhenCancelled(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	src := writeTemp(t, t.TempDir(), "f.bin", []byte("small"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, srv, func(o *Options) { o.Parallelism = 2 })
	const cancelAt, limit = 10, 100000 // limit: a bound for a loop that does not stop
	pulled := 0
	endless := func(yield func(MoveItem) bool) {
		for pulled < limit {
			pulled++
			if pulled == cancelAt {
				cancel()
			}
			if !yield(MoveItem{Src: sideOf(src), Dst: sideOf(fmt.Sprintf("gs://bkt/seq/%d", pulled))}) {
				return
			}
		}
	}
	err := c.MoveSeq(ctx, endless, MoveOptions{})
	if pulled != cancelAt {
		t.Errorf("pulled %d items; want %d: the iteration must stop once the context is cancelled", pulled, cancelAt)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrSomeFailed) {
		t.Errorf("error %v; want one matching ErrSomeFailed and context.Canceled", err)
	}
}
