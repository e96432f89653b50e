package main

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gcsput/gcsput/upload"
)

// gzipRule is -z EXT,... or -Z: which uploaded files are stored gzipped, with
// Content-Encoding: gzip (downloads then decompress them, as GCS transcodes).
type gzipRule struct {
	all  bool
	exts map[string]bool // lower case, without the dot
}

func parseGzipRule(exts string, all bool) gzipRule {
	r := gzipRule{all: all, exts: map[string]bool{}}
	for _, e := range strings.Split(exts, ",") {
		if e = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(e), ".")); e != "" {
			r.exts[e] = true
		}
	}
	return r
}

func (r gzipRule) matches(path string) bool {
	return r.all || r.exts[strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))]
}

func (r gzipRule) active() bool { return r.all || len(r.exts) > 0 }

// gzipped compresses src into dir, at a path named from src's absolute path,
// and returns it. A compressed copy at least as new as src is reused, so a
// rerun after a kill finds the same file, and its saved session resumes.
// The compressed bytes are what is uploaded: their CRC32C is the stored
// object's, checked like any upload's.
func gzipped(src, dir string) (string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	out := filepath.Join(dir, hex.EncodeToString(sum[:12])+".gz")
	si, err := os.Stat(src)
	if err != nil {
		return "", err
	}
	if oi, err := os.Stat(out); err == nil && oi.Size() > 0 && !oi.ModTime().Before(si.ModTime()) {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(dir, ".gz-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	zw := gzip.NewWriter(tmp)
	if _, err := io.Copy(zw, in); err != nil {
		tmp.Close()
		return "", fmt.Errorf("compressing %s: %w", src, err)
	}
	if err := zw.Close(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return out, os.Rename(tmp.Name(), out)
}

// uploadGzipped uploads the items the rule takes as gzip-compressed copies
// (Content-Encoding: gzip, the content type of the original name), reporting
// each under its original path, and returns the items left to upload plainly.
func (j *job) uploadGzipped(ctx context.Context, items []upload.Item, rule gzipRule, stateDir string, o upload.UploadOptions) []upload.Item {
	if !rule.active() {
		return items
	}
	var plain, zipped []upload.Item
	dir := filepath.Join(stateDir, "gzip")
	for _, it := range items {
		if !rule.matches(it.Local) {
			plain = append(plain, it)
			continue
		}
		gz, err := gzipped(it.Local, dir)
		if err != nil {
			j.add(&upload.Result{Source: it.Local, Dest: it.Remote.String(), Status: upload.StatusFailed, Err: err})
			continue
		}
		j.mu.Lock()
		j.originals[gz] = it.Local
		j.mu.Unlock()
		zipped = append(zipped, upload.Item{Local: gz, Remote: it.Remote})
	}
	if len(zipped) > 0 {
		zo := o
		zo.Attrs.ContentEncoding = "gzip"
		results, _ := j.client.Upload(ctx, zipped, zo)
		for i, r := range results { // in the order of zipped
			if r.OK() {
				os.Remove(zipped[i].Local) // the compressed copy, done with; never the user's file
			}
		}
	}
	return plain
}
