package fakegcs_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/gcsput/gcsput/fakegcs"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func listAll(t *testing.T, c *storage.Client, bucket string, q *storage.Query) []*storage.ObjectAttrs {
	t.Helper()
	var out []*storage.ObjectAttrs
	it := c.Bucket(bucket).Objects(context.Background(), q)
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
}

// TestSoftDeleteWithOfficialClient drives soft delete and restore with
// cloud.google.com/go/storage: the bucket's policy, a delete that keeps the
// object with softDeleteTime and hardDeleteTime, a softDeleted listing and
// get by generation, Restore to a new generation, and the hard delete at
// hardDeleteTime.
func TestSoftDeleteWithOfficialClient(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	srv := fakegcs.NewTest(t, fakegcs.Options{Now: clock.now, DefaultSoftDelete: 7 * 24 * time.Hour})
	c := newClient(t, srv)
	ctx := context.Background()
	b := c.Bucket("sdb")
	if err := b.Create(ctx, "p", nil); err != nil {
		t.Fatal(err)
	}
	attrs, err := b.Attrs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := attrs.SoftDeletePolicy; p == nil || p.RetentionDuration != 7*24*time.Hour || !p.EffectiveTime.Equal(clock.now()) {
		t.Fatalf("bucket created without a policy: SoftDeletePolicy %+v, want GCS's 7 days from now", p)
	}
	if _, err := b.Update(ctx, storage.BucketAttrsToUpdate{SoftDeletePolicy: &storage.SoftDeletePolicy{RetentionDuration: time.Hour}}); status(err) != 400 {
		t.Fatalf("a retention of 1h (below 7 days): %v, want 400", err)
	}
	ua, err := b.Update(ctx, storage.BucketAttrsToUpdate{SoftDeletePolicy: &storage.SoftDeletePolicy{RetentionDuration: 10 * 24 * time.Hour}})
	if err != nil || ua.SoftDeletePolicy.RetentionDuration != 10*24*time.Hour {
		t.Fatalf("patch to 10 days: %+v, %v", ua, err)
	}

	first := upload(t, c, "sdb", "f", []byte("first"), 0)
	clock.add(time.Second)
	obj := b.Object("f")
	if err := obj.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	deletedAt := clock.now()
	if _, err := obj.Attrs(ctx); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Fatalf("the deleted object is still live: %v", err)
	}
	if got := listAll(t, c, "sdb", nil); len(got) != 0 {
		t.Fatalf("a plain listing shows %d soft-deleted objects", len(got))
	}
	soft := listAll(t, c, "sdb", &storage.Query{SoftDeleted: true})
	if len(soft) != 1 || soft[0].Generation != first.Generation || !soft[0].SoftDeleteTime.Equal(deletedAt) ||
		!soft[0].HardDeleteTime.Equal(deletedAt.Add(10*24*time.Hour)) {
		t.Fatalf("softDeleted listing: %+v", soft)
	}
	sa, err := obj.Generation(first.Generation).SoftDeleted().Attrs(ctx)
	if err != nil || sa.Size != 5 || sa.SoftDeleteTime.IsZero() {
		t.Fatalf("soft-deleted get by generation: %+v, %v", sa, err)
	}
	if err := obj.Generation(first.Generation).Delete(ctx); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Fatalf("deleting a soft-deleted generation: %v, want 404", err)
	}

	// A live object of the name is replaced by the restore, and is itself
	// soft-deleted (no versioning).
	second := upload(t, c, "sdb", "f", []byte("second"), 0)
	clock.add(time.Second)
	if _, err := obj.Generation(first.Generation).If(storage.Conditions{GenerationMatch: first.Generation}).Restore(ctx, &storage.RestoreOptions{}); status(err) != http.StatusPreconditionFailed {
		t.Fatalf("restore under ifGenerationMatch of another generation: %v, want 412", err)
	}
	if _, err := obj.Generation(12345).Restore(ctx, &storage.RestoreOptions{}); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Fatalf("restore of a generation never soft-deleted: %v, want 404", err)
	}
	restored, err := obj.Generation(first.Generation).Restore(ctx, &storage.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if restored.Generation <= second.Generation || restored.Metageneration != 1 || !restored.Created.Equal(clock.now()) ||
		!restored.SoftDeleteTime.IsZero() || restored.CRC32C != first.CRC32C {
		t.Fatalf("restored: %+v", restored)
	}
	if got := string(read(t, c, "sdb", "f", 0, -1)); got != "first" {
		t.Fatalf("restored content %q", got)
	}
	soft = listAll(t, c, "sdb", &storage.Query{SoftDeleted: true})
	if len(soft) != 2 || soft[0].Generation != first.Generation || soft[1].Generation != second.Generation {
		t.Fatalf("after the restore, soft-deleted: %d objects, want the first (it stays) and the replaced second", len(soft))
	}
	if _, err := obj.Generation(second.Generation).SoftDeleted().NewReader(ctx); err == nil {
		t.Fatal("a soft-deleted object's content was read")
	}

	clock.add(10 * 24 * time.Hour)
	if soft = listAll(t, c, "sdb", &storage.Query{SoftDeleted: true}); len(soft) != 0 {
		t.Fatalf("past hardDeleteTime, %d soft-deleted objects remain", len(soft))
	}
	if _, err := obj.Generation(first.Generation).Restore(ctx, &storage.RestoreOptions{}); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Fatalf("restore past hardDeleteTime: %v, want 404", err)
	}
}

// TestVersionsWithOfficialClient: with versioning, an overwrite and a
// delete keep noncurrent generations (timeDeleted), listed with Versions in
// generation order and read by generation; a delete by generation under a
// soft delete policy soft-deletes a noncurrent one; copy from a noncurrent
// generation works.
func TestVersionsWithOfficialClient(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"vvv"}})
	if err := srv.SetVersioning("vvv", true); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetSoftDelete("vvv", 7*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv)
	ctx := context.Background()
	ba, err := c.Bucket("vvv").Attrs(ctx)
	if err != nil || !ba.VersioningEnabled {
		t.Fatalf("bucket attrs: %+v, %v", ba, err)
	}
	g1 := upload(t, c, "vvv", "a", []byte("one"), 0)
	g2 := upload(t, c, "vvv", "a", []byte("two"), 0)
	upload(t, c, "vvv", "b", []byte("bee"), 0)
	if err := c.Bucket("vvv").Object("b").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	all := listAll(t, c, "vvv", &storage.Query{Versions: true})
	if len(all) != 3 || all[0].Generation != g1.Generation || all[0].Deleted.IsZero() || all[1].Generation != g2.Generation ||
		!all[1].Deleted.IsZero() || all[2].Name != "b" || all[2].Deleted.IsZero() {
		t.Fatalf("versions listing: %d items %+v", len(all), all)
	}
	if live := listAll(t, c, "vvv", nil); len(live) != 1 || live[0].Generation != g2.Generation {
		t.Fatalf("live listing: %+v", live)
	}
	// Paged one item at a time, the versions of one name are not skipped.
	it := c.Bucket("vvv").Objects(ctx, &storage.Query{Versions: true})
	p := iterator.NewPager(it, 1, "")
	var paged []int64
	for {
		var page []*storage.ObjectAttrs
		tok, err := p.NextPage(&page)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page {
			paged = append(paged, a.Generation)
		}
		if tok == "" {
			break
		}
	}
	if len(paged) != 3 || paged[0] != g1.Generation || paged[1] != g2.Generation {
		t.Fatalf("paged versions: %v", paged)
	}
	if got := string(read(t, c, "vvv", "a", 0, -1)); got != "two" {
		t.Fatalf("live content %q", got)
	}
	r, err := c.Bucket("vvv").Object("a").Generation(g1.Generation).NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := io.ReadAll(r)
	r.Close()
	if string(old) != "one" {
		t.Fatalf("noncurrent content %q", old)
	}
	if ca, err := c.Bucket("vvv").Object("c").CopierFrom(c.Bucket("vvv").Object("a").Generation(g1.Generation)).Run(ctx); err != nil || !ca.Deleted.IsZero() {
		t.Fatalf("copy from a noncurrent generation: %+v, %v; want a live object", ca, err)
	}
	if err := c.Bucket("vvv").Object("a").Generation(g1.Generation).Delete(ctx); err != nil {
		t.Fatal(err)
	}
	soft := listAll(t, c, "vvv", &storage.Query{SoftDeleted: true})
	if len(soft) != 1 || soft[0].Generation != g1.Generation {
		t.Fatalf("a noncurrent generation deleted by generation is soft-deleted: %+v", soft)
	}
	if err := c.Bucket("vvv").Delete(ctx); status(err) != http.StatusConflict {
		t.Fatalf("deleting a bucket with noncurrent objects: %v, want 409", err)
	}
}

// TestSoftDeletedExpireEachAtItsTime: generations soft-deleted a day apart
// are freed each at its own hardDeleteTime, whatever the order the names
// are kept in, and one soft-deleted after a walk is still freed at its
// time (the bucket notes the earliest due, and walks only then).
func TestSoftDeletedExpireEachAtItsTime(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	srv := fakegcs.NewTest(t, fakegcs.Options{Now: clock.now, DefaultSoftDelete: 7 * 24 * time.Hour})
	c := newClient(t, srv)
	ctx := context.Background()
	if err := c.Bucket("sdx").Create(ctx, "p", nil); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		var out []string
		for _, a := range listAll(t, c, "sdx", &storage.Query{SoftDeleted: true}) {
			out = append(out, a.Name)
		}
		return out
	}
	// "z" first, "a" a day later, "m" two days later.
	for _, n := range []string{"z", "a", "m"} {
		upload(t, c, "sdx", n, []byte(n), 0)
		if err := c.Bucket("sdx").Object(n).Delete(ctx); err != nil {
			t.Fatal(err)
		}
		clock.add(24 * time.Hour)
	}
	// Now: z was deleted 3 days ago, a 2, m 1. Each is due 7 days after.
	// q is deleted on day 4, after a walk freed z: due on day 11.
	amz := []string{"a", "m", "z"}
	want := [][]string{amz, amz, amz, amz, {"a", "m"}, {"m", "q"}, {"q"}, {"q"}, {"q"}, {"q"}, {"q"}, {}}
	for day, w := range want {
		got := names()
		if !slices.Equal(got, w) {
			t.Fatalf("day %d after the last delete: soft-deleted %q, want %q", day, got, w)
		}
		if day == 4 {
			upload(t, c, "sdx", "q", []byte("q"), 0)
			if err := c.Bucket("sdx").Object("q").Delete(ctx); err != nil {
				t.Fatal(err)
			}
		}
		clock.add(24 * time.Hour)
	}
}
