package resumable

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"hash/crc32"
	"sync/atomic"
	"testing"
)

// hashedSource is a file whose full-object hashes its caller computed
// already; it counts the bytes read from it and the calls for its hashes.
type hashedSource struct {
	*bytes.Reader
	h      Hashes
	read   atomic.Int64
	hashes atomic.Int32
}

func (s *hashedSource) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.Reader.ReadAt(p, off)
	s.read.Add(int64(n))
	return n, err
}

func (s *hashedSource) Hashes() (Hashes, error) {
	s.hashes.Add(1)
	return s.h, nil
}

// A source that knows its hashes is read once, to be sent: the final
// request's X-Goog-Hash is the source's, not a second reading of the final
// chunk (which, before, read and hashed a component of 32 MiB while its
// PUT waited). The server checks it: hashes that are not of the bytes fail
// the upload with ErrChecksumMismatch and create no object. Hashes without
// the MD5 that Options.MD5 asks for are not enough: the bytes are hashed.
func TestUploadTakesTheSourcesHashes(t *testing.T) {
	data := testData(3*kib256 + 100)
	good := Hashes{CRC32C: crc32.Checksum(data, castagnoli), HasCRC32C: true}
	for _, tc := range []struct {
		name     string
		chunk    int
		md5      bool
		h        Hashes
		read     int64 // bytes read from the source
		mismatch bool
	}{
		{"one request", 4 * kib256, false, good, int64(len(data)), false},
		{"chunks", kib256, false, good, int64(len(data)), false},
		{"wrong hashes", 4 * kib256, false, Hashes{CRC32C: good.CRC32C + 1, HasCRC32C: true}, int64(len(data)), true},
		{"md5 asked", 4 * kib256, true, good, 2 * int64(len(data)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.chunk)
			if tc.md5 {
				c, err := New(Options{HTTPClient: e.srv.Client(), Endpoint: e.srv.URL(), ChunkSize: tc.chunk, MD5: true})
				if err != nil {
					t.Fatal(err)
				}
				e.c = c
			}
			ctx := context.Background()
			s, err := e.c.Start(ctx, ObjectSpec{Bucket: "bkt", Name: "o", Size: int64(len(data))})
			if err != nil {
				t.Fatal(err)
			}
			src := &hashedSource{Reader: bytes.NewReader(data), h: tc.h}
			_, err = e.c.Upload(ctx, s, src)
			if tc.mismatch {
				if !errors.Is(err, ErrChecksumMismatch) {
					t.Fatalf("err = %v, want ErrChecksumMismatch", err)
				}
				if _, _, err := e.srv.Object("bkt", "o"); err == nil {
					t.Fatal("an object was created under hashes that are not its bytes'")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				got, attrs, err := e.srv.Object("bkt", "o")
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("stored object differs (%v)", err)
				}
				if sum := md5.Sum(data); tc.md5 && !bytes.Equal(attrs.MD5, sum[:]) {
					t.Fatalf("md5 %x, want %x", attrs.MD5, sum)
				}
			}
			if got := src.read.Load(); got != tc.read {
				t.Fatalf("%d bytes read from a %d-byte source, want %d", got, len(data), tc.read)
			}
			if src.hashes.Load() == 0 {
				t.Fatal("the source's hashes were never asked for")
			}
		})
	}
}
