// Package eventlog writes gcsput's --log file, one JSON object per line, and the
// lines -v prints before a retry. Nothing it writes may hold a secret: every line
// passes through Redact, which removes session IDs and bearer tokens.
package eventlog

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Log appends one JSON object per line to w. Every line is passed through Redact as
// it is written, so a session URI or token can never reach the file even if an event
// or an error message carried one by mistake. A nil *Log writes nothing.
type Log struct {
	mu sync.Mutex
	w  io.Writer
	f  *os.File // nil when w is not a file Open opened

	// Now stamps each line; nil means time.Now.
	Now func() time.Time
}

// Open opens the file name for appending, creating it mode 0600 (the log names files
// and buckets); "" gives a nil Log, whose methods do nothing.
func Open(name string) (*Log, error) {
	if name == "" {
		return nil, nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &Log{w: f, f: f}, nil
}

// Write logs one event: kind ("retry", "chunk", "result", ...) plus the fields of
// fields, a struct or map, after the time and the kind.
func (l *Log) Write(kind string, fields any) {
	if l == nil {
		return
	}
	b, err := json.Marshal(fields)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"marshal_error": err.Error()})
	}
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	line := fmt.Sprintf(`{"time":%q,"event":%q`, now().UTC().Format(time.RFC3339Nano), kind)
	if body := strings.TrimSpace(string(b)); len(body) > 2 && body[0] == '{' {
		line += "," + body[1:]
	} else {
		line += "}"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, Redact(line))
}

// Close closes the file Open opened; it does nothing for a nil Log or one from New.
func (l *Log) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	return l.f.Close()
}

// Secrets that must never be printed: the upload_id of a session URI (whoever holds it can
// write the object) and bearer tokens.
var (
	uploadIDPattern = regexp.MustCompile(`(upload_id=)[A-Za-z0-9_.~%-]+`)
	bearerPattern   = regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+`)
)

// Redact removes session IDs and tokens from s.
func Redact(s string) string {
	s = uploadIDPattern.ReplaceAllString(s, "${1}REDACTED")
	return bearerPattern.ReplaceAllString(s, "${1}REDACTED")
}
