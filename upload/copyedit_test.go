package upload

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// A saved copy under a customer-supplied key whose record is edited by hand to
// drop the key from its destination (Rewrite.Dest) must not be resumed into an
// unencrypted destination: GCS refuses the token under another key, and the
// resume must not then copy from the start without the key the copy was started
// with. Nor may a record whose token was dropped too be copied from the start
// without it. The resume fails, saying why, writes nothing and keeps the record.
func TestResumeEditedRecordNeverDropsKey(t *testing.T) {
	for _, name := range []string{"resume with the key", "resume without a key", "token dropped too"} {
		t.Run(name, func(t *testing.T) {
			srv, _, state, recPath := stoppedKeyedCopy(t)
			rec, _ := os.ReadFile(recPath)
			edited := bytes.Replace(rec, []byte(`"key_sha256": "`+copyKey.SHA256()+`"`), []byte(`"storage_class": ""`), 1)
			if bytes.Equal(edited, rec) {
				t.Fatalf("no key_sha256 in the record's destination: %s", rec)
			}
			if name == "token dropped too" {
				edited = regexp.MustCompile(`"token": "[^"]+"`).ReplaceAll(edited, []byte(`"token": ""`))
			}
			if err := os.WriteFile(recPath, edited, 0o600); err != nil {
				t.Fatal(err)
			}
			c2 := newClient(t, srv, func(o *Options) {
				o.StateDir = state
				if name == "resume with the key" {
					o.EncryptionKey = copyKey
				}
			})
			rs, err := c2.Resume(context.Background())
			if _, attrs, oerr := srv.Object("dst", "d"); oerr == nil && attrs.CustomerKeySHA256 != copyKey.SHA256() {
				t.Fatalf("the edited record's resume wrote the destination without its key (%q): %+v, %v", attrs.CustomerKeySHA256, rs, err)
			}
			if len(rs) != 1 || err == nil || rs[0].Status != StatusFailed ||
				!strings.Contains(rs[0].Err.Error(), "cannot be trusted to copy from the start: nothing was written") {
				t.Fatalf("resume of the edited record: %+v, %v", rs, err)
			}
			if _, oerr := srv.Attrs("dst", "d"); oerr == nil {
				t.Errorf("the refused resume wrote the destination")
			}
			if ss, _ := c2.Sessions(); len(ss) != 1 {
				t.Errorf("the refused resume's record is gone: %+v", ss)
			}
		})
	}
}
