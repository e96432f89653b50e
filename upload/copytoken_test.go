package upload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// A saved copy whose rewrite token the server refuses (400) is copied from the
// start by the copy run again, and says so: the tracker's record was forgotten
// before the new one was made from it, a nil dereference that crashed the
// process (Resume and Copy). Resume refuses instead (see restoreRefused),
// keeping the record, and the copy run again then starts over.
func TestRefusedRewriteTokenCopiesFromStart(t *testing.T) {
	for _, how := range []string{"resume", "copy again"} {
		t.Run(how, func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}, RewriteBytesPerCall: 1 << 20})
			data := randBytes(4<<20, 22)
			srv.PutObject(testBucket, "s", data)
			state := filepath.Join(t.TempDir(), "state")
			c, ctx := stoppingClient(t, srv, state, 2<<20)
			from, to := URL{Bucket: testBucket, Object: "s"}, URL{Bucket: "dst", Object: "d"}
			if r, _ := c.Copy(ctx, from, to, CopyOptions{}); r.Status != StatusInterrupted || !r.Saved {
				t.Fatalf("interrupted copy: %+v", r)
			}
			recs, _ := filepath.Glob(filepath.Join(state, "*.json"))
			if len(recs) != 1 {
				t.Fatalf("records %q", recs)
			}
			rec, _ := os.ReadFile(recs[0])
			edited := regexp.MustCompile(`"token": "[^"]+"`).ReplaceAll(rec, []byte(`"token": "rw-not-a-token"`))
			if bytes.Equal(edited, rec) {
				t.Fatalf("no token in the record: %s", rec)
			}
			if err := os.WriteFile(recs[0], edited, 0o600); err != nil {
				t.Fatal(err)
			}
			c2 := newClient(t, srv, func(o *Options) { o.StateDir = state })
			if how == "resume" {
				rs, err := c2.Resume(context.Background())
				if len(rs) != 1 {
					t.Fatalf("resume: %+v, %v", rs, err)
				}
				if err == nil || rs[0].Status != StatusFailed || !errors.Is(rs[0].Err, resumable.ErrRewriteTokenRejected) ||
					!strings.Contains(rs[0].Err.Error(), "the server refused the saved rewrite token, so its saved destination") {
					t.Fatalf("resume with a refused token: %+v, %v", rs[0], err)
				}
				if ss, _ := c2.Sessions(); len(ss) != 1 {
					t.Fatalf("the refused resume's record is gone: %+v", ss)
				}
			}
			r, err := c2.Copy(context.Background(), from, to, CopyOptions{})
			if err != nil || r.Status != StatusRestarted || r.Note != "saved rewrite token refused by the server: copied from the start" {
				t.Fatalf("%s with a refused token: %+v, %v", how, r, err)
			}
			wantObjectIn(t, srv, "dst", "d", data)
			if ss, _ := c2.Sessions(); len(ss) != 0 {
				t.Errorf("sessions left: %+v", ss)
			}
		})
	}
}

func wantObjectIn(t *testing.T, srv *fakegcs.Server, bucket, object string, data []byte) {
	t.Helper()
	got, _, err := srv.Object(bucket, object)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("%s/%s: %d bytes, %v; want the %d copied", bucket, object, len(got), err, len(data))
	}
}
