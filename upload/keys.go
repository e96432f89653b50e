package upload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/gcsput/gcsput/resumable"
)

// Keys and billing. Options.EncryptionKey (a customer-supplied key, CSEK)
// encrypts what the client writes; it and Options.DecryptionKeys read what
// was written under them, each object with the key whose SHA256 its
// metadata names (customerEncryption.keySha256), as gcloud's
// --decryption-keys do. Options.UserProject bills every request to a
// project, which a requester-pays bucket requires. The keys travel in
// request headers only: state records, events, results and errors hold
// their SHA256 at most.

// ErrNoDecryptionKey reports an object encrypted with a customer-supplied
// key that is none of the client's keys.
var ErrNoDecryptionKey = errors.New("encrypted with a customer-supplied encryption key that was not given")

// checkKeys refuses keys that are not AES-256, and a CSEK with a KMS key.
// A key given but empty (a non-nil EncryptionKey of no bytes, an empty
// decryption key, a KMSKeyName of whitespace) is refused too: it is what a
// failed read of a key file or an empty secret gives, and taking it as "no
// key" would write the object unencrypted.
func checkKeys(o Options) error {
	if o.EncryptionKey != nil && len(o.EncryptionKey) == 0 {
		return fmt.Errorf("upload: %w: the customer-supplied encryption key is empty (set EncryptionKey to nil for no key)", ErrBadOption)
	}
	for i, k := range o.DecryptionKeys {
		if len(k) == 0 {
			return fmt.Errorf("upload: %w: decryption key %d is empty", ErrBadOption, i+1)
		}
	}
	for _, k := range append([]resumable.EncryptionKey{o.EncryptionKey}, o.DecryptionKeys...) {
		if len(k) != 0 && len(k) != 32 {
			return fmt.Errorf("upload: %w: a customer-supplied encryption key is 32 bytes (AES-256), got %d", ErrBadOption, len(k))
		}
	}
	switch t := strings.TrimSpace(o.KMSKeyName); {
	case t == "" && o.KMSKeyName != "":
		return fmt.Errorf("upload: %w: the Cloud KMS key name is only whitespace (leave KMSKeyName empty for no key)", ErrBadOption)
	case t != o.KMSKeyName:
		return fmt.Errorf("upload: %w: the Cloud KMS key name has surrounding whitespace: trim it", ErrBadOption)
	}
	if len(o.EncryptionKey) > 0 && o.KMSKeyName != "" {
		return fmt.Errorf("upload: %w: an encryption key and a Cloud KMS key name cannot both be given", ErrBadOption)
	}
	return nil
}

// hasKeys reports whether the client has any key to read with: downloads
// then read the object's metadata first, to pick the key by its SHA256.
func (c *Client) hasKeys() bool {
	return len(c.opts.EncryptionKey) > 0 || len(c.opts.DecryptionKeys) > 0
}

// keyFor returns the client's key whose SHA256 is sha, nil if none.
func (c *Client) keyFor(sha string) resumable.EncryptionKey {
	if sha == "" {
		return nil
	}
	for _, k := range append([]resumable.EncryptionKey{c.opts.EncryptionKey}, c.opts.DecryptionKeys...) {
		if len(k) > 0 && k.SHA256() == sha {
			return k
		}
	}
	return nil
}

// readKey is the key to read the object of attrs with: nil for an object
// without a CSEK, an error matching ErrNoDecryptionKey (naming the
// SHA256's first characters) when the client has no such key.
func (c *Client) readKey(attrs *storage.ObjectAttrs) (resumable.EncryptionKey, error) {
	if attrs == nil || attrs.CustomerKeySHA256 == "" {
		return nil, nil
	}
	if k := c.keyFor(attrs.CustomerKeySHA256); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("gs://%s/%s is %w (its SHA256 begins %s)", attrs.Bucket, attrs.Name, ErrNoDecryptionKey,
		resumable.ShortSHA256(attrs.CustomerKeySHA256))
}

// bucket is the official client's handle of a bucket, billed to
// Options.UserProject.
func (c *Client) bucket(name string) *storage.BucketHandle {
	b := c.gcs.Bucket(name)
	if c.opts.UserProject != "" {
		b = b.UserProject(c.opts.UserProject)
	}
	return b
}

// object is the official client's handle of an object, billed to
// Options.UserProject.
func (c *Client) object(u URL) *storage.ObjectHandle { return c.bucket(u.Bucket).Object(u.Object) }

// keyedAttrs reads again, with its key, the metadata of a CSEK object that
// was read without it (a listing, a first Stat): GCS shows its CRC32C and
// MD5 only to a request that carries the key. attrs without a CSEK, or
// with its hashes, come back as they are; with a key the client lacks, as
// they are, hashes missing.
func (c *Client) keyedAttrs(ctx context.Context, attrs *storage.ObjectAttrs) (*storage.ObjectAttrs, error) {
	k := c.keyFor(attrs.CustomerKeySHA256)
	if k == nil || attrs.CRC32C != 0 || len(attrs.MD5) != 0 {
		return attrs, nil
	}
	o := c.object(URL{Bucket: attrs.Bucket, Object: attrs.Name}).Generation(attrs.Generation).Key(k)
	var out *storage.ObjectAttrs
	err := c.runner.Do(ctx, func(ctx context.Context) error {
		var err error
		out, err = o.Attrs(ctx)
		return permanentIfMissing(err)
	})
	return out, err
}

// ErrUserProjectMissing matches the error of a request to a requester-pays
// bucket that named no project to bill (Options.UserProject empty). Once a
// client meets it, every transfer it has not started yet fails at once
// with the same error, without a request: the whole batch lacks the
// project, not one file.
var ErrUserProjectMissing = errors.New("the bucket is requester pays and no project to bill was given (Options.UserProject)")

// billingError is ErrUserProjectMissing with the server's answer.
type billingError struct{ err error }

func (e *billingError) Error() string        { return ErrUserProjectMissing.Error() + ": " + e.err.Error() }
func (e *billingError) Unwrap() []error      { return []error{ErrUserProjectMissing, e.err} }
func (e *billingError) Is(target error) bool { return target == ErrUserProjectMissing }

// billed turns GCS's answer to a request without userProject to a
// requester-pays bucket (400, "Bucket is a requester pays bucket but no
// user project provided.") into an error matching ErrUserProjectMissing.
func billed(err error) error {
	var ge *googleapi.Error
	if err == nil || errors.Is(err, ErrUserProjectMissing) || !errors.As(err, &ge) || ge.Code != http.StatusBadRequest {
		return err
	}
	if !strings.Contains(strings.ToLower(ge.Message+" "+ge.Body), "requester pays") {
		return err
	}
	return &billingError{err: err}
}

// billingStop returns the requester-pays error the client met, if any.
func (c *Client) billingStop() error {
	if p := c.noBilling.Load(); p != nil {
		return *p
	}
	return nil
}

// noteBilling remembers the first requester-pays error and returns err as
// billed classifies it.
func (c *Client) noteBilling(err error) error {
	err = billed(err)
	if errors.Is(err, ErrUserProjectMissing) {
		c.noBilling.CompareAndSwap(nil, &err)
	}
	return err
}
