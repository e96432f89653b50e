package upload

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
)

const testBucket = "bkt"

// newServer starts an in-memory fakegcs with the test bucket.
func newServer(t testing.TB, opts fakegcs.Options) *fakegcs.Server {
	t.Helper()
	opts.Buckets = append(opts.Buckets, testBucket)
	return fakegcs.NewTest(t, opts)
}

// testRetry is GCS's policy on a fake clock: faults cost no real time.
func testRetry() *retry.Runner {
	return &retry.Runner{Clock: retrytest.NewClock(), Rand: retrytest.Seeded(1)}
}

// newClient returns a Client for srv with small chunks, a private state
// directory and the fake-clock retry policy; mod adjusts the options.
func newClient(t testing.TB, srv *fakegcs.Server, mod func(*Options)) *Client {
	t.Helper()
	opts := Options{
		Endpoint:  srv.URL(),
		Auth:      auth.Options{NoAuth: true},
		ChunkSize: 256 << 10,
		StateDir:  filepath.Join(t.TempDir(), "state"),
		Retry:     testRetry(),
	}
	if mod != nil {
		mod(&opts)
	}
	c, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// randBytes returns n reproducible pseudo-random bytes.
func randBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16)})
	r.Read(b)
	return b
}

// writeTemp writes data to a new file under dir and returns its path.
func writeTemp(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantObject fails unless the server holds exactly data under object.
func wantObject(t testing.TB, srv *fakegcs.Server, object string, data []byte) fakegcs.ObjectAttrs {
	t.Helper()
	got, attrs, err := srv.Object(testBucket, object)
	if err != nil {
		t.Fatalf("object %s: %v", object, err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("object %s: %d bytes differ from the %d sent", object, len(got), len(data))
	}
	return attrs
}

// eventLog collects events from concurrent workers.
type eventLog struct {
	mu     sync.Mutex
	events []resumable.Event
}

func (l *eventLog) add(e resumable.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) count(kind resumable.EventKind) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }

// stoppingClient returns a client saving its state in state, and a context
// it cancels once a transfer has moved at least after bytes: a process
// stopped in the middle of a download.
func stoppingClient(t testing.TB, srv *fakegcs.Server, state string, after int64) (*Client, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := newClient(t, srv, func(o *Options) {
		o.StateDir = state
		o.Progress = func(p Progress) {
			if p.Done >= after {
				cancel()
			}
		}
	})
	return c, ctx
}
