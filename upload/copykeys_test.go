package upload

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

var (
	copyKey   = resumable.EncryptionKey(bytes.Repeat([]byte{3}, 32))
	copyOther = resumable.EncryptionKey(bytes.Repeat([]byte{5}, 32))
)

// keyedStop is stoppingClient with mod applied too: a client that cancels
// its context once a transfer has done after bytes.
func keyedStop(t *testing.T, srv *fakegcs.Server, state string, after int64, mod func(*Options)) (*Client, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := newClient(t, srv, func(o *Options) {
		o.StateDir = state
		mod(o)
		o.Progress = func(p Progress) {
			if p.Done >= after {
				cancel()
			}
		}
	})
	return c, ctx
}

// A copy to a destination under a customer-supplied key, cut short between
// rewrite calls, saves the key's SHA256 (never the key) with its token.
// Resumed without the key, or with another, it refuses, naming the saved
// key by its SHA256 prefix as an upload's resume does, writes nothing and
// keeps its record; so does the same Copy run again without it. Resumed
// with the key, it continues from the token and the destination is
// encrypted with it.
func TestCopyResumeKeepsDestinationKey(t *testing.T) {
	srv, data, state, recPath := stoppedKeyedCopy(t)
	from, to := URL{Bucket: testBucket, Object: "s"}, URL{Bucket: "dst", Object: "d"}
	rec, _ := os.ReadFile(recPath)
	if bytes.Contains(rec, []byte(base64.StdEncoding.EncodeToString(copyKey))) || !bytes.Contains(rec, []byte(copyKey.SHA256())) {
		t.Fatalf("the record holds the key, or not its SHA256: %s", rec)
	}
	short := resumable.ShortSHA256(copyKey.SHA256())
	for name, mod := range map[string]func(*Options){
		"no key":      func(o *Options) { o.StateDir = state },
		"another key": func(o *Options) { o.StateDir = state; o.EncryptionKey = copyOther },
		"a KMS key":   func(o *Options) { o.StateDir = state; o.KMSKeyName = "projects/p/locations/l/keyRings/r/cryptoKeys/k" },
	} {
		c2 := newClient(t, srv, mod)
		rs, err := c2.Resume(context.Background())
		if len(rs) != 1 || err == nil || !errors.Is(rs[0].Err, resumable.ErrEncryptionKey) || rs[0].Status != StatusFailed ||
			!strings.Contains(rs[0].Err.Error(), "the copy was started with the customer-supplied encryption key whose SHA256 begins "+short) ||
			!strings.Contains(rs[0].Err.Error(), "give that key to resume it") {
			t.Fatalf("resume with %s: %+v, %v", name, rs, err)
		}
		r, err := c2.Copy(context.Background(), from, to, CopyOptions{})
		if !errors.Is(err, resumable.ErrEncryptionKey) || !strings.Contains(err.Error(), short) || r.Status != StatusFailed {
			t.Fatalf("copy again with %s: %+v", name, r)
		}
		if _, err := srv.Attrs("dst", "d"); err == nil {
			t.Fatalf("resume with %s wrote the destination", name)
		}
		if ss, _ := c2.Sessions(); len(ss) != 1 {
			t.Fatalf("resume with %s: sessions %+v", name, ss)
		}
	}
	if n := srv.Count("storage.objects.rewrite"); n != 2 {
		t.Errorf("%d rewrite calls: a refused resume sent one", n)
	}
	srv.ResetStats()
	c3 := newClient(t, srv, func(o *Options) { o.StateDir = state; o.DecryptionKeys = []resumable.EncryptionKey{copyOther, copyKey} })
	rs, err := c3.Resume(context.Background())
	if len(rs) != 1 || err != nil || rs[0].Status != StatusResumed || rs[0].ResumedFrom != 2<<20 {
		t.Fatalf("resume with the key: %+v, %v", rs, err)
	}
	got, attrs, err := srv.Object("dst", "d")
	if err != nil || !bytes.Equal(got, data) || attrs.CustomerKeySHA256 != copyKey.SHA256() || srv.Stats().BytesRewritten != 2<<20 {
		t.Fatalf("destination %+v, %v; want it under the key %s", attrs, err, short)
	}
}

// A copy under a Cloud KMS key, cut short, is resumed under that key by a
// client given none: the record keeps the key name, and Resume restores the
// destination whole. The same Copy run again with another KMS key refuses,
// naming both.
func TestCopyResumeKeepsKMSKey(t *testing.T) {
	const kms, kms2 = "projects/p/locations/l/keyRings/r/cryptoKeys/k", "projects/p/locations/l/keyRings/r/cryptoKeys/other"
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}, RewriteBytesPerCall: 1 << 20})
	data := randBytes(3<<20, 22)
	srv.PutObject(testBucket, "s", data)
	state := filepath.Join(t.TempDir(), "state")
	c, ctx := keyedStop(t, srv, state, 1<<20, func(o *Options) { o.KMSKeyName = kms })
	from, to := URL{Bucket: testBucket, Object: "s"}, URL{Bucket: "dst", Object: "d"}
	if r, _ := c.Copy(ctx, from, to, CopyOptions{}); r.Status != StatusInterrupted || !r.Saved {
		t.Fatalf("interrupted copy: %+v", r)
	}
	c2 := newClient(t, srv, func(o *Options) { o.StateDir = state; o.KMSKeyName = kms2 })
	r, err := c2.Copy(context.Background(), from, to, CopyOptions{})
	if !errors.Is(err, resumable.ErrEncryptionKey) || !strings.Contains(err.Error(), "the copy was started with the Cloud KMS key "+kms+", not "+kms2) {
		t.Fatalf("copy again with another KMS key: %+v", r)
	}
	c3 := newClient(t, srv, func(o *Options) { o.StateDir = state })
	rs, err := c3.Resume(context.Background())
	if len(rs) != 1 || err != nil || rs[0].Status != StatusResumed {
		t.Fatalf("resume without the KMS key: %+v, %v", rs, err)
	}
	if got, attrs, err := srv.Object("dst", "d"); err != nil || !bytes.Equal(got, data) || attrs.KMSKeyName != kms {
		t.Fatalf("destination %+v, %v; want it under %s", attrs, err, kms)
	}
}

// A saved copy under a customer-supplied key whose source changed since is
// resumed without the key: it is refused, naming the key, and its record
// stays (it was dropped before the refusal, so a resume with the key then
// had nothing to do).
func TestCopyResumeWithoutKeySourceChangedKeepsRecord(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}, RewriteBytesPerCall: 1 << 20})
	srv.PutObject(testBucket, "s", randBytes(3<<20, 28))
	state := filepath.Join(t.TempDir(), "state")
	c, ctx := keyedStop(t, srv, state, 1<<20, func(o *Options) { o.EncryptionKey = copyKey })
	if r, _ := c.Copy(ctx, URL{Bucket: testBucket, Object: "s"}, URL{Bucket: "dst", Object: "d"}, CopyOptions{}); !r.Saved {
		t.Fatalf("interrupted copy: %+v", r)
	}
	data := randBytes(2<<20, 29)
	srv.PutObject(testBucket, "s", data)
	c2 := newClient(t, srv, func(o *Options) { o.StateDir = state })
	rs, _ := c2.Resume(context.Background())
	if len(rs) != 1 || !errors.Is(rs[0].Err, resumable.ErrEncryptionKey) {
		t.Fatalf("resume without the key: %+v", rs)
	}
	if ss, _ := c2.Sessions(); len(ss) != 1 {
		t.Fatalf("the refused resume dropped the record: %+v", ss)
	}
	c3 := newClient(t, srv, func(o *Options) { o.StateDir = state; o.EncryptionKey = copyKey })
	rs, err := c3.Resume(context.Background())
	if len(rs) != 1 || err != nil || rs[0].Status != StatusRestarted {
		t.Fatalf("resume with the key: %+v, %v", rs, err)
	}
	if got, a, err := srv.Object("dst", "d"); err != nil || !bytes.Equal(got, data) || a.CustomerKeySHA256 != copyKey.SHA256() {
		t.Fatalf("destination %+v, %v", a, err)
	}
}

// stoppedKeyedCopy interrupts a copy of a 4 MiB object gs://bkt/s to
// gs://dst/d under copyKey after 2 MiB (1 MiB a rewrite call), and returns
// the object's data, the state directory and the path of the one record
// it saved.
func stoppedKeyedCopy(t *testing.T) (srv *fakegcs.Server, data []byte, state, rec string) {
	t.Helper()
	srv = newServer(t, fakegcs.Options{Buckets: []string{"dst"}, RewriteBytesPerCall: 1 << 20})
	data = randBytes(4<<20, 21)
	srv.PutObject(testBucket, "s", data)
	state = filepath.Join(t.TempDir(), "state")
	c, ctx := keyedStop(t, srv, state, 2<<20, func(o *Options) { o.EncryptionKey = copyKey })
	if r, _ := c.Copy(ctx, URL{Bucket: testBucket, Object: "s"}, URL{Bucket: "dst", Object: "d"}, CopyOptions{}); r.Status != StatusInterrupted || !r.Saved {
		t.Fatalf("interrupted copy: %+v", r)
	}
	recs, _ := filepath.Glob(filepath.Join(state, "*.json"))
	if len(recs) != 1 {
		t.Fatalf("records %q", recs)
	}
	return srv, data, state, recs[0]
}
