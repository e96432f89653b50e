package saved

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/upload"
)

// A record is expired once it is older than GCS keeps a session, and says
// its age in seconds.
func TestRecordOf(t *testing.T) {
	now := time.Date(2030, 1, 8, 0, 0, 0, 0, time.UTC)
	s := upload.Session{Kind: "upload", Source: "/f", Dest: "gs://b/o", Offset: 5, Size: 9, Created: now.Add(-upload.MaxSessionAge)}
	r := RecordOf(s, now)
	if r.Expired || r.AgeSeconds != upload.MaxSessionAge.Seconds() || r.Destination != "gs://b/o" || r.Offset != 5 {
		t.Fatalf("at MaxSessionAge: %+v", r)
	}
	if r := RecordOf(s, now.Add(time.Second)); !r.Expired {
		t.Fatalf("a second after MaxSessionAge: not expired")
	}
}

// Pick takes every record a name matches, by source or destination, and
// refuses a name that matches none, picking nothing.
func TestPick(t *testing.T) {
	recs := []upload.Session{{Source: "/a", Dest: "gs://b/a"}, {Source: "/c", Dest: "gs://b/c"}, {Source: "gs://b/a", Dest: "/x"}}
	srcs := func(ss []upload.Session) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Source)
		}
		return out
	}
	if got, typo := Pick(recs, []string{"gs://b/a"}, false); typo != "" || !slices.Equal(srcs(got), []string{"/a", "gs://b/a"}) {
		t.Errorf("gs://b/a picks %q (typo %q), want both records naming it", srcs(got), typo)
	}
	if got, typo := Pick(recs, []string{"/c", "gs://b/typo"}, false); typo != "gs://b/typo" || got != nil {
		t.Errorf("a typo: picked %q, unmatched %q; want nothing and the typo", srcs(got), typo)
	}
	if got, _ := Pick(recs, nil, true); len(got) != 3 {
		t.Errorf("all: %d picked", len(got))
	}
}

// gc needs GCS only to sweep buckets or remove a composite's components.
func TestGCNeedsGCS(t *testing.T) {
	plain := []upload.Session{{Kind: "upload"}}
	if GCNeedsGCS(plain, nil) || !GCNeedsGCS(plain, []string{"b"}) || !GCNeedsGCS(append(plain, upload.Session{Components: 3}), nil) {
		t.Fatal("wrong answer")
	}
}

// A cancel that fails names the transfer and keeps the cause.
func TestCancelNamesTheTransfer(t *testing.T) {
	c, err := upload.New(context.Background(), upload.Options{Auth: auth.Options{NoAuth: true}, NoState: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = Cancel(context.Background(), c, upload.Session{Kind: "upload", Source: "/f", Dest: "gs://b/o"}, false)
	if !errors.Is(err, upload.ErrNoState) || err.Error() != "cancelling /f -> gs://b/o: "+upload.ErrNoState.Error() {
		t.Fatalf("error %v", err)
	}
}
