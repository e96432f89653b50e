// Package softnote says, once per bucket, that a bucket keeps what a
// command deletes (soft delete) and until when it can be restored: rm,
// sync --delete and mv delete for good only where soft delete is off.
package softnote

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Retention reads how long a bucket keeps a deleted object restorable: 0
// when soft delete is off (upload.Client.SoftDeleteRetention).
type Retention func(ctx context.Context, bucket string) (time.Duration, error)

// Noter notes deletes; safe for concurrent use. A nil *Noter notes nothing.
type Noter struct {
	say       func(string) // one line on stderr
	retention Retention
	now       func() time.Time
	mu        sync.Mutex
	said      map[string]bool // the buckets already looked at
}

// New returns a Noter that reads each bucket's policy with retention and
// says its line with say.
func New(say func(string), retention Retention) *Noter {
	return &Noter{say: say, retention: retention, now: time.Now, said: map[string]bool{}}
}

// Deleted notes a delete in bucket: the first time, the bucket's soft
// delete policy is read (one request) and, when on, one line says until
// when what was deleted can be restored. A bucket whose settings cannot be
// read is not noted.
func (n *Noter) Deleted(ctx context.Context, bucket string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.said[bucket] {
		return
	}
	n.said[bucket] = true
	d, err := n.retention(ctx, bucket)
	if err != nil || d <= 0 {
		return
	}
	until := n.now().Add(d).UTC().Format(time.RFC3339)
	n.say(fmt.Sprintf("gs://%s keeps deleted objects for %s (soft delete): they can be restored until %s with 'gcsput restore gs://%s/OBJECT' ('gcsput ls --soft-deleted gs://%s/' lists them)",
		bucket, retentionText(d), until, bucket, bucket))
}

// retentionText writes a retention as GCS states it: whole days, else the
// duration.
func retentionText(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == day:
		return "1 day"
	case d%day == 0:
		return fmt.Sprintf("%d days", d/day)
	}
	return d.String()
}
