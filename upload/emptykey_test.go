package upload

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/resumable"
)

// A key given but empty is an error, never "no key": a non-nil empty
// EncryptionKey (a failed read of a key file), an empty decryption key, or
// a KMSKeyName of whitespace would otherwise write or read unencrypted.
func TestNewRefusesEmptyKeys(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{EncryptionKey: resumable.EncryptionKey{}}, "upload: bad option: the customer-supplied encryption key is empty (set EncryptionKey to nil for no key)"},
		{Options{DecryptionKeys: []resumable.EncryptionKey{make(resumable.EncryptionKey, 32), {}}}, "upload: bad option: decryption key 2 is empty"},
		{Options{KMSKeyName: " \t\n"}, "upload: bad option: the Cloud KMS key name is only whitespace (leave KMSKeyName empty for no key)"},
		{Options{KMSKeyName: " projects/p/locations/l/keyRings/r/cryptoKeys/k\n"}, "upload: bad option: the Cloud KMS key name has surrounding whitespace: trim it"},
	} {
		tc.opts.Auth = auth.Options{NoAuth: true}
		c, err := New(context.Background(), tc.opts)
		if !errors.Is(err, ErrBadOption) || fmt.Sprint(err) != tc.want {
			t.Errorf("New: %v; want %q matching ErrBadOption", err, tc.want)
		}
		if c != nil {
			c.Close()
		}
	}
}
