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

// Encryption is the keys of a call: the key objects are written with, and
// the keys objects are read with. Each options struct that reads or writes
// object data (UploadOptions, DownloadOptions, CopyOptions, MoveOptions,
// CopyAllOptions, MoveAllOptions, SyncOptions) has one, as the official
// client sets them per object (ObjectHandle.Key, Writer.KMSKeyName). A
// call's Encryption, when set, replaces the Client's (Options.EncryptionKey,
// KMSKeyName and DecryptionKeys, which stay the default of every call that
// sets none) for the whole call: every upload, download, copy, composite
// component and resumed session it makes. Nil is the Client's keys; a
// non-nil Encryption of zero value is no key at all (objects encrypted as
// the bucket says). Like the keys they hold, Encryption values are never
// saved: state records keep a key's SHA256, so a call that continues a saved
// transfer needs the same key (resumable.ErrEncryptionKey otherwise).
// Client.Resume, which takes no options, continues saved transfers with
// the Client's keys.
type Encryption struct {
	// Key, if set, is a customer-supplied encryption key (CSEK, 32 bytes of
	// AES-256) that encrypts what the call writes and reads what was written
	// with it. A non-nil key of no bytes is refused (ErrBadOption): it is what
	// a failed read of a key file gives, never "no key".
	Key resumable.EncryptionKey
	// KMSKeyName, if set, encrypts what the call writes with this Cloud KMS
	// key (projects/P/locations/L/keyRings/R/cryptoKeys/K), unless an
	// upload's Attrs.KMSKeyName names another. Not with Key.
	KMSKeyName string
	// DecryptionKeys are further customer-supplied keys to read with: each
	// object is read with the key (of these and Key) whose SHA256 its
	// metadata names.
	DecryptionKeys []resumable.EncryptionKey
}

// check refuses keys that are not AES-256, and a CSEK with a KMS key. A
// key given but empty (a non-nil Key of no bytes, an empty decryption key,
// a KMSKeyName of whitespace) is refused too: it is what a failed read of a
// key file or an empty secret gives, and taking it as "no key" would write
// the object unencrypted. in names the fields in the errors ("" for
// Options', "UploadOptions.Encryption." for a call's).
func (e Encryption) check(in string) error {
	key := "EncryptionKey"
	if in != "" {
		key = in + "Key"
	}
	if e.Key != nil && len(e.Key) == 0 {
		return fmt.Errorf("upload: %w: the customer-supplied encryption key is empty (set %s to nil for no key)", ErrBadOption, key)
	}
	for i, k := range e.DecryptionKeys {
		if len(k) == 0 {
			return fmt.Errorf("upload: %w: decryption key %d is empty", ErrBadOption, i+1)
		}
	}
	for _, k := range append([]resumable.EncryptionKey{e.Key}, e.DecryptionKeys...) {
		if len(k) != 0 && len(k) != 32 {
			return fmt.Errorf("upload: %w: a customer-supplied encryption key is 32 bytes (AES-256), got %d", ErrBadOption, len(k))
		}
	}
	switch t := strings.TrimSpace(e.KMSKeyName); {
	case t == "" && e.KMSKeyName != "":
		return fmt.Errorf("upload: %w: the Cloud KMS key name is only whitespace (leave %sKMSKeyName empty for no key)", ErrBadOption, in)
	case t != e.KMSKeyName:
		return fmt.Errorf("upload: %w: the Cloud KMS key name has surrounding whitespace: trim it", ErrBadOption)
	}
	if len(e.Key) > 0 && e.KMSKeyName != "" {
		return fmt.Errorf("upload: %w: an encryption key and a Cloud KMS key name cannot both be given", ErrBadOption)
	}
	return nil
}

// checkKeys checks the Client's keys (Options).
func checkKeys(o Options) error { return o.encryption().check("") }

// encryption is the Client's keys, the default of every call.
func (o Options) encryption() Encryption {
	return Encryption{Key: o.EncryptionKey, KMSKeyName: o.KMSKeyName, DecryptionKeys: o.DecryptionKeys}
}

// keysKey carries, in the context of a call of the Client, the keys the
// call resolved (see withKeys).
type keysKey struct{ c *Client }

// withKeys resolves the keys of a call once, at its start: e when set
// (checked: an empty key is an error, never "none"), else those of the call
// it runs in (a batch running its transfers, a move its copy), else the
// Client's. Every read and write the call makes takes its keys from the
// context withKeys returns (Client.keys); what names the options struct in
// errors ("UploadOptions").
func (c *Client) withKeys(ctx context.Context, e *Encryption, what string) (context.Context, error) {
	if e == nil {
		return ctx, nil
	}
	if err := e.check(what + ".Encryption."); err != nil {
		return ctx, err
	}
	k := Encryption{Key: e.Key, KMSKeyName: e.KMSKeyName, DecryptionKeys: append([]resumable.EncryptionKey(nil), e.DecryptionKeys...)}
	return context.WithValue(ctx, keysKey{c}, &k), nil
}

// keys are the keys of the call ctx belongs to (see withKeys): the call's
// own, else the Client's.
func (c *Client) keys(ctx context.Context) Encryption {
	if k, ok := ctx.Value(keysKey{c}).(*Encryption); ok {
		return *k
	}
	return c.opts.encryption()
}

// hasKeys reports whether the call has any key to read with: downloads
// then read the object's metadata first, to pick the key by its SHA256.
func (c *Client) hasKeys(ctx context.Context) bool {
	k := c.keys(ctx)
	return len(k.Key) > 0 || len(k.DecryptionKeys) > 0
}

// keyFor returns the call's key whose SHA256 is sha, nil if none.
func (c *Client) keyFor(ctx context.Context, sha string) resumable.EncryptionKey {
	return c.keys(ctx).keyFor(sha)
}

// keyFor returns the key of e whose SHA256 is sha, nil if none.
func (e Encryption) keyFor(sha string) resumable.EncryptionKey {
	if sha == "" {
		return nil
	}
	for _, k := range append([]resumable.EncryptionKey{e.Key}, e.DecryptionKeys...) {
		if len(k) > 0 && k.SHA256() == sha {
			return k
		}
	}
	return nil
}

// readKey is the key to read the object of attrs with: nil for an object
// without a CSEK, an error matching ErrNoDecryptionKey (naming the
// SHA256's first characters) when the call has no such key.
func (c *Client) readKey(ctx context.Context, attrs *storage.ObjectAttrs) (resumable.EncryptionKey, error) {
	if attrs == nil || attrs.CustomerKeySHA256 == "" {
		return nil, nil
	}
	if k := c.keyFor(ctx, attrs.CustomerKeySHA256); k != nil {
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
	k := c.keyFor(ctx, attrs.CustomerKeySHA256)
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
