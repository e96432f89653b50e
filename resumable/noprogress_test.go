package resumable

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/retry"
)

// A server that answers every chunk with a 308 that keeps nothing (fakegcs
// short-308, times=-1) must not be asked again at once, forever: each such
// answer costs an attempt and waits by GCS's policy, and the upload ends in
// the default budget of 12 attempts with an error that says why.
func TestShort308ForeverEndsInBudget(t *testing.T) {
	e := newEnv(t, kib256)
	in := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk,
		Kind: fakegcs.KindShort308, Times: -1})
	ctx := context.Background()
	data := testData(1 << 20)
	s, err := e.c.Start(ctx, ObjectSpec{Bucket: "bkt", Name: "o", Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.c.Upload(ctx, s, bytes.NewReader(data))
	if !errors.Is(err, retry.ErrNoProgress) || !strings.Contains(err.Error(), "gave up after 12 attempts") {
		t.Fatalf("err = %v, want no progress after 12 attempts", err)
	}
	// Rand is fixed at 0.5: 2^n s + 500 ms, capped at 32 s.
	want := []time.Duration{1500, 2500, 4500, 8500, 16500, 32000, 32000, 32000, 32000, 32000, 32000}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if got := e.clk.Sleeps(); !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	st, _ := e.srv.LastSession("bkt", "o")
	if in.Fired() != 12 || st.Chunks != 12 || st.StatusQueries != 0 || st.Persisted != 0 {
		t.Fatalf("fault fired %d times; session %+v: want 12 chunks, no status query, nothing persisted", in.Fired(), st)
	}
}

// Progress resets the budget: a no-progress answer after progress is again
// the first retry (1.5 s), never the n-th of all such answers so far.
func TestUploadNoProgressCostsBudget(t *testing.T) {
	for _, kind := range []string{"file", "stream"} {
		rt := newScript(t,
			step{want: c0, status: 308}, // nothing kept: retry 1
			step{want: c0, status: 308, rng: persist0},
			step{want: c1, status: 308, rng: persist0}, // nothing new: retry 1 again
			step{want: c1, status: 308, rng: persist0}, // and again: retry 2
			step{want: c1, status: 308, rng: persist1},
			step{want: cLast, status: 200, body: ok600})
		c, clk, _ := testClient(t, rt, kib256)
		s := testSession(int64(len(data600)), kib256)
		var err error
		if kind == "file" {
			_, err = c.Upload(context.Background(), s, bytes.NewReader(data600))
		} else {
			_, err = c.UploadStream(context.Background(), s, bytes.NewReader(data600))
		}
		want := []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond, 2500 * time.Millisecond}
		if err != nil || !slices.Equal(clk.Sleeps(), want) {
			t.Fatalf("%s: err %v, waits %v; want success after waits %v", kind, err, clk.Sleeps(), want)
		}
		checkSent(t, rt.got, data600)
	}
}
