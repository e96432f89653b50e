package upload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/resumable"
)

// Sync and encryption. A listing names each object's key (the SHA256 of a
// customer-supplied key, or a Cloud KMS key) but hides a CSEK object's
// hashes; GCS shows them to a request that carries the key. So a sync
// compares such an object by the CRC32C it reads with the key, one request
// per object whose size matches. The key the Client writes with
// (Options.EncryptionKey or KMSKeyName) is part of what the destination
// must be: an object under another key is a change, re-written under the
// Client's. Without a key to write with, an object under a customer-supplied
// key is never replaced: the copy would be unencrypted.

// ErrEncryptedDest matches the error of a sync entry that would replace an
// object encrypted with a customer-supplied key by one without it: no key
// to write with was given (Options.EncryptionKey, Options.KMSKeyName). The
// object is left as it is; the rest of the sync goes on.
var ErrEncryptedDest = errors.New("encrypted with a customer-supplied encryption key, and no key to write with was given")

// unchanged reports whether dst already holds src, under the key the
// Client writes with.
func (s *syncRun) unchanged(ctx context.Context, src, dst *syncEntry) (bool, error) {
	if dst != nil && dst.name != "" && s.rekey(dst) {
		return false, nil
	}
	return s.same(ctx, src, dst)
}

// rekey reports whether the object dst was written under another key than
// the one the Client writes with. Without a key to write with there is
// nothing to compare: an object under a bucket's default KMS key is the
// bucket's choice, and a CSEK one is for refusal to guard.
func (s *syncRun) rekey(dst *syncEntry) bool {
	o := s.keys
	switch {
	case len(o.Key) > 0:
		return dst.keySHA != o.Key.SHA256()
	case o.KMSKeyName != "":
		return dst.keySHA != "" || !sameKMS(dst.kms, o.KMSKeyName)
	}
	return false
}

// sameKMS reports whether an object's kmsKeyName, which GCS reports with
// the version that encrypted it (.../cryptoKeys/k/cryptoKeyVersions/1), is
// the key given (.../cryptoKeys/k).
func sameKMS(object, given string) bool {
	return object == given || strings.HasPrefix(object, given+"/cryptoKeyVersions/")
}

// sameCRC compares two entries of the same size by CRC32C: an object's is
// the listing's, or a CSEK object's read with its key; a file's is read
// from the file. Objects first: one whose key the Client lacks cannot be
// compared, and then no file is read for nothing.
func (s *syncRun) sameCRC(ctx context.Context, src, dst *syncEntry) (bool, error) {
	for _, e := range []*syncEntry{src, dst} {
		if e.path != "" || e.hasCRC {
			continue
		}
		side := s.src
		if e == dst {
			side = s.dst
		}
		if ok, err := s.keyedCRC(ctx, side, e); !ok || err != nil {
			return false, err
		}
	}
	for _, e := range []*syncEntry{src, dst} {
		if !e.hasCRC {
			crc, err := s.c.localCRC(e.path, nil)
			if err != nil {
				return false, err
			}
			e.crc, e.hasCRC = crc, true
		}
	}
	return src.crc == dst.crc, nil
}

// keyedCRC reads the CRC32C of the CSEK object e on side with its key, at
// the generation listed: false when the Client lacks the key.
func (s *syncRun) keyedCRC(ctx context.Context, side Side, e *syncEntry) (bool, error) {
	if e.keySHA == "" || s.keys.keyFor(e.keySHA) == nil {
		return false, nil
	}
	a, err := s.c.keyedAttrs(ctx, &storage.ObjectAttrs{Bucket: side.url.Bucket, Name: e.name, Generation: e.gen, CustomerKeySHA256: e.keySHA})
	if err != nil {
		return false, fmt.Errorf("gs://%s/%s: reading its CRC32C with its key: %w", side.url.Bucket, e.name, err)
	}
	e.crc, e.hasCRC = a.CRC32C, true
	return true, nil
}

// refusal is why a planned copy of src over dst (nil: none) must not run,
// nil when it may: a CSEK source the Client has no key for (the download or
// copy would fail at its first request), or a CSEK destination that would be
// replaced by an unencrypted object.
func (s *syncRun) refusal(src, dst *syncEntry) error {
	o := s.keys
	switch {
	case src.name != "" && src.keySHA != "" && s.keys.keyFor(src.keySHA) == nil:
		return fmt.Errorf("gs://%s/%s is %w (its SHA256 begins %s): give it with --decryption-keys or --encryption-key (Options.DecryptionKeys)",
			s.src.url.Bucket, src.name, ErrNoDecryptionKey, resumable.ShortSHA256(src.keySHA))
	case dst != nil && dst.name != "" && dst.keySHA != "" && len(o.Key) == 0 && o.KMSKeyName == "":
		return fmt.Errorf("gs://%s/%s is %w (its SHA256 begins %s): not replaced by an unencrypted object; give the key with --encryption-key or $GCSPUT_ENCRYPTION_KEY (Options.EncryptionKey)",
			s.dst.url.Bucket, dst.name, ErrEncryptedDest, resumable.ShortSHA256(dst.keySHA))
	}
	return nil
}

// keyedBatch bounds the entries held back for keyed reads: a stream of a
// million CSEK objects holds at most this many at once.
const keyedBatch = 1024

// keyedMeet is an entry held back until its CSEK objects' CRC32Cs are read.
type keyedMeet struct {
	rel      string
	src, dst *syncEntry
	err      error // the keyed read's
}

// keyedLater holds back the comparison of src with dst when it needs the
// CRC32C of a CSEK object read with its key, and reports whether it did:
// a read is a request, and the reads run Options.Parallelism at a time
// (flushKeyed) rather than one after another in the stream. Only entries of
// the same size whose keys the Client has are held: a size change is a
// change, an object under another key than the Client writes with is one
// too, and one whose key is missing cannot be compared.
func (s *syncRun) keyedLater(ctx context.Context, p *SyncPlan, rel string, src, dst *syncEntry) bool {
	switch {
	case dst == nil || s.o.CompareMTime || src.size != dst.size:
		return false
	case dst.name != "" && s.rekey(dst):
		return false
	case (src.name == "" || dst.name == "") && (src.gz || dst.gz):
		return false // a file and a gzip-encoded object: compared by the content's metadata
	}
	need := false
	for _, e := range []*syncEntry{src, dst} {
		if e.name == "" || e.hasCRC {
			continue
		}
		if s.keys.keyFor(e.keySHA) == nil {
			return false
		}
		need = true
	}
	if !need {
		return false
	}
	s.keyed = append(s.keyed, keyedMeet{rel: rel, src: src, dst: dst})
	if len(s.keyed) >= keyedBatch {
		s.flushKeyed(ctx, p)
	}
	return true
}

// flushKeyed reads the CRC32Cs of the held entries' CSEK objects,
// Options.Parallelism at a time, then compares the entries in the order
// they came. Each entry is its own: no two share an object.
func (s *syncRun) flushKeyed(ctx context.Context, p *SyncPlan) {
	items := s.keyed
	s.keyed = nil
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(max(s.c.opts.Parallelism, 1), len(items)) {
		wg.Go(func() {
			for i := range next {
				it := &items[i]
				for _, e := range []*syncEntry{it.src, it.dst} {
					if it.err == nil && e.name != "" && !e.hasCRC {
						side := s.src
						if e == it.dst {
							side = s.dst
						}
						_, it.err = s.keyedCRC(ctx, side, e)
					}
				}
			}
		})
	}
	for i := range items {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, it := range items {
		if it.err != nil {
			s.told(s.result(it.rel, it.src.size, StatusFailed, "", it.err))
			continue
		}
		s.compare(ctx, p, it.rel, it.src, it.dst)
	}
}
