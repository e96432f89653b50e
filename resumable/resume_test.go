package resumable

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	storage "google.golang.org/api/storage/v1"
)

// TestResumeSavedSession saves a session mid-upload (as upload/ does on each
// chunk event), stops the process's upload, and finishes it with a new
// Client from the saved JSON: no persisted byte is sent again.
func TestResumeSavedSession(t *testing.T) {
	const size = 4*kib256 + 777
	data := testData(size)
	for _, tc := range []struct {
		name   string
		stream bool
		edit   func(*Session) // damage done to the saved state
	}{
		{"file", false, nil},
		{"stream", true, nil},
		{"file, hash state lost", false, func(s *Session) { s.CRC32CState, s.HashOffset = nil, 0 }},
		{"stream, hash state lost", true, func(s *Session) { s.CRC32CState, s.HashOffset = nil, 0 }},
		// The process died after the server persisted a chunk but before
		// the session was saved: the status query finds more than recorded.
		{"file, server ahead of the record", false, func(s *Session) { s.Persisted, s.HashOffset = kib256, 0; s.CRC32CState = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, kib256)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var saved []byte
			e.hook = func(ev Event) {
				if ev.Kind == EventChunk && ev.Persisted >= 2*kib256 && saved == nil {
					saved = e.mustSave(t)
					cancel() // the process stops here
				}
			}
			s, err := e.c.Start(ctx, ObjectSpec{Bucket: "bkt", Name: "o", Size: size})
			if err != nil {
				t.Fatal(err)
			}
			e.cur = s
			_, err = e.uploadWith(ctx, s, data, tc.stream)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("first run: %v, want context.Canceled", err)
			}
			if strings.Contains(string(saved), "SECRETID") || !strings.Contains(string(saved), "upload_id=") {
				t.Fatalf("saved session lacks its URI: %s", saved)
			}

			// A later process: a new client, the saved state, the source again.
			e2 := newEnvOn(t, kib256, e.srv)
			restored, err := ParseSession(saved)
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				tc.edit(restored)
			}
			e.srv.ResetStats()
			obj, err := e2.uploadWith(context.Background(), restored, data, tc.stream)
			if err != nil {
				t.Fatal(err)
			}
			e2.checkStored(t, "o", data, obj.Crc32c)
			log := e.srv.Log()
			if len(log) == 0 || log[0].Phase != "status" {
				t.Fatalf("the resumed upload did not start with a status query: %+v", log)
			}
			if log[1].ContentRange != "bytes 524288-786431/*" {
				t.Errorf("first chunk after resume %q, want bytes 524288-786431/*", log[1].ContentRange)
			}
			ss, _ := e.srv.LastSession("bkt", "o")
			if ss.Received != size {
				t.Errorf("session received %d bytes in all, want %d: persisted bytes were sent again", ss.Received, size)
			}
			if ev := e2.events[1]; ev.Kind != EventResumed || ev.Offset != 2*kib256 {
				t.Errorf("second event %v, want resumed at 524288", ev)
			}
		})
	}
}

// mustSave marshals the session being uploaded.
func (e *env) mustSave(t testing.TB) []byte {
	b, err := e.cur.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (e *env) uploadWith(ctx context.Context, s *Session, data []byte, stream bool) (*storage.Object, error) {
	if stream {
		return e.c.UploadStream(ctx, s, bytes.NewReader(data))
	}
	return e.c.Upload(ctx, s, bytes.NewReader(data))
}

func TestSessionText(t *testing.T) {
	s := testSession(10, kib256)
	for _, text := range []string{s.String(), s.GoString()} {
		if strings.Contains(text, "SECRETID42") || !strings.Contains(text, "upload_id=REDACTED") {
			t.Errorf("session text %q", text)
		}
	}
	for _, tc := range []struct{ json, why string }{
		{`{"uri":"ftp://x","bucket":"bkt","object":"o","size":1,"chunk_size":262144}`, "http(s)"},
		{`{"uri":"http://h/u","bucket":"","object":"o","size":1,"chunk_size":262144}`, "bucket or object"},
		{`{"uri":"http://h/u","bucket":"bkt","object":"o","size":1,"chunk_size":1000}`, "256 KiB"},
		{`{"uri":"http://h/u","bucket":"bkt","object":"o","size":1,"chunk_size":262144,"persisted":2}`, "persisted offset"},
		{`{"uri":"http://h/u","bucket":"bkt","object":"o","size":-1,"chunk_size":262144,"persisted":2,"hash_offset":3}`, "hash offset"},
		{`{"uri":`, "unexpected end"},
	} {
		if _, err := ParseSession([]byte(tc.json)); err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("ParseSession(%s) = %v; want %q", tc.json, err, tc.why)
		}
	}
}
