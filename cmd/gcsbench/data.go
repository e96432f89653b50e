package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// dataset is the generated source data: one large file and many small ones,
// random (incompressible) and reproducible from the seed.
type dataset struct {
	Dir   string
	Large fileRef
	Small []fileRef
	// Wire and WireSmall are the wire scenarios' files: Large itself when
	// the sizes agree, and the first options.WireFiles small files.
	Wire      fileRef
	WireSmall []fileRef
	// Sums holds every file's size and CRC32C by object name, to check what
	// the clients moved.
	Sums map[string]objectSum
}

// dataPrefix is where the downloadable copies live on fakegcs and on the
// plain server.
const dataPrefix = "data/"

func generate(dir string, o options) (*dataset, error) {
	d := &dataset{Dir: dir, Sums: map[string]objectSum{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], o.Seed)
	src := rand.NewChaCha8(seed)
	var err error
	if d.Large, err = d.write(src, "large.bin", o.Size); err != nil {
		return nil, err
	}
	if d.Small, err = d.writeSmall(src, "small", o.Files, o.FileSize); err != nil || !anyWire(o) {
		return d, err
	}
	// A directory of their own: the CLIs copy a whole directory.
	if d.WireSmall, err = d.writeSmall(src, "wiresmall", o.WireFiles, o.FileSize); err != nil {
		return d, err
	}
	d.Wire = d.Large
	if o.WireSize != o.Size {
		d.Wire, err = d.write(src, "wire.bin", o.WireSize)
	}
	return d, err
}

// writeSmall writes n files of size bytes into dir.
func (d *dataset) writeSmall(src io.Reader, dir string, n int, size int64) ([]fileRef, error) {
	if err := os.MkdirAll(filepath.Join(d.Dir, dir), 0o755); err != nil {
		return nil, err
	}
	var out []fileRef
	for i := range n {
		f, err := d.write(src, fmt.Sprintf("%s/f%05d", dir, i), size)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func (d *dataset) write(src io.Reader, object string, size int64) (fileRef, error) {
	ref := fileRef{Path: filepath.Join(d.Dir, filepath.FromSlash(object)), Object: object, Size: size}
	f, err := os.Create(ref.Path)
	if err != nil {
		return ref, err
	}
	h := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	if _, err := io.CopyN(w, src, size); err != nil {
		f.Close()
		return ref, err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return ref, err
	}
	d.Sums[object] = objectSum{Size: size, CRC32C: h.Sum32()}
	return ref, f.Close()
}

// checkFiles compares downloaded files with the sources.
func (d *dataset) checkFiles(files []fileRef) error {
	for _, f := range files {
		got, err := sumFile(f.Path)
		if err != nil {
			return err
		}
		if want := d.Sums[f.Object]; got != want {
			return fmt.Errorf("downloaded %s: size %d crc32c %08x, want size %d crc32c %08x",
				f.Object, got.Size, got.CRC32C, want.Size, want.CRC32C)
		}
	}
	return nil
}

// checkUploaded compares what a server received with the sources.
func (d *dataset) checkUploaded(files []fileRef, got map[string]objectSum) error {
	for _, f := range files {
		g, ok := got[f.Object]
		if !ok {
			return fmt.Errorf("uploaded %s: not on the server", f.Object)
		}
		if want := d.Sums[f.Object]; g != want {
			return fmt.Errorf("uploaded %s: size %d crc32c %08x, want size %d crc32c %08x",
				f.Object, g.Size, g.CRC32C, want.Size, want.CRC32C)
		}
	}
	return nil
}

func sumFile(path string) (objectSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return objectSum{}, err
	}
	defer f.Close()
	return discard(f)
}
