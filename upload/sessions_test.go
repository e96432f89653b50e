package upload

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// Saved records keep the layout gcsput wrote when package upload held the
// store (record version 1, keyed alike): a session saved by an earlier
// build resumes with this one, and the other way round. The golden lines
// were written by that build.
func TestRecordLayoutUnchanged(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	fp := state.Fingerprint{Path: "/data/a.bin", Size: 10 << 20, ModTime: 7, CTime: 8, Inode: 9, Device: 10}
	s := &resumable.Session{URI: "http://127.0.0.1:1/upload?upload_id=X", Bucket: "b", Object: "a.bin", Size: 10 << 20,
		ChunkSize: 256 << 10, Persisted: 512 << 10, CRC32CState: []byte{1, 2, 3}}
	uo := UploadOptions{Attrs: Attrs{ContentType: "text/plain", Metadata: map[string]string{"k": "v"}}, NoClobber: true}
	up := uploadRecord(fp, URL{"b", "a.bin"}, s, uo, copyDest{})
	up.Shard, up.Created, up.Updated, up.Offset = "1/2", at, at.Add(time.Minute), 512<<10
	do := DownloadOptions{PreservePOSIX: true}
	down := &state.Record{Kind: state.KindDownload, Source: "gs://b/a.bin", Dest: "/data/copy.bin", Size: 10 << 20, Offset: 8 << 20,
		Created: at, Updated: at, Download: &state.Download{Generation: 42, Temp: "/data/.copy.bin.gcsput-partial", Options: encodeOptions(do)}}
	plain := uploadRecord(fp, URL{"b", "a.bin"}, s, UploadOptions{}, copyDest{})
	plain.Created, plain.Updated = at, at
	for _, tc := range []struct {
		rec       *state.Record
		key, json string
		opts      any // the options the golden line decodes to
	}{
		{up, "d0a72de1a1479c4560c3a885fb7fefec", `{"version":1,"kind":"upload","source":"/data/a.bin","dest":"gs://b/a.bin","fingerprint":{"path":"/data/a.bin","size":10485760,"mtime_ns":7,"ctime_ns":8,"inode":9,"dev":10},"shard":"1/2","created":"2025-01-02T03:04:05Z","updated":"2025-01-02T03:05:05Z","size":10485760,"offset":524288,"upload":{"session":{"uri":"http://127.0.0.1:1/upload?upload_id=X","bucket":"b","object":"a.bin","size":10485760,"chunk_size":262144,"created":"0001-01-01T00:00:00Z","persisted":524288,"crc32c_state":"AQID"},"options":{"attrs":{"content_type":"text/plain","metadata":{"k":"v"}},"if_absent":true}}}`, &uo},
		{down, "16a06b61f958107c0f770f391a7d6246", `{"version":1,"kind":"download","source":"gs://b/a.bin","dest":"/data/copy.bin","created":"2025-01-02T03:04:05Z","updated":"2025-01-02T03:04:05Z","size":10485760,"offset":8388608,"download":{"generation":42,"temp":"/data/.copy.bin.gcsput-partial","options":{"preserve_posix":true}}}`, &do},
		{plain, "54525acfe9d48e2541dd736a1a0b60f1", `{"version":1,"kind":"upload","source":"/data/a.bin","dest":"gs://b/a.bin","fingerprint":{"path":"/data/a.bin","size":10485760,"mtime_ns":7,"ctime_ns":8,"inode":9,"dev":10},"created":"2025-01-02T03:04:05Z","updated":"2025-01-02T03:04:05Z","size":10485760,"offset":0,"upload":{"session":{"uri":"http://127.0.0.1:1/upload?upload_id=X","bucket":"b","object":"a.bin","size":10485760,"chunk_size":262144,"created":"0001-01-01T00:00:00Z","persisted":524288,"crc32c_state":"AQID"},"options":{}}}`, &UploadOptions{}},
	} {
		tc.rec.Version = 1
		if tc.rec.Upload != nil {
			// Dest (the encryption an upload was started under) came after
			// the golden lines: an older record has none and loads as before
			// (below); TestOldUploadRecordWithoutDest resumes one.
			if string(tc.rec.Upload.Dest) != "{}" {
				t.Errorf("an unencrypted upload's record has dest %s, want {}", tc.rec.Upload.Dest)
			}
			tc.rec.Upload.Dest = nil
		}
		if b, err := json.Marshal(tc.rec); err != nil || string(b) != tc.json {
			t.Errorf("record %s:\n%s\nwant\n%s", tc.rec.Kind, b, tc.json)
		}
		if k := tc.rec.Key(); k != tc.key {
			t.Errorf("key %s, want %s", k, tc.key)
		}
		var back state.Record
		if err := json.Unmarshal([]byte(tc.json), &back); err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if back.Upload != nil {
			raw = back.Upload.Options
		} else {
			raw = back.Download.Options
		}
		got := reflect.New(reflect.TypeOf(tc.opts).Elem()).Interface()
		if err := decodeOptions(raw, got); err != nil || !reflect.DeepEqual(got, tc.opts) {
			t.Errorf("options of %s decode to %+v, %v; want %+v", tc.rec.Kind, got, err, tc.opts)
		}
	}
}
