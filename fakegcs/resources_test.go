package fakegcs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/iam"
	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/gcsput/gcsput/fakegcs"
)

func status(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}

// ACLs through the official client: a new bucket has the project's teams;
// set, list and delete work on bucket, default object and object ACLs; a
// new object takes the bucket's default object ACL.
func TestACLs(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	ctx := context.Background()
	b := c.Bucket("bkt")
	rules, err := b.ACL().List(ctx)
	if err != nil || len(rules) != 3 || rules[0].Entity != "project-owners-123456789" || rules[0].Role != storage.RoleOwner {
		t.Fatalf("bucket ACL %+v, %v", rules, err)
	}
	if err := b.ACL().Set(ctx, storage.AllUsers, storage.RoleReader); err != nil {
		t.Fatal(err)
	}
	if err := b.DefaultObjectACL().Set(ctx, "user-a@example.com", storage.RoleOwner); err != nil {
		t.Fatal(err)
	}
	upload(t, c, "bkt", "o", []byte("x"), 256<<10)
	orules, err := b.Object("o").ACL().List(ctx)
	if err != nil || len(orules) != 4 || orules[3].Entity != "user-a@example.com" {
		t.Fatalf("object ACL %+v, %v", orules, err)
	}
	if err := b.Object("o").ACL().Delete(ctx, "user-a@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := b.Object("o").ACL().Delete(ctx, "user-a@example.com"); status(err) != 404 {
		t.Errorf("second delete: %v, want 404", err)
	}
	if err := b.ACL().Set(ctx, "nobody", storage.RoleReader); status(err) != 400 {
		t.Errorf("bad entity: %v, want 400", err)
	}
	if rules, _ := b.ACL().List(ctx); len(rules) != 4 || rules[3].Entity != storage.AllUsers {
		t.Errorf("after set: %+v", rules)
	}
}

// IAM: the policy starts from the ACL; setIamPolicy with a stale etag is
// refused (412), without one it replaces the policy.
func TestIAMPolicy(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	ctx := context.Background()
	h := c.Bucket("bkt").IAM()
	p, err := h.Policy(ctx)
	if err != nil || !p.HasRole("project-owners-123456789", "roles/storage.legacyBucketOwner") {
		t.Fatalf("policy %+v, %v", p, err)
	}
	p.Add("user:a@example.com", iam.Viewer)
	if err := h.SetPolicy(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := h.SetPolicy(ctx, p); status(err) != 412 { // p's etag is now stale
		t.Errorf("stale etag: %v, want 412", err)
	}
	p2, _ := h.Policy(ctx)
	if !p2.HasRole("user:a@example.com", iam.Viewer) {
		t.Errorf("policy after set: %+v", p2)
	}
	perms, err := h.TestPermissions(ctx, []string{"storage.objects.get", "storage.buckets.delete"})
	if err != nil || len(perms) != 2 {
		t.Errorf("testPermissions %q, %v", perms, err)
	}
}

// HMAC keys: created ACTIVE, listed, updated under their etag, deleted only
// once INACTIVE; the service account is GCS's service agent.
func TestHMACKeysAndServiceAccount(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{})
	c := newClient(t, srv)
	ctx := context.Background()
	key, err := c.CreateHMACKey(ctx, "proj", "sa@proj.iam.gserviceaccount.com")
	if err != nil || key.State != storage.Active || key.Secret == "" || !strings.HasPrefix(key.AccessID, "GOOG1E") {
		t.Fatalf("key %+v, %v", key, err)
	}
	h := c.HMACKeyHandle("proj", key.AccessID)
	if err := h.Delete(ctx); status(err) != 400 {
		t.Errorf("delete of an active key: %v, want 400", err)
	}
	if _, err := h.Update(ctx, storage.HMACKeyAttrsToUpdate{State: storage.Inactive, Etag: "stale"}); status(err) != 412 {
		t.Errorf("stale etag: %v, want 412", err)
	}
	k2, err := h.Update(ctx, storage.HMACKeyAttrsToUpdate{State: storage.Inactive, Etag: key.Etag})
	if err != nil || k2.State != storage.Inactive {
		t.Fatalf("update: %+v, %v", k2, err)
	}
	if err := h.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	it := c.ListHMACKeys(ctx, "proj")
	if k, err := it.Next(); err == nil {
		t.Errorf("deleted key listed: %+v", k)
	}
	sa, err := c.ServiceAccount(ctx, "proj")
	if err != nil || sa != "service-123456789@gs-project-accounts.iam.gserviceaccount.com" {
		t.Errorf("service account %q, %v", sa, err)
	}
}

func TestNotifications(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	ctx := context.Background()
	b := c.Bucket("bkt")
	n, err := b.AddNotification(ctx, &storage.Notification{TopicProjectID: "proj", TopicID: "t", PayloadFormat: storage.JSONPayload})
	if err != nil || n.ID == "" || n.TopicID != "t" {
		t.Fatalf("notification %+v, %v", n, err)
	}
	all, err := b.Notifications(ctx)
	if err != nil || len(all) != 1 || all[n.ID] == nil {
		t.Fatalf("list %+v, %v", all, err)
	}
	if err := b.DeleteNotification(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteNotification(ctx, n.ID); status(err) != 404 {
		t.Errorf("second delete: %v", err)
	}
}

// A retention policy holds objects: delete and overwrite are refused with
// 403 until it expires; once locked it cannot be shortened or removed, and
// locking needs ifMetagenerationMatch.
func TestRetentionPolicy(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Now: func() time.Time { return now }})
	c := newClient(t, srv)
	ctx := context.Background()
	b := c.Bucket("bkt")
	attrs, err := b.Update(ctx, storage.BucketAttrsToUpdate{RetentionPolicy: &storage.RetentionPolicy{RetentionPeriod: time.Hour}})
	if err != nil || attrs.RetentionPolicy == nil || attrs.RetentionPolicy.RetentionPeriod != time.Hour {
		t.Fatalf("set retention: %+v, %v", attrs, err)
	}
	upload(t, c, "bkt", "kept", []byte("v1"), 256<<10)
	if err := b.Object("kept").Delete(ctx); status(err) != 403 || !strings.Contains(err.Error(), "retention") {
		t.Errorf("delete under retention: %v, want 403", err)
	}
	w := b.Object("kept").NewWriter(ctx)
	w.Write([]byte("v2"))
	if err := w.Close(); status(err) != 403 {
		t.Errorf("overwrite under retention: %v, want 403", err)
	}
	if err := b.LockRetentionPolicy(ctx); status(err) != 412 { // the client sends ifMetagenerationMatch=0
		t.Errorf("lock at a wrong metageneration: %v, want 412", err)
	}
	if r := do(t, srv, "POST", "/storage/v1/b/bkt/lockRetentionPolicy", nil); r.status != 400 || !strings.Contains(r.body, "ifMetagenerationMatch") {
		t.Errorf("lock without ifMetagenerationMatch: %d %s, want 400", r.status, r.body)
	}
	if err := b.If(storage.BucketConditions{MetagenerationMatch: attrs.MetaGeneration}).LockRetentionPolicy(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Update(ctx, storage.BucketAttrsToUpdate{RetentionPolicy: &storage.RetentionPolicy{RetentionPeriod: time.Minute}}); status(err) != 403 {
		t.Errorf("shortening a locked policy: %v, want 403", err)
	}
	now = now.Add(2 * time.Hour)
	if err := b.Object("kept").Delete(ctx); err != nil {
		t.Errorf("delete after the period: %v", err)
	}
	a, _ := b.Attrs(ctx)
	if a.RetentionPolicy == nil || !a.RetentionPolicy.IsLocked {
		t.Errorf("policy %+v, want locked", a.RetentionPolicy)
	}
}

// A patch with "retentionPolicy": null removes an unlocked policy; a
// malformed one is GCS's 400; a stale ifMetagenerationMatch is 412.
func TestRetentionPolicyPatchForms(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	if r := do(t, srv, "PATCH", "/storage/v1/b/bkt", []byte(`{"retentionPolicy":{"retentionPeriod":"60"}}`)); r.status != 200 || !strings.Contains(r.body, `"retentionPeriod":"60"`) {
		t.Fatalf("set: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "PATCH", "/storage/v1/b/bkt?ifMetagenerationMatch=1", []byte(`{"retentionPolicy":null}`)); r.status != 412 {
		t.Errorf("stale metageneration: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "PATCH", "/storage/v1/b/bkt", []byte(`{"retentionPolicy":"sixty"}`)); r.status != 400 || !strings.Contains(r.body, "parseError") {
		t.Errorf("malformed: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "PATCH", "/storage/v1/b/bkt?ifMetagenerationMatch=2", []byte(`{"retentionPolicy":null}`)); r.status != 200 || strings.Contains(r.body, "retentionPolicy") {
		t.Errorf("remove: %d %s", r.status, r.body)
	}
}

// A bucket keeps its default storage class and default event-based hold,
// set at creation or by a patch, as the official client reads them; new
// objects and compose destinations take the bucket's class.
func TestBucketStorageClassAndHold(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	ctx := context.Background()
	b := c.Bucket("bkt")
	if a, err := b.Attrs(ctx); err != nil || a.StorageClass != "STANDARD" || a.DefaultEventBasedHold {
		t.Fatalf("new bucket: %+v, %v", a, err)
	}
	a, err := b.Update(ctx, storage.BucketAttrsToUpdate{StorageClass: "NEARLINE", DefaultEventBasedHold: true})
	if err != nil || a.StorageClass != "NEARLINE" || !a.DefaultEventBasedHold {
		t.Fatalf("patched: %+v, %v", a, err)
	}
	upload(t, c, "bkt", "o", []byte("data"), 256<<10)
	if o, err := b.Object("o").Attrs(ctx); err != nil || o.StorageClass != "NEARLINE" {
		t.Errorf("object in a NEARLINE bucket: %+v, %v", o, err)
	}
	if o, err := b.Object("c").ComposerFrom(b.Object("o")).Run(ctx); err != nil || o.StorageClass != "NEARLINE" {
		t.Errorf("composite in a NEARLINE bucket: %+v, %v", o, err)
	}
	if r := do(t, srv, "PATCH", "/storage/v1/b/bkt", []byte(`{"storageClass":"WARM"}`)); r.status != 400 || !strings.Contains(r.body, "WARM") {
		t.Errorf("bad class: %d %s", r.status, r.body)
	}
	if err := c.Bucket("cold").Create(ctx, "p", &storage.BucketAttrs{StorageClass: "COLDLINE"}); err != nil {
		t.Fatal(err)
	}
	if a, err := c.Bucket("cold").Attrs(ctx); err != nil || a.StorageClass != "COLDLINE" {
		t.Errorf("bucket created COLDLINE: %+v, %v", a, err)
	}
}
