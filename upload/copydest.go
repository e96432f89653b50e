package upload

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// copyDest is what a copy's destination must be, as one value: its
// encryption (the SHA256 of its customer-supplied key, or its Cloud KMS key
// name), its preconditions, its storage class and its metadata. Every path
// of a copy takes it whole: the record saves it (state.Rewrite.Dest), a
// resume restores it from there (and needs the key whose SHA256 it names),
// a copy run again compares its own with it, and every rewrite call is
// built from it. So no path can drop one field, the key least of all.
type copyDest struct {
	KeySHA256         string `json:"key_sha256,omitempty"`
	KMSKeyName        string `json:"kms_key_name,omitempty"`
	NoClobber         bool   `json:"no_clobber,omitempty"`
	IfGenerationMatch *int64 `json:"if_generation_match,omitempty"`
	StorageClass      string `json:"storage_class,omitempty"`
	Attrs             *Attrs `json:"attrs,omitempty"`
	// Holds are the destination's holds and retention when Attrs is nil
	// (CopyOptions.Holds); with Attrs, its own.
	Holds Holds `json:"holds,omitzero"`
}

// copyDestOf is the destination a copy with o asks for: o's preconditions,
// class and metadata; the call's key (Encryption.Key), else the KMS key of
// o.Attrs, else the call's (Encryption.KMSKeyName); see Client.keys.
func (c *Client) copyDestOf(ctx context.Context, o CopyOptions) copyDest {
	keys := c.keys(ctx)
	d := copyDest{KeySHA256: keys.Key.SHA256(), NoClobber: o.NoClobber, IfGenerationMatch: o.IfGenerationMatch,
		StorageClass: o.StorageClass, Attrs: o.Attrs, Holds: o.Holds}
	if o.Attrs != nil {
		d.KMSKeyName = o.Attrs.KMSKeyName
	}
	if d.KMSKeyName == "" && d.KeySHA256 == "" {
		d.KMSKeyName = keys.KMSKeyName
	}
	return d
}

// savedDest is the destination a saved copy was started for; ok is false
// for a record that holds none (saved by an older gcsput) or one that does
// not parse.
func savedDest(rec *state.Record) (d copyDest, ok bool) {
	if rec == nil || rec.Rewrite == nil || len(rec.Rewrite.Dest) == 0 {
		return d, false
	}
	return d, json.Unmarshal(rec.Rewrite.Dest, &d) == nil
}

// encode is d as a record keeps it. Its fields are strings, numbers, bools
// and a map of strings, which always encode.
func (d copyDest) encode() json.RawMessage {
	b, _ := json.Marshal(d)
	return b
}

// destKey is the client's key whose SHA256 d names (nil for none), or an
// error matching resumable.ErrEncryptionKey when the client lacks it: a
// saved copy is never continued, nor started over, without its key.
func (c *Client) destKey(ctx context.Context, d copyDest) (resumable.EncryptionKey, error) {
	if d.KeySHA256 == "" {
		return nil, nil
	}
	if k := c.keyFor(ctx, d.KeySHA256); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("%w: the copy was started with the customer-supplied encryption key whose SHA256 begins %s; give that key to resume it",
		resumable.ErrEncryptionKey, resumable.ShortSHA256(d.KeySHA256))
}

// encryptionChange refuses a transfer (what: "copy" or "upload") run
// again with another encryption than its saved one's (want against saved):
// continuing would write the destination under the saved key (GCS binds a
// rewrite token and an upload session to it), and starting over would
// silently drop the key of the run before, so the caller decides: the same
// key resumes, a cancelled saved transfer (Client.CancelSession, 'gcsput
// sessions cancel') starts over under the new one. The wording is an
// upload's resume's.
func encryptionChange(what string, saved, want copyDest) error {
	cancel := "; or cancel the saved " + what + " to " + what + " from the start"
	short := resumable.ShortSHA256
	switch {
	case saved.KeySHA256 == want.KeySHA256 && saved.KMSKeyName == want.KMSKeyName:
		return nil
	case saved.KeySHA256 != "" && want.KeySHA256 != "":
		return fmt.Errorf("%w: the %s was started with the customer-supplied encryption key whose SHA256 begins %s, not %s…; give that key to resume it"+cancel,
			resumable.ErrEncryptionKey, what, short(saved.KeySHA256), short(want.KeySHA256))
	case saved.KeySHA256 != "":
		return fmt.Errorf("%w: the %s was started with the customer-supplied encryption key whose SHA256 begins %s; give that key to resume it"+cancel,
			resumable.ErrEncryptionKey, what, short(saved.KeySHA256))
	case saved.KMSKeyName != "" && want.KMSKeyName != "":
		return fmt.Errorf("%w: the %s was started with the Cloud KMS key %s, not %s; give that key to resume it"+cancel,
			resumable.ErrEncryptionKey, what, saved.KMSKeyName, want.KMSKeyName)
	case saved.KMSKeyName != "":
		return fmt.Errorf("%w: the %s was started with the Cloud KMS key %s; give that key to resume it"+cancel,
			resumable.ErrEncryptionKey, what, saved.KMSKeyName)
	case want.KeySHA256 != "":
		return fmt.Errorf("%w: the %s was started without an encryption key, and is given one (SHA256 %s…); cancel the saved %s to %s from the start under it",
			resumable.ErrEncryptionKey, what, short(want.KeySHA256), what, what)
	default:
		return fmt.Errorf("%w: the %s was started without an encryption key, and is given the Cloud KMS key %s; cancel the saved %s to %s from the start under it",
			resumable.ErrEncryptionKey, what, want.KMSKeyName, what, what)
	}
}

// encryptionOf is the encryption part of a destination an upload's
// initiation request asks for: its key's SHA256 or its Cloud KMS key.
func encryptionOf(sp resumable.ObjectSpec) copyDest {
	return copyDest{KeySHA256: sp.Key.SHA256(), KMSKeyName: sp.KMSKeyName}
}

// otherChange names what else than its encryption want changes of saved's
// destination ("" for nothing): the preconditions, the storage class or the
// metadata. A copy run again with another one starts over under its own.
func otherChange(saved, want copyDest) string {
	switch {
	case saved.NoClobber != want.NoClobber || !sameGeneration(saved.IfGenerationMatch, want.IfGenerationMatch):
		return "its preconditions"
	case saved.StorageClass != want.StorageClass:
		return "its storage class"
	case !sameAttrs(saved.Attrs, want.Attrs):
		return "its metadata"
	case saved.Holds != want.Holds:
		return "its holds or retention"
	}
	return ""
}

func sameGeneration(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func sameAttrs(a, b *Attrs) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ContentType == b.ContentType && a.CacheControl == b.CacheControl && a.ContentDisposition == b.ContentDisposition &&
		a.ContentEncoding == b.ContentEncoding && a.ContentLanguage == b.ContentLanguage && a.StorageClass == b.StorageClass &&
		a.KMSKeyName == b.KMSKeyName && maps.Equal(nonEmpty(a.Metadata), nonEmpty(b.Metadata)) && a.Holds == b.Holds
}
