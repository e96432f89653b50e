package upload

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// interrupted leaves a saved composite upload of a new file to dst whose
// components 0 and 1 are uploaded and 2 is in flight; it returns the plan's
// names.
func interrupted(t *testing.T, srv *fakegcs.Server, stateDir string, dst URL, seed uint64, mods ...func(*Options)) []string {
	t.Helper()
	src := writeTemp(t, t.TempDir(), "f.bin", randBytes(5*512<<10, seed))
	var names []string
	for _, comp := range planOf(t, src, dst, 512<<10) {
		names = append(names, comp.Name)
	}
	interruptAt(t, srv, stateDir, src, dst, names, 2, mods...)
	return names
}

// objectsIn lists a bucket's objects.
func objectsIn(t testing.TB, srv *fakegcs.Server, bucket string) []string {
	t.Helper()
	names, err := srv.ObjectNames(bucket)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// Cancelling a saved composite upload cancels its component session in
// flight, deletes its uploaded components and removes the record.
func TestCancelCompositeSession(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	stateDir := t.TempDir()
	names := interrupted(t, srv, stateDir, URL{testBucket, "big.bin"}, 70)
	c := newClient(t, srv, func(o *Options) { o.StateDir = stateDir })
	ss, _ := c.Sessions()
	if len(ss) != 1 || ss[0].Components != 5 || ss[0].ComponentsDone != 2 {
		t.Fatalf("sessions %+v", ss)
	}
	if err := c.CancelSession(context.Background(), ss[0]); err != nil {
		t.Fatal(err)
	}
	if got := objectsIn(t, srv, testBucket); len(got) != 0 {
		t.Errorf("objects left: %q", got)
	}
	if s, _ := srv.LastSession(testBucket, names[2]); s.State != "cancelled" {
		t.Errorf("component 2's session is %s, want cancelled", s.State)
	}
	if ss, _ := c.Sessions(); len(ss) != 0 {
		t.Errorf("records left: %+v", ss)
	}
}

// GCSessions removes an expired composite upload with its components, and
// orphans older than MaxSessionAge in the buckets of saved composite
// uploads and in those named; it keeps a saved upload's components, a
// younger orphan, and anything under gcsput-tmp/ not named as components
// are.
func TestGCCompositeSessions(t *testing.T) {
	t0 := time.Now()
	var mu sync.Mutex
	srvNow := t0.Add(-7 * 24 * time.Hour)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return srvNow }
	setClock := func(at time.Time) { mu.Lock(); srvNow = at; mu.Unlock() }
	srv := newServer(t, fakegcs.Options{Buckets: []string{"other"}, Now: clock})
	stateDir := t.TempDir()
	then := func(o *Options) { o.Now = clock }
	expired := interrupted(t, srv, stateDir, URL{testBucket, "old.bin"}, 71, then)
	setClock(t0.Add(-8 * 24 * time.Hour))
	orphan, otherOrphan := ComponentPrefix+"0123456789abcdef0123456789abcdef/0", ComponentPrefix+"fedcba9876543210fedcba9876543210/3"
	srv.PutObject(testBucket, orphan, []byte("old"))
	srv.PutObject("other", otherOrphan, []byte("old"))
	srv.PutObject(testBucket, ComponentPrefix+"notes.txt", []byte("not a component"))
	setClock(t0.Add(-24 * time.Hour))
	young := ComponentPrefix + "00000000000000000000000000000000/1"
	srv.PutObject(testBucket, young, []byte("young"))
	setClock(t0)
	live := interrupted(t, srv, stateDir, URL{testBucket, "new.bin"}, 72, then)

	c := newClient(t, srv, func(o *Options) { o.StateDir = stateDir; o.Now = clock })
	got, err := c.GCSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sessions) != 1 || got.Sessions[0].Dest != "gs://bkt/old.bin" || got.Sessions[0].Components != 5 {
		t.Errorf("removed sessions %+v", got.Sessions)
	}
	want := []URL{{testBucket, expired[0]}, {testBucket, expired[1]}, {testBucket, orphan}}
	if !slices.Equal(got.Components, want) {
		t.Errorf("deleted %v, want %v", got.Components, want)
	}
	if s, _ := srv.LastSession(testBucket, expired[2]); s.State != "cancelled" {
		t.Errorf("the expired upload's component session is %s, want cancelled", s.State)
	}
	keep := []string{ComponentPrefix + "00000000000000000000000000000000/1", live[0], live[1], ComponentPrefix + "notes.txt"}
	slices.Sort(keep)
	if names := objectsIn(t, srv, testBucket); !slices.Equal(names, keep) {
		t.Errorf("left %q, want %q", names, keep)
	}
	if ss, _ := c.Sessions(); len(ss) != 1 || ss[0].Dest != "gs://bkt/new.bin" {
		t.Errorf("sessions left %+v", ss)
	}
	// A bucket no record names is swept only when named.
	if names := objectsIn(t, srv, "other"); len(names) != 1 {
		t.Errorf("other bucket: %q", names)
	}
	got, err = c.GCSessions(context.Background(), "other")
	if err != nil || len(got.Sessions) != 0 || !slices.Equal(got.Components, []URL{{"other", otherOrphan}}) {
		t.Errorf("sweeping gs://other: %+v, %v", got, err)
	}
}
