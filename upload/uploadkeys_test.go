package upload

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// interruptedUnder leaves a saved upload of src to gs://bkt/enc.bin started
// under the keys mod sets, past 1 MiB (interrupt), and ages its record past
// MaxAge so that the next run must start it over, not continue its session.
func interruptedUnder(t *testing.T, srv *fakegcs.Server, stateDir, src string, mod func(*Options)) {
	t.Helper()
	interrupt(t, srv, stateDir, src, "enc.bin", 1<<20, mod)
	c := newClient(t, srv, func(o *Options) { o.StateDir = stateDir })
	recs, err := c.store.List()
	if err != nil || len(recs) != 1 {
		t.Fatalf("records %+v, %v", recs, err)
	}
	rec := recs[0]
	rec.Created = time.Now().Add(-state.MaxAge - time.Hour)
	if err := c.store.Save(rec); err != nil {
		t.Fatal(err)
	}
}

// A saved upload started under a customer-supplied or Cloud KMS key is
// never started over without it: resumed by a client without the key (a
// 'gcsput resume' or a cp run again that lost its variable) when its
// session is too old to continue, it is refused naming the key, nothing is
// written, and the record stays for the run that has the key. Before, the
// upload started over and wrote the object unencrypted, with success.
func TestExpiredUploadKeepsItsKey(t *testing.T) {
	kms := "projects/p/locations/l/keyRings/r/cryptoKeys/k"
	for _, tc := range []struct {
		name    string
		started func(*Options)
		want    string
	}{
		{"CSEK", func(o *Options) { o.EncryptionKey = copyKey },
			"the upload was started with the customer-supplied encryption key whose SHA256 begins " + resumable.ShortSHA256(copyKey.SHA256())},
		{"KMS", func(o *Options) { o.KMSKeyName = kms }, "the upload was started with the Cloud KMS key " + kms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{})
			stateDir := t.TempDir()
			src := writeTemp(t, t.TempDir(), "enc.bin", randBytes(3<<20, 7))
			interruptedUnder(t, srv, stateDir, src, tc.started)
			srv.ResetStats()
			c := newClient(t, srv, func(o *Options) { o.StateDir, o.SmallFileThreshold = stateDir, -1 })
			rs, err := c.Resume(context.Background())
			if err == nil || len(rs) != 1 || !errors.Is(rs[0].Err, resumable.ErrEncryptionKey) {
				t.Fatalf("Resume without the key: %+v, %v; want a failure matching ErrEncryptionKey", rs, err)
			}
			if got := rs[0].Err.Error(); !strings.Contains(got, tc.want) {
				t.Errorf("error %q\nwant it to say %q", got, tc.want)
			}
			if n := srv.Stats().Requests["storage.objects.insert"]; n != 0 {
				t.Errorf("%d insert requests after the refusal; want none", n)
			}
			if _, _, err := srv.Object(testBucket, "enc.bin"); err == nil {
				t.Errorf("gs://%s/enc.bin was written without its key", testBucket)
			}
			if ss, _ := c.Sessions(); len(ss) != 1 {
				t.Errorf("sessions %+v; want the record kept for the run with the key", ss)
			}
			// With the key, the same upload starts over under it and finishes.
			c = newClient(t, srv, func(o *Options) { o.StateDir, o.SmallFileThreshold = stateDir, -1; tc.started(o) })
			if rs, err := c.Resume(context.Background()); err != nil || len(rs) != 1 || rs[0].Status != StatusRestarted {
				t.Fatalf("Resume with the key: %+v, %v", rs, err)
			}
			_, a, err := srv.Object(testBucket, "enc.bin")
			if err != nil || a.CustomerKeySHA256 != (func() string { o := Options{}; tc.started(&o); return o.EncryptionKey.SHA256() })() ||
				(tc.name == "KMS" && a.KMSKeyName != kms) {
				t.Errorf("the object after the keyed resume: %+v, %v", a, err)
			}
		})
	}
}

// A record saved by a gcsput before the encryption was recorded (no dest)
// is resumed as before: with the key its session names, under it.
func TestOldUploadRecordWithoutDest(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	stateDir := t.TempDir()
	data := randBytes(3<<20, 8)
	src := writeTemp(t, t.TempDir(), "enc.bin", data)
	keyed := func(o *Options) { o.EncryptionKey = copyKey }
	interruptedUnder(t, srv, stateDir, src, keyed)
	c := newClient(t, srv, func(o *Options) { o.StateDir, o.SmallFileThreshold = stateDir, -1; keyed(o) })
	recs, _ := c.store.List()
	var d copyDest
	if len(recs) != 1 || json.Unmarshal(recs[0].Upload.Dest, &d) != nil || d != (copyDest{KeySHA256: copyKey.SHA256()}) {
		t.Fatalf("record dest %s; want it to name the key's SHA256", recs[0].Upload.Dest)
	}
	recs[0].Upload.Dest, recs[0].Created = nil, time.Now() // as an older gcsput wrote it, young
	if err := c.store.Save(recs[0]); err != nil {
		t.Fatal(err)
	}
	rs, err := c.Resume(context.Background())
	if err != nil || len(rs) != 1 || rs[0].Status != StatusResumed {
		t.Fatalf("Resume of an old record with its key: %+v, %v", rs, err)
	}
	got, a, err := srv.Object(testBucket, "enc.bin")
	if err != nil || string(got) != string(data) || a.CustomerKeySHA256 != copyKey.SHA256() {
		t.Errorf("object: %d bytes, key %q, %v", len(got), a.CustomerKeySHA256, err)
	}
}
