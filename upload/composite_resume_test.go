package upload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// interruptAt runs a composite upload of src to dst that is interrupted when
// component k's first 256 KiB chunk is answered, one component at a time
// (Parallelism 1): components before k are uploaded, k is in flight, the
// rest not started.
func interruptAt(t *testing.T, srv *fakegcs.Server, stateDir, src string, dst URL, names []string, k int, mods ...func(*Options)) *Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, srv, composeOpts(512<<10, nil, func(o *Options) {
		o.StateDir, o.Parallelism = stateDir, 1
		o.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventChunk && e.Part == k+1 && e.Persisted == 256<<10 {
				cancel() // the record with this chunk is saved before the event goes out
			}
		}
		for _, mod := range mods {
			mod(o)
		}
	}))
	r, err := c.UploadFile(ctx, src, dst, UploadOptions{})
	if !errors.Is(err, context.Canceled) || r.Status != StatusInterrupted || !r.Saved {
		t.Fatalf("interrupted run: %s, saved %v, %v", r.Status, r.Saved, err)
	}
	return r
}

// A composite upload interrupted while its third component is in flight is
// continued by the same call: the two uploaded components are not sent
// again, the third resumes from the server's offset on its own session,
// and the rest are sent once.
func TestCompositeInterruptedAndResumed(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(5*512<<10, 42)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	dst, stateDir := URL{testBucket, "big.bin"}, t.TempDir()
	plan := planOf(t, src, dst, 512<<10)
	names := make([]string, len(plan))
	for i, comp := range plan {
		names[i] = comp.Name
	}
	interruptAt(t, srv, stateDir, src, dst, names, 2)
	before, _ := srv.LastSession(testBucket, names[2])
	c := newClient(t, srv, composeOpts(512<<10, nil, func(o *Options) { o.StateDir = stateDir }))
	ss, _ := c.Sessions()
	if len(ss) != 1 || ss[0].Components != 5 || ss[0].ComponentsDone != 2 || ss[0].Offset != 2*512<<10+256<<10 || ss[0].Size != int64(len(data)) {
		t.Fatalf("saved sessions %+v; want 2/5 components, %d persisted", ss, 2*512<<10+256<<10)
	}
	logFrom := len(srv.Log())
	r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "big.bin", data)
	wantNoComponents(t, srv)
	resumedFrom := int64(2*512<<10 + 256<<10)
	if r.Status != StatusResumed || r.ResumedFrom != resumedFrom || r.Transferred != int64(len(data))-resumedFrom || r.Note != "composite of 5 components" {
		t.Errorf("rerun %+v; want resumed from %d, %d sent", r, resumedFrom, int64(len(data))-resumedFrom)
	}
	sent := sentTo(srv.Log()[logFrom:])
	for i, want := range []int64{0, 0, 256 << 10, 512 << 10, 512 << 10} {
		if sent[names[i]] != want {
			t.Errorf("rerun sent %d bytes of component %d, want %d", sent[names[i]], i, want)
		}
	}
	if after, _ := srv.LastSession(testBucket, names[2]); after.Seq != before.Seq || after.State != "finalized" {
		t.Errorf("component 2: session %d (%s) after the rerun, want the saved session %d finished", after.Seq, after.State, before.Seq)
	}
	if ss, _ := c.Sessions(); len(ss) != 0 {
		t.Errorf("records left: %+v", ss)
	}
}

// A saved composite upload whose file changed since is abandoned (its
// components deleted) and the file starts over under new component names.
func TestCompositeSourceChangedBetweenRuns(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(5*512<<10, 43)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	dst, stateDir := URL{testBucket, "big.bin"}, t.TempDir()
	old := planOf(t, src, dst, 512<<10)
	names := []string{old[0].Name, old[1].Name, old[2].Name}
	interruptAt(t, srv, stateDir, src, dst, names, 2)
	data[0] ^= 1
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv, composeOpts(512<<10, nil, func(o *Options) { o.StateDir = stateDir }))
	r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "big.bin", data)
	wantNoComponents(t, srv)
	if r.Status != StatusRestarted || !strings.HasPrefix(r.Note, "source changed since the saved session (") ||
		!strings.HasSuffix(r.Note, "): started over; composite of 5 components") || r.Transferred != int64(len(data)) {
		t.Errorf("rerun %s %q, %d sent", r.Status, r.Note, r.Transferred)
	}
	if s, _ := srv.LastSession(testBucket, old[2].Name); s.State != "cancelled" {
		t.Errorf("the old component 2's session is %s, want cancelled", s.State)
	}
}

// A saved record whose components are not the plan its fingerprint makes
// (edited, or of another version) is not used: nothing it names is
// touched, and the file starts over.
func TestCompositeRecordTampered(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(5*512<<10, 44)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	dst, stateDir := URL{testBucket, "big.bin"}, t.TempDir()
	plan := planOf(t, src, dst, 512<<10)
	interruptAt(t, srv, stateDir, src, dst, []string{plan[0].Name, plan[1].Name, plan[2].Name}, 2)
	srv.PutObject(testBucket, "precious", []byte("keep me"))
	st, _ := state.Open(stateDir)
	recs, _ := st.List()
	recs[0].Upload.Components[1].Name = "precious"
	if err := st.Save(recs[0]); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv, composeOpts(512<<10, nil, func(o *Options) { o.StateDir = stateDir }))
	r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "precious", []byte("keep me"))
	wantObject(t, srv, "big.bin", data)
	want := "saved composite upload unusable (component 1 is not the plan's " + plan[1].Name + " (524288-1048576)): started over; composite of 5 components"
	if r.Status != StatusRestarted || r.Note != want {
		t.Errorf("rerun %s %q; want restarted %q", r.Status, r.Note, want)
	}
}

// A saved component CRC32C that is not the component's makes the composite
// fail its check: the corrupt object is deleted from the destination, the
// components and the record too, and the error matches
// ErrChecksumMismatch.
func TestCompositeChecksumMismatch(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(5*512<<10, 45)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	dst, stateDir := URL{testBucket, "big.bin"}, t.TempDir()
	plan := planOf(t, src, dst, 512<<10)
	interruptAt(t, srv, stateDir, src, dst, []string{plan[0].Name, plan[1].Name, plan[2].Name}, 2)
	st, _ := state.Open(stateDir)
	recs, _ := st.List()
	recs[0].Upload.Components[0].CRC32C ^= 1
	st.Save(recs[0])
	c := newClient(t, srv, composeOpts(512<<10, nil, func(o *Options) { o.StateDir = stateDir }))
	r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
	want := "upload: gs://bkt/big.bin: the composite object is corrupt, it was deleted; upload it again: resumable: checksum mismatch for gs://bkt/big.bin"
	if !errors.Is(err, resumable.ErrChecksumMismatch) || !strings.HasPrefix(err.Error(), want) || r.Status != StatusFailed {
		t.Fatalf("error %v; want %q…", err, want)
	}
	if _, _, err := srv.Object(testBucket, "big.bin"); !errors.Is(err, fakegcs.ErrObjectNotFound) {
		t.Errorf("the corrupt composite is still there: %v", err)
	}
	wantNoComponents(t, srv)
	if ss, _ := c.Sessions(); len(ss) != 0 {
		t.Errorf("records left: %+v", ss)
	}
	if names, _ := srv.ObjectNames(testBucket); len(names) != 0 {
		t.Errorf("objects left: %q", names)
	}
}

// TestMain's child for a composite upload: see helperMain.
func compositeHelperOptions(o *Options) {
	o.ParallelThreshold, o.ComponentSize, o.ParallelUpload, o.Parallelism = 1<<20, 1<<20, ParallelOn, 2
}

// A process SIGKILLed while its components are in flight: the rerun sends
// no byte of a component that was finished, continues each one in flight
// from the server's offset on its saved session, and sends the others once.
func TestKillAndResumeComposite(t *testing.T) {
	srv := newServer(t, fakegcs.Options{DisableMD5: true})
	throttle := srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk,
		Kind: fakegcs.KindThrottle, BytesPerSecond: 1 << 20, Times: -1})
	data := randBytes(6<<20, 46)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	stateDir := t.TempDir()
	cmd := startHelper(t, "composite", srv.URL(), stateDir, src)
	dst := URL{testBucket, "big.bin"}
	plan := planOf(t, src, dst, 1<<20)
	// Two components at a time: wait for the first two finished and one of
	// the next two part-way.
	waitFor(t, "two components finished and one in flight", func() bool {
		finished, partial := 0, false
		for _, comp := range plan {
			s, _ := srv.LastSession(testBucket, comp.Name)
			if s.State == "finalized" {
				finished++
			}
			partial = partial || s.State == "active" && s.Persisted > 0
		}
		return finished >= 2 && partial
	})
	kill(t, cmd)
	waitFor(t, "the server to finish the killed requests", func() bool {
		n := 0
		for _, r := range srv.Log() {
			if r.Op == "storage.objects.insert" {
				n++
			}
		}
		return n == srv.Count("storage.objects.insert")
	})
	throttle.Remove()
	want, had := lacking(t, srv, plan)
	logFrom := len(srv.Log())
	c := newClient(t, srv, func(o *Options) { o.StateDir = stateDir; compositeHelperOptions(o) })
	r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "big.bin", data)
	wantNoComponents(t, srv)
	sent := sentTo(srv.Log()[logFrom:])
	for name, n := range want {
		if sent[name] != n {
			t.Errorf("rerun sent %d bytes of %s, want the %d the server lacked", sent[name], filepath.Base(name), n)
		}
	}
	if r.Status != StatusResumed || r.Transferred != int64(len(data))-had {
		t.Errorf("rerun %s, sent %d; want resumed, %d sent", r.Status, r.Transferred, int64(len(data))-had)
	}
}

// lacking returns what the server lacks of each component, and what it
// has in all, taking its word: the persisted offset of each one's session.
func lacking(t *testing.T, srv *fakegcs.Server, plan []state.Component) (map[string]int64, int64) {
	t.Helper()
	want := map[string]int64{}
	var had int64
	var states []string
	for _, comp := range plan {
		s, ok := srv.LastSession(testBucket, comp.Name)
		if ok && s.State != "active" && s.State != "finalized" {
			t.Fatalf("component %s: session %s", comp.Name, s.State)
		}
		want[comp.Name] = comp.End - comp.Start - s.Persisted
		had += s.Persisted
		states = append(states, fmt.Sprintf("%s %d", s.State, s.Persisted))
	}
	t.Logf("killed with %d bytes on the server: components %q", had, states)
	return want, had
}
