package upload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// moveResults collects what a batch gives Options.OnResult, by source.
type moveResults struct {
	mu sync.Mutex
	m  map[string]*Result
}

func (rs *moveResults) add(r *Result) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.m[r.Source] = r
}

func collecting(rs *moveResults) func(*Options) {
	rs.m = map[string]*Result{}
	return func(o *Options) { o.OnResult = rs.add }
}

// Two moves to one object: the second would overwrite the first's only copy once the
// first's source is gone. It fails with ErrCollision, and its source stays.
func TestMoveSeqCollidingDestinations(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	var rs moveResults
	c := newClient(t, srv, collecting(&rs))
	dir := t.TempDir()
	a := writeTemp(t, dir, "x/f", []byte("first"))
	b := writeTemp(t, dir, "y/f", []byte("second"))
	items := []MoveItem{{Src: sideOf(a), Dst: sideOf("gs://bkt/f")}, {Src: sideOf(b), Dst: sideOf("gs://bkt/f")}}
	err := c.MoveSeq(context.Background(), slices.Values(items), MoveOptions{})
	if !errors.Is(err, ErrSomeFailed) {
		t.Fatalf("MoveSeq: %v, want ErrSomeFailed", err)
	}
	if r := rs.m[a]; r == nil || r.Status != StatusMoved {
		t.Fatalf("first: %+v", r)
	}
	if r := rs.m[b]; r == nil || r.Status != StatusFailed || !errors.Is(r.Err, ErrCollision) {
		t.Fatalf("second: %+v", r)
	}
	wantObject(t, srv, "f", []byte("first"))
	if got, err := os.ReadFile(b); err != nil || string(got) != "second" {
		t.Fatalf("the second source: %q, %v", got, err)
	}
}

// Two objects under one prefix that map to one local file ("m/x", "m/./x"): the
// first moves, the second is refused before anything is fetched and stays.
func TestMovePrefixDownCollidingNames(t *testing.T) {
	srv := newServer(t, fakegcs.Options{LaxNames: true})
	for _, n := range []string{"m/x", "m/./x"} {
		if _, err := srv.PutObject(testBucket, n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	var rs moveResults
	c := newClient(t, srv, collecting(&rs))
	dir := t.TempDir()
	_, err := c.MovePrefix(context.Background(), URL{Bucket: testBucket, Object: "m"}, sideOf(dir), MoveOptions{})
	if !errors.Is(err, ErrSomeFailed) {
		t.Fatalf("MovePrefix: %v, want ErrSomeFailed", err)
	}
	first, second := rs.m["gs://bkt/m/./x"], rs.m["gs://bkt/m/x"]
	if first == nil || second == nil || first.Status != StatusMoved || second.Status != StatusFailed || !errors.Is(second.Err, ErrCollision) {
		t.Fatalf("results: %+v, %+v", first, second)
	}
	wantObject(t, srv, "m/x", []byte("m/x"))
	if got, _ := os.ReadFile(filepath.Join(dir, "x")); string(got) != "m/./x" {
		t.Fatalf("local file holds %q", got)
	}
}

// A move interrupted after its copy, before the removal: both stay, and the result
// says interrupted with ErrSourceKept.
func TestMoveInterruptedAfterCopyKeepsSource(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, srv, func(o *Options) {
		o.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventFinished { // the object exists
				cancel()
			}
		}
	})
	data := randBytes(100<<10, 7)
	src := writeTemp(t, t.TempDir(), "a.bin", data)
	r, err := c.Move(ctx, sideOf(src), sideOf("gs://bkt/a.bin"), MoveOptions{})
	if r.Status != StatusInterrupted || !errors.Is(err, ErrSourceKept) || !errors.Is(err, context.Canceled) {
		t.Fatalf("status %s, err %v", r.Status, err)
	}
	wantObject(t, srv, "a.bin", data)
	if got, err := os.ReadFile(src); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("source: %v", err)
	}
}

// A move onto an object another move of the batch moves from, in either
// order: run at once, one would copy over the other's source before it
// moved, its only copy (found in review; the command refuses such a plan
// before anything moves). The second is refused and its source kept.
func TestMoveSeqChainRefused(t *testing.T) {
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		srv := newServer(t, fakegcs.Options{})
		var rs moveResults
		collect := collecting(&rs)
		c := newClient(t, srv, func(o *Options) { collect(o); o.Parallelism = 1 })
		srv.PutObject(testBucket, "src/g", []byte("new"))
		srv.PutObject(testBucket, "to/A/g", []byte("the only copy"))
		moves := []MoveItem{{Src: sideOf("gs://bkt/src/g"), Dst: sideOf("gs://bkt/to/A/g")}, {Src: sideOf("gs://bkt/to/A/g"), Dst: sideOf("gs://bkt/to/g")}}
		items := []MoveItem{moves[order[0]], moves[order[1]]}
		if err := c.MoveSeq(context.Background(), slices.Values(items), MoveOptions{}); !errors.Is(err, ErrSomeFailed) {
			t.Fatalf("order %v: MoveSeq: %v, want ErrSomeFailed", order, err)
		}
		second := rs.m[items[1].Src.String()]
		if second == nil || second.Status != StatusFailed || !errors.Is(second.Err, ErrCollision) {
			t.Errorf("order %v: the second move: %+v", order, second)
		}
		// The second's source is kept: moved onto first (order 0 1, as that
		// move asked: a stream cannot know what comes after), or away first
		// (order 1 0) and then not overwritten.
		want := map[string]string{"to/A/g": "new", "src/g": ""}
		if order[0] == 1 {
			want = map[string]string{"to/g": "the only copy", "src/g": "new"}
		}
		for n, w := range want {
			b, _, err := srv.Object(testBucket, n)
			if w == "" && err == nil || w != "" && string(b) != w {
				t.Errorf("order %v: %s holds %q (%v), want %q", order, n, b, err, w)
			}
		}
	}
}
