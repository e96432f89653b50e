package resumable

import (
	"crypto/md5"
	"fmt"
	"hash"
	"hash/crc32"
)

// castagnoli is the CRC-32C table GCS uses for object checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// digest is the running checksum of an object's first off bytes. The
// uploader keeps one that always covers exactly the bytes the server has
// persisted (never bytes merely sent), so the X-Goog-Hash of the final
// request describes the object the server will assemble.
type digest struct {
	off int64       // bytes covered
	crc hash.Cloner // CRC-32C, always present
	md5 hash.Cloner // nil unless MD5 was asked for
}

// newDigest returns the digest of zero bytes.
func newDigest(withMD5 bool) *digest {
	d := &digest{crc: crc32.New(castagnoli).(hash.Cloner)}
	if withMD5 {
		d.md5 = md5.New().(hash.Cloner)
	}
	return d
}

// Write hashes p and advances off. It never fails.
func (d *digest) Write(p []byte) (int, error) {
	d.crc.Write(p)
	if d.md5 != nil {
		d.md5.Write(p)
	}
	d.off += int64(len(p))
	return len(p), nil
}

// clone returns an independent copy, to hash bytes that are sent but not yet
// acknowledged.
func (d *digest) clone() *digest {
	c := &digest{off: d.off, crc: mustClone(d.crc)}
	if d.md5 != nil {
		c.md5 = mustClone(d.md5)
	}
	return c
}

// mustClone clones a standard library hash, which never fails to clone.
func mustClone(h hash.Cloner) hash.Cloner {
	c, err := h.Clone()
	if err != nil {
		panic("resumable: stdlib hash failed to clone: " + err.Error())
	}
	return c
}

// sums returns the checksums of the bytes written so far.
func (d *digest) sums() Hashes {
	h := Hashes{CRC32C: d.crc.(hash.Hash32).Sum32(), HasCRC32C: true}
	if d.md5 != nil {
		h.MD5 = d.md5.Sum(nil)
	}
	return h
}

// save stores the digest in s (HashOffset and the marshalled states), so a
// later process can continue it without re-reading the persisted prefix.
func (d *digest) save(s *Session) error {
	crcState, err := d.crc.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary()
	if err != nil {
		return err
	}
	var md5State []byte
	if d.md5 != nil {
		if md5State, err = d.md5.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary(); err != nil {
			return err
		}
	}
	s.HashOffset, s.CRC32CState, s.MD5State = d.off, crcState, md5State
	return nil
}

// restoreDigest rebuilds the digest saved in s. When a state is missing or
// unreadable it returns the digest of zero bytes: the caller then re-reads
// the persisted prefix from the source to catch up.
func restoreDigest(s *Session, withMD5 bool) *digest {
	d := newDigest(withMD5)
	if s.HashOffset <= 0 || s.CRC32CState == nil || (withMD5 && s.MD5State == nil) {
		return d
	}
	if err := unmarshalState(d.crc, s.CRC32CState); err != nil {
		return newDigest(withMD5)
	}
	if withMD5 {
		if err := unmarshalState(d.md5, s.MD5State); err != nil {
			return newDigest(withMD5)
		}
	}
	d.off = s.HashOffset
	return d
}

func unmarshalState(h hash.Hash, state []byte) error {
	u, ok := h.(interface{ UnmarshalBinary([]byte) error })
	if !ok {
		return fmt.Errorf("hash %T cannot restore its state", h)
	}
	return u.UnmarshalBinary(state)
}
