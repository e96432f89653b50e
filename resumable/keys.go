package resumable

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
)

// EncryptionKey is a customer-supplied encryption key (CSEK): the 32 bytes
// of an AES-256 key. GCS encrypts an object with it and keeps only its
// SHA256; every request that writes or reads the object's content must
// carry the key again (cloud.google.com/storage/docs/encryption/customer-supplied-keys).
// It is a secret: this package sends it in the X-Goog-Encryption-* headers
// of the requests that need it and never writes it anywhere else; a saved
// [Session] holds its SHA256 only.
type EncryptionKey []byte

// ErrEncryptionKey reports a transfer refused locally because the key it
// needs was not given, or another was: a resumed upload without the key its
// session was started with.
var ErrEncryptionKey = errors.New("customer-supplied encryption key missing or wrong")

// SHA256 is the key's SHA256 in base64, as GCS reports it in an object's
// customerEncryption.keySha256; "" for no key.
func (k EncryptionKey) SHA256() string {
	if len(k) == 0 {
		return ""
	}
	s := sha256.Sum256(k)
	return base64.StdEncoding.EncodeToString(s[:])
}

// check refuses a key that is not an AES-256 key.
func (k EncryptionKey) check() error {
	if len(k) != 0 && len(k) != 32 {
		return fmt.Errorf("a customer-supplied encryption key is 32 bytes (AES-256), got %d", len(k))
	}
	return nil
}

// set adds the key's headers to h (nothing for no key).
func (k EncryptionKey) set(h http.Header) { k.setAs(h, "X-Goog-Encryption-") }

// setSource adds the key's headers for a copy's source to h: the
// X-Goog-Copy-Source-Encryption-* headers a rewrite of an object encrypted
// with this key must carry (nothing for no key).
func (k EncryptionKey) setSource(h http.Header) { k.setAs(h, "X-Goog-Copy-Source-Encryption-") }

// setAs adds the key's three headers, their names beginning with prefix.
func (k EncryptionKey) setAs(h http.Header, prefix string) {
	if len(k) == 0 {
		return
	}
	h.Set(prefix+"Algorithm", "AES256")
	h.Set(prefix+"Key", base64.StdEncoding.EncodeToString(k))
	h.Set(prefix+"Key-Sha256", k.SHA256())
}

// ShortSHA256 is the first 8 characters of a key's SHA256 (base64), enough
// to tell keys apart in a message and nothing about the key itself.
func ShortSHA256(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}

// checkKey refuses to continue a session without the key it was started
// with: GCS would refuse the object to every read after, or the chunks.
func (s *Session) checkKey() error {
	switch got := s.Key.SHA256(); {
	case s.KeySHA256 == "" && got == "":
		return nil
	case s.KeySHA256 == "":
		return fmt.Errorf("%w: the upload was started without a customer-supplied encryption key, and is given one (SHA256 %s…)", ErrEncryptionKey, ShortSHA256(got))
	case got == "":
		return fmt.Errorf("%w: the upload was started with the customer-supplied encryption key whose SHA256 begins %s; give that key to resume it", ErrEncryptionKey, ShortSHA256(s.KeySHA256))
	case got != s.KeySHA256:
		return fmt.Errorf("%w: the upload was started with the key whose SHA256 begins %s, not %s…; give that key to resume it", ErrEncryptionKey, ShortSHA256(s.KeySHA256), ShortSHA256(got))
	}
	return nil
}

// billTo names the project billed for req (Options.UserProject), which a
// requester-pays bucket requires of every request.
func (c *Client) billTo(req *http.Request) {
	if c.opts.UserProject == "" {
		return
	}
	q := req.URL.Query()
	if q.Get("userProject") != "" {
		return
	}
	q.Set("userProject", c.opts.UserProject)
	u := *req.URL
	u.RawQuery = q.Encode()
	req.URL = &u
}

// String keeps the key out of anything that prints it (%v, %s, %x).
func (k EncryptionKey) String() string {
	if len(k) == 0 {
		return "no key"
	}
	return "key with SHA256 " + ShortSHA256(k.SHA256()) + "…"
}

// GoString keeps %#v from printing the key.
func (k EncryptionKey) GoString() string { return k.String() }
