package resumable

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

func TestParseEncryptionKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xfb}, 32) // +/ in standard base64, -_ in URL's
	for _, s := range []string{base64.StdEncoding.EncodeToString(raw), " " + base64.URLEncoding.EncodeToString(raw) + "\n"} {
		k, err := ParseEncryptionKey(s)
		if err != nil || !bytes.Equal(k, raw) {
			t.Errorf("ParseEncryptionKey(%q) = %x, %v", s, k, err)
		}
	}
	secret := "not-a-key!" + strings.Repeat("x", 30)
	short := base64.StdEncoding.EncodeToString(raw[:16])
	for s, want := range map[string]string{
		secret: "not base64 (a key is 32 random bytes in base64, e.g. from 'openssl rand -base64 32', or a Cloud KMS key name)",
		short:  "an AES-256 key is 32 bytes, this one decodes to 16",
	} {
		_, err := ParseEncryptionKey(s)
		if err == nil || err.Error() != want || strings.Contains(err.Error(), s) {
			t.Errorf("ParseEncryptionKey(%q) = %v, want %q (never the key)", s, err, want)
		}
	}
}

func TestParseEncryptionKeys(t *testing.T) {
	a, b := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	ea, eb := base64.StdEncoding.EncodeToString(a), base64.StdEncoding.EncodeToString(b)
	keys, err := ParseEncryptionKeys("# old key\n" + ea + ", \n\n " + eb + "\n")
	if err != nil || len(keys) != 2 || !bytes.Equal(keys[0], a) || !bytes.Equal(keys[1], b) {
		t.Fatalf("ParseEncryptionKeys = %x, %v", keys, err)
	}
	if keys, err := ParseEncryptionKeys(" ,\n# only a comment\n"); err != nil || len(keys) != 0 {
		t.Errorf("no keys: %x, %v", keys, err)
	}
	_, err = ParseEncryptionKeys(ea + "," + "c2hvcnQ=")
	if want := "key 2: an AES-256 key is 32 bytes, this one decodes to 5"; err == nil || err.Error() != want {
		t.Errorf("bad second key: %v, want %q", err, want)
	}
}
