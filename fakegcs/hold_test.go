package fakegcs_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/gcsput/gcsput/fakegcs"
)

// refused asserts GCS's 403 with its reason and the start of its message.
func refused(t *testing.T, what string, err error, reason, msg string) {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != http.StatusForbidden || !strings.HasPrefix(ge.Message, msg) ||
		len(ge.Errors) == 0 || ge.Errors[0].Reason != reason {
		t.Fatalf("%s: %v, want 403 %s %q", what, err, reason, msg)
	}
}

// TestClientHolds: the official client sets and releases temporary and
// event-based holds; while one is set, a delete, an overwrite, a compose
// onto the object and a move of it are refused with GCS's 403 and words.
func TestClientHolds(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	ctx := context.Background()
	obj := c.Bucket("bkt").Object("h")
	w := obj.NewWriter(ctx)
	w.TemporaryHold = true
	if _, err := w.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !w.Attrs().TemporaryHold {
		t.Fatalf("written attrs: %+v", w.Attrs())
	}
	const temp = "Object 'bkt/h' is under active Temporary hold and cannot be deleted, overwritten or archived until hold is removed."
	refused(t, "delete", obj.Delete(ctx), "forbidden", temp)
	w = obj.NewWriter(ctx)
	w.Write([]byte("over"))
	refused(t, "overwrite", w.Close(), "forbidden", temp)
	srv.PutObject("bkt", "part", []byte("p"))
	_, err := obj.ComposerFrom(c.Bucket("bkt").Object("part")).Run(ctx)
	refused(t, "compose onto", err, "forbidden", temp)
	_, err = obj.Move(ctx, storage.MoveObjectDestination{Object: "elsewhere"})
	refused(t, "move", err, "forbidden", temp)

	a, err := obj.Update(ctx, storage.ObjectAttrsToUpdate{TemporaryHold: false, EventBasedHold: true})
	if err != nil || a.TemporaryHold || !a.EventBasedHold {
		t.Fatalf("update: %+v, %v", a, err)
	}
	refused(t, "delete under event-based hold", obj.Delete(ctx), "forbidden",
		"Object 'bkt/h' is under active Event-Based hold and cannot be deleted, overwritten or archived until hold is removed.")
	// A copy never carries its source's holds.
	cp, err := c.Bucket("bkt").Object("copy").CopierFrom(obj).Run(ctx)
	if err != nil || cp.EventBasedHold || cp.TemporaryHold {
		t.Fatalf("copy: %+v, %v", cp, err)
	}
	if _, err := obj.Update(ctx, storage.ObjectAttrsToUpdate{EventBasedHold: false}); err != nil {
		t.Fatal(err)
	}
	if err := obj.Delete(ctx); err != nil {
		t.Fatalf("delete once released: %v", err)
	}

	// defaultEventBasedHold: new objects are created held.
	if _, err := c.Bucket("bkt").Update(ctx, storage.BucketAttrsToUpdate{DefaultEventBasedHold: true}); err != nil {
		t.Fatal(err)
	}
	if a, _ := srv.PutObject("bkt", "new", []byte("n")); !a.EventBasedHold {
		t.Fatalf("new object under defaultEventBasedHold: %+v", a)
	}
}

// TestClientObjectRetention: a bucket created with object retention
// enabled takes an object's retention (mode and retain-until time); until
// then the object can be neither deleted nor replaced; a Locked retention
// cannot be shortened or removed, an Unlocked one only with
// overrideUnlockedRetention. A bucket without it refuses a retention.
func TestClientObjectRetention(t *testing.T) {
	now := time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)
	var clock fakeClock
	clock.set(now)
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"plain"}, Now: clock.now})
	c := newClient(t, srv)
	ctx := context.Background()
	if err := c.Bucket("ret").SetObjectRetention(true).Create(ctx, "p", nil); err != nil {
		t.Fatal(err)
	}
	if ba, err := c.Bucket("ret").Attrs(ctx); err != nil || ba.ObjectRetentionMode != "Enabled" {
		t.Fatalf("bucket: %+v, %v", ba, err)
	}
	write := func(bucket, name string, r *storage.ObjectRetention) error {
		w := c.Bucket(bucket).Object(name).NewWriter(ctx)
		w.Retention = r
		w.Write([]byte(name))
		return w.Close()
	}
	until := now.Add(time.Hour)
	var ge *googleapi.Error
	if err := write("plain", "x", &storage.ObjectRetention{Mode: "Unlocked", RetainUntil: until}); !errors.As(err, &ge) || ge.Code != 400 {
		t.Fatalf("retention on a bucket without object retention: %v, want 400", err)
	}
	for _, n := range []string{"locked", "unlocked"} {
		mode := map[string]string{"locked": "Locked", "unlocked": "Unlocked"}[n]
		if err := write("ret", n, &storage.ObjectRetention{Mode: mode, RetainUntil: until}); err != nil {
			t.Fatal(err)
		}
	}
	const kept = "Object 'ret/locked' is subject to bucket's retention policy or object retention and cannot be deleted or overwritten until 2026-09-30T13:00:00.000000Z"
	locked, unlocked := c.Bucket("ret").Object("locked"), c.Bucket("ret").Object("unlocked")
	refused(t, "delete", locked.Delete(ctx), "retentionPolicyNotMet", kept)
	refused(t, "overwrite", write("ret", "locked", nil), "retentionPolicyNotMet", kept)

	shorter := &storage.ObjectRetention{Mode: "Locked", RetainUntil: until.Add(-time.Minute)}
	_, err := locked.OverrideUnlockedRetention(true).Update(ctx, storage.ObjectAttrsToUpdate{Retention: shorter})
	refused(t, "shorten Locked", err, "forbidden", "Object 'ret/locked' has a Locked retention configuration")
	_, err = locked.OverrideUnlockedRetention(true).Update(ctx, storage.ObjectAttrsToUpdate{Retention: &storage.ObjectRetention{}})
	refused(t, "remove Locked", err, "forbidden", "Object 'ret/locked' has a Locked retention configuration")
	longer := &storage.ObjectRetention{Mode: "Locked", RetainUntil: until.Add(time.Hour)}
	if a, err := locked.Update(ctx, storage.ObjectAttrsToUpdate{Retention: longer}); err != nil || !a.Retention.RetainUntil.Equal(longer.RetainUntil) {
		t.Fatalf("extend Locked: %+v, %v", a, err)
	}

	_, err = unlocked.Update(ctx, storage.ObjectAttrsToUpdate{Retention: &storage.ObjectRetention{}})
	refused(t, "remove Unlocked without override", err, "forbidden", "Object 'ret/unlocked' has an Unlocked retention configuration")
	if a, err := unlocked.OverrideUnlockedRetention(true).Update(ctx, storage.ObjectAttrsToUpdate{Retention: &storage.ObjectRetention{}}); err != nil || a.Retention != nil {
		t.Fatalf("remove Unlocked with override: %+v, %v", a, err)
	}
	if err := unlocked.Delete(ctx); err != nil {
		t.Fatalf("delete once its retention is removed: %v", err)
	}
	clock.set(until.Add(2 * time.Hour))
	if err := locked.Delete(ctx); err != nil {
		t.Fatalf("delete after its retain-until time: %v", err)
	}
}
