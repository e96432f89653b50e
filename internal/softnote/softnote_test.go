package softnote

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Each bucket is read once and noted once, only when it keeps deletes.
func TestDeletedNotesOncePerBucket(t *testing.T) {
	reads := map[string]int{}
	policy := map[string]time.Duration{"soft": 7 * 24 * time.Hour, "hours": 36 * time.Hour, "off": 0}
	var said []string
	n := New(func(s string) { said = append(said, s) }, func(_ context.Context, b string) (time.Duration, error) {
		reads[b]++
		if b == "unreadable" {
			return 0, errors.New("403")
		}
		return policy[b], nil
	})
	n.now = func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }
	for _, b := range []string{"soft", "soft", "off", "unreadable", "hours", "off"} {
		n.Deleted(context.Background(), b)
	}
	want := []string{
		"gs://soft keeps deleted objects for 7 days (soft delete): they can be restored until 2030-01-08T00:00:00Z with 'gcsput restore gs://soft/OBJECT' ('gcsput ls --soft-deleted gs://soft/' lists them)",
		"gs://hours keeps deleted objects for 36h0m0s (soft delete): they can be restored until 2030-01-02T12:00:00Z with 'gcsput restore gs://hours/OBJECT' ('gcsput ls --soft-deleted gs://hours/' lists them)",
	}
	if len(said) != 2 || said[0] != want[0] || said[1] != want[1] {
		t.Fatalf("said %q\nwant %q", said, want)
	}
	for b, r := range reads {
		if r != 1 {
			t.Errorf("bucket %s read %d times, want 1", b, r)
		}
	}
	var none *Noter
	none.Deleted(context.Background(), "soft") // a nil Noter notes nothing
}
