// Package manifest reads and appends the copy manifest that gcloud storage
// cp --manifest-path (and gsutil cp -L) write: one CSV row per item, with
// the header
//
//	Source,Destination,Start,End,Md5,Source Size,Bytes Transferred,Result,Description
//
// written only when the file is missing or empty. A rerun with the same
// manifest skips every Source whose Result is OK or skip.
//
// Rows are written whole, each with one write(2) on a file opened
// O_APPEND, from one writer per process (a mutex serializes the workers),
// so a kill leaves at most one torn last row. Open ignores such a row and
// cuts it off, so the next row starts on a line of its own.
package manifest

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gcsput/gcsput/internal/escape"
)

// Header is the manifest's first row, as gcloud writes it.
var Header = []string{"Source", "Destination", "Start", "End", "Md5", "Source Size", "Bytes Transferred", "Result", "Description"}

// The values of the Result column.
const (
	OK    = "OK"
	Skip  = "skip"
	Error = "error"
)

// timeLayout is Python's '%Y-%m-%dT%H:%M:%S.%fZ' (microseconds), in UTC.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// Row is one item of the manifest.
type Row struct {
	Source, Destination string
	Start, End          time.Time
	// MD5 is the base64 MD5 of the object, or "" (composite objects have
	// none, and gcsput leaves it empty: it verifies CRC32C).
	MD5 string
	// Size is the source's size in bytes; Transferred the bytes sent (0
	// unless Result is OK).
	Size, Transferred int64
	// Result is OK, Skip or Error; Description the skip reason or error.
	Result      string
	Description string
}

// Manifest is an open manifest file: the sources it records as done, and
// the file rows are appended to.
type Manifest struct {
	path string
	done map[string]bool
	mu   sync.Mutex
	f    *os.File
	err  error // the first write failure
}

// Check refuses a path that cannot be a manifest, before anything is sent:
// a directory, or a file in a directory that does not exist. Its error
// names the path as a shell would take it, and what to do. "" is no
// manifest, and passes.
func Check(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory: name the manifest file (CSV) to write", escape.Shell(path))
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: directory %s does not exist: create it, or name a file in another", escape.Shell(path), escape.Shell(filepath.Dir(path)))
	}
	return nil
}

// Open reads the manifest at path (a missing file is an empty one), then
// opens it for appending (created 0644 less the umask, like any output
// file; gcloud uses default permissions) and writes the header if it is
// empty. A torn last row (no line end: a process killed mid-write) is
// ignored and cut off.
func Open(path string) (*Manifest, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	m := &Manifest{path: path, f: f, done: map[string]bool{}}
	if err := m.load(); err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

// load reads the rows, cuts a torn tail, and leaves the offset at the end.
func (m *Manifest) load() error {
	data, err := io.ReadAll(m.f)
	if err != nil {
		return fmt.Errorf("manifest %s: %w", m.path, err)
	}
	good := m.parse(data)
	if good < int64(len(data)) {
		if err := m.f.Truncate(good); err != nil {
			return fmt.Errorf("manifest %s: cutting a torn last row: %w", m.path, err)
		}
	}
	if _, err := m.f.Seek(good, io.SeekStart); err != nil {
		return fmt.Errorf("manifest %s: %w", m.path, err)
	}
	if good == 0 {
		return m.write(Header)
	}
	return nil
}

// parse records the done sources of data's rows and returns the length of
// its complete rows: a row counts only when it has all nine columns and
// ends with a line end. Whatever follows the last such row (a torn row, or
// text that is not CSV) is not trusted: those sources are sent again.
func (m *Manifest) parse(data []byte) int64 {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	var good int64
	source, result := 0, 7
	for first := true; ; first = false {
		rec, err := r.Read()
		if err != nil {
			return good
		}
		end := r.InputOffset()
		if end == 0 || data[end-1] != '\n' || len(rec) < len(Header) {
			return good
		}
		good = end
		if first && rec[0] == Header[0] {
			source, result = index(rec, "Source", 0), index(rec, "Result", 7)
			continue
		}
		if source < len(rec) && result < len(rec) && (rec[result] == OK || rec[result] == Skip) {
			m.done[rec[source]] = true
		}
	}
}

// index is the column named name in header (gsutil's manifests have an
// UploadId column), else def.
func index(header []string, name string, def int) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	return def
}

// Done reports whether the manifest records source as copied or skipped.
func (m *Manifest) Done(source string) bool { return m.done[source] }

// Add appends row as one write. After a write fails, Add returns that
// error and writes no more.
func (m *Manifest) Add(row Row) error {
	start, end := row.Start, row.End
	if start.IsZero() {
		start = end
	}
	transferred := row.Transferred
	if row.Result != OK {
		transferred = 0
	}
	desc := strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(row.Description)
	return m.write([]string{row.Source, row.Destination, start.UTC().Format(timeLayout), end.UTC().Format(timeLayout),
		row.MD5, strconv.FormatInt(row.Size, 10), strconv.FormatInt(transferred, 10), row.Result, desc})
}

// write appends one CSV line as Python's csv writer makes it (minimal
// quoting, "\r\n" line ends) with a single write.
func (m *Manifest) write(fields []string) error {
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		if strings.ContainsAny(f, ",\"\r\n") {
			f = `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
		}
		b.WriteString(f)
	}
	b.WriteString("\r\n")
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	if _, err := m.f.WriteString(b.String()); err != nil {
		m.err = fmt.Errorf("manifest %s: %w", m.path, err)
	}
	return m.err
}

// Close closes the file; it returns the first write failure, if any.
func (m *Manifest) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	err := m.f.Close()
	return errors.Join(m.err, err)
}
