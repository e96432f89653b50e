package resumable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/gcsput/gcsput/retry"
	"google.golang.org/api/googleapi"
)

const kib256 = 256 << 10

// Traces for a 600000-byte object in 256 KiB chunks: two full chunks and a
// final one of 75712 bytes.
const (
	c0    = "PUT bytes 0-262143/*"
	c1    = "PUT bytes 262144-524287/*"
	cLast = "PUT bytes 524288-599999/600000"
	query = "PUT bytes */*"
)

var (
	data600 = testData(600000)
	ok600   = objJSON(data600)
	reset   = &netErr{syscall.ECONNRESET}
	errJSON = func(code int, msg string) string {
		return `{"error":{"code":` + itoa(int64(code)) + `,"message":"` + msg + `"}}`
	}
	persist0 = "bytes=0-262143"
	persist1 = "bytes=0-524287"
)

// netErr is a transport failure as net/http reports it.
type netErr struct{ err error }

func (e *netErr) Error() string   { return "read tcp 127.0.0.1:1: " + e.err.Error() }
func (e *netErr) Unwrap() error   { return e.err }
func (e *netErr) Timeout() bool   { return false }
func (e *netErr) Temporary() bool { return true }

// traceCase is a scripted upload: the exchanges, and how it must end.
type traceCase struct {
	name    string
	steps   []step
	waits   int    // retry waits expected
	wantErr error  // sentinel, nil for success
	errText string // substring of the error
}

// uploadTraces are played for an upload from a file and from a stream.
var uploadTraces = []traceCase{
	{name: "clean", steps: []step{
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist1},
		{want: cLast, status: 200, body: ok600}}},
	{name: "503 then status query", waits: 1, steps: []step{
		{want: c0, status: 503},
		{want: query, status: 308}, // no Range: nothing persisted
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist1},
		{want: cLast, status: 201, body: ok600}}},
	{name: "short 308 resends from the server's offset", waits: 1, steps: []step{
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist0}, // kept nothing of the chunk: a wait, no query
		{want: c1, status: 308, rng: persist1},
		{want: cLast, status: 200, body: ok600}}},
	{name: "308 without Range means zero", waits: 1, steps: []step{
		{want: c0, status: 308},
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist1},
		{want: cLast, status: 200, body: ok600}}},
	{name: "reset mid-body, partial persist", waits: 1, steps: []step{
		{want: c0, status: 308, rng: persist0},
		{want: c1, read: 100000, err: reset},
		{want: query, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist1},
		{want: cLast, status: 200, body: ok600}}},
	{name: "response lost after commit", waits: 1, steps: []step{
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist1},
		{want: cLast, err: reset},
		{want: query, status: 200, body: ok600}}},
	{name: "status query fails too", waits: 3, steps: []step{
		{want: c0, status: 500},
		{want: query, status: 429},
		{want: query, err: reset},
		{want: query, status: 308, rng: persist1},
		{want: cLast, status: 200, body: ok600}}},
	{name: "final chunk short then complete", waits: 1, steps: []step{
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist1},
		{want: cLast, status: 503},
		{want: query, status: 308, rng: persist1},
		{want: cLast, status: 200, body: ok600}}},
	{name: "410 session gone", wantErr: ErrSessionExpired, errText: "Error 410: session expired", steps: []step{
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 410, body: errJSON(410, "session expired")}}},
	{name: "404 on status query", wantErr: ErrSessionExpired, waits: 1, steps: []step{
		{want: c0, status: 503},
		{want: query, status: 404, body: errJSON(404, "No such upload")}}},
	{name: "412 precondition", wantErr: ErrPreconditionFailed, errText: "At least one of the pre-conditions you specified did not hold", steps: []step{
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist1},
		{want: cLast, status: 412, body: errJSON(412, "At least one of the pre-conditions you specified did not hold.")}}},
	{name: "server rejects X-Goog-Hash", wantErr: ErrChecksumMismatch, errText: "doesn't match calculated CRC32C", steps: []step{
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist1},
		{want: cLast, status: 400, body: errJSON(400, `Provided CRC32C \"AAAAAA==\" doesn't match calculated CRC32C \"yZRlqg==\".`)}}},
	{name: "object checksum differs", wantErr: ErrChecksumMismatch, errText: "server crc32c=AAAAAA==", steps: []step{
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist1},
		{want: cLast, status: 200, body: `{"name":"o","size":"600000","crc32c":"AAAAAA=="}`}}},
	{name: "401 on a chunk: offset asked with a fresh token, chunk sent again", steps: []step{
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 401, body: errJSON(401, "Invalid Credentials")},
		{want: query, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist1},
		{want: cLast, status: 200, body: ok600}}},
	{name: "401 on chunks after MaxAuthRetries fresh tokens", wantErr: ErrUnauthorized, errText: "Error 401: Invalid Credentials", steps: []step{
		{want: c0, status: 401, body: errJSON(401, "Invalid Credentials")},
		{want: query, status: 308},
		{want: c0, status: 401, body: errJSON(401, "Invalid Credentials")},
		{want: query, status: 308},
		{want: c0, status: 401, body: errJSON(401, "Invalid Credentials")}}},
	{name: "401 on a status query is final", wantErr: ErrUnauthorized, waits: 1, steps: []step{
		{want: c0, status: 503},
		{want: query, status: 401, body: errJSON(401, "Invalid Credentials")}}},
	{name: "other 4xx fails at once", errText: "Error 403: denied", steps: []step{
		{want: c0, status: 403, body: errJSON(403, "denied")}}},
	{name: "range going backwards", wantErr: errProtocol, errText: "before 524288", steps: []step{
		{want: c0, status: 308, rng: persist0},
		{want: c1, status: 308, rng: persist1},
		{want: cLast, status: 308, rng: persist0}}},
	{name: "malformed Range", wantErr: errProtocol, errText: `Range "bytes=5-9"`, steps: []step{
		{want: c0, status: 308, rng: "bytes=5-9"}}},
}

func TestUploadTraces(t *testing.T) {
	for _, tc := range uploadTraces {
		for _, stream := range []bool{false, true} {
			name := tc.name + map[bool]string{false: "/file", true: "/stream"}[stream]
			t.Run(name, func(t *testing.T) {
				sc := newScript(t, tc.steps...)
				c, clk, events := testClient(t, sc, kib256)
				s := testSession(int64(len(data600)), kib256)
				var err error
				if stream {
					_, err = c.UploadStream(context.Background(), s, bytes.NewReader(data600))
				} else {
					_, err = c.Upload(context.Background(), s, bytes.NewReader(data600))
				}
				checkSent(t, sc.got, data600)
				if len(clk.Sleeps()) != tc.waits {
					t.Errorf("retry waits = %d (%v), want %d", len(clk.Sleeps()), clk.Sleeps(), tc.waits)
				}
				checkErr(t, err, tc.wantErr, tc.errText)
				if err == nil {
					checkFinalHash(t, sc.got, data600)
				}
				checkRedacted(t, *events, err)
			})
		}
	}
}

// checkErr asserts err matches the sentinel and text (nil, "" : success).
func checkErr(t testing.TB, err, want error, text string) {
	t.Helper()
	switch {
	case want == nil && text == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != nil && !errors.Is(err, want):
		t.Fatalf("error %v; want %v", err, want)
	case text != "" && (err == nil || !strings.Contains(err.Error(), text)):
		t.Fatalf("error %v; want text %q", err, text)
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Object != "gs://bkt/o" {
			t.Errorf("error %v is not a *resumable.Error for gs://bkt/o", err)
		}
	}
}

// checkFinalHash asserts the final request carried the whole object's CRC32C.
func checkFinalHash(t testing.TB, got []sent, data []byte) {
	t.Helper()
	want := "crc32c=" + EncodeCRC32C(crc32.Checksum(data, castagnoli))
	for _, r := range got {
		if strings.HasSuffix(r.contentRange, "/"+itoa(int64(len(data)))) && r.googHash != want {
			t.Errorf("final request %s has X-Goog-Hash %q, want %q", r.contentRange, r.googHash, want)
		}
		if strings.HasSuffix(r.contentRange, "/*") && r.googHash != "" {
			t.Errorf("non-final request %s has X-Goog-Hash %q", r.contentRange, r.googHash)
		}
	}
}

// checkRedacted asserts no event or error mentions the session's upload_id.
func checkRedacted(t testing.TB, events []Event, err error) {
	t.Helper()
	for _, e := range events {
		if s := e.String() + " " + errString(e.Err); strings.Contains(s, "SECRETID42") {
			t.Errorf("event leaks the upload_id: %s", s)
		}
	}
	if strings.Contains(errString(err), "SECRETID42") {
		t.Errorf("error leaks the upload_id: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	var g *googleapi.Error
	if errors.As(err, &g) {
		return err.Error() + g.Body
	}
	return err.Error()
}

func TestUploadRetryBudgetRestartsOnProgress(t *testing.T) {
	steps := []step{
		{want: c0, status: 503},
		{want: query, status: 308},
		{want: c0, status: 308, rng: persist0}, // progress: the budget restarts
		{want: c1, status: 503},
		{want: query, status: 308, rng: persist1}, // progress again
		{want: cLast, status: 503},
		{want: query, status: 308, rng: persist1},
		{want: cLast, status: 200, body: ok600},
	}
	sc := newScript(t, steps...)
	c, clk, _ := testClient(t, sc, kib256)
	c.opts.Retry.MaxAttempts = 2 // one retry without progress
	if _, err := c.Upload(context.Background(), testSession(600000, kib256), bytes.NewReader(data600)); err != nil {
		t.Fatal(err)
	}
	if len(clk.Sleeps()) != 3 {
		t.Errorf("waits = %v, want 3", clk.Sleeps())
	}

	// Without progress the same budget ends the upload.
	sc = newScript(t, step{want: c0, status: 503}, step{want: query, status: 308}, step{want: c0, status: 503})
	c, _, _ = testClient(t, sc, kib256)
	c.opts.Retry.MaxAttempts = 2
	_, err := c.Upload(context.Background(), testSession(600000, kib256), bytes.NewReader(data600))
	var re *retry.Error
	if !errors.As(err, &re) || re.Attempts != 2 {
		t.Fatalf("error %v; want a retry.Error after 2 attempts", err)
	}
	var g *googleapi.Error
	if !errors.As(err, &g) || g.Code != 503 {
		t.Fatalf("error %v does not keep the 503", err)
	}
}

func TestUploadRetryEvents(t *testing.T) {
	sc := newScript(t,
		step{want: c0, status: 503, body: errJSON(503, "backend error SECRETID42")},
		step{want: query, status: 308, rng: persist0},
		step{want: c1, status: 308, rng: persist1},
		step{want: cLast, status: 200, body: ok600})
	c, _, events := testClient(t, sc, kib256)
	if _, err := c.Upload(context.Background(), testSession(600000, kib256), bytes.NewReader(data600)); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range *events {
		kinds = append(kinds, string(e.Kind))
	}
	// Every attempt's bytes are reported sent, the failed one's too.
	if got := strings.Join(kinds, " "); got != "sent retry status resumed sent chunk sent chunk finished" {
		t.Fatalf("events %q", got)
	}
	var sent []string
	var ev []Event
	for _, e := range *events {
		if e.Kind == EventSent {
			sent = append(sent, fmt.Sprintf("%d+%d", e.Offset-e.Length, e.Length))
		} else {
			ev = append(ev, e)
		}
	}
	if got := strings.Join(sent, " "); got != "0+262144 262144+262144 524288+75712" {
		t.Errorf("sent %q", got)
	}
	if ev[0].Attempt != 1 || ev[0].Wait <= 0 || !strings.Contains(ev[0].Err.Error(), "backend error REDACTED") {
		t.Errorf("retry event %+v", ev[0])
	}
	if ev[2].Offset != 262144 || ev[3].Offset != 262144 || ev[3].Length != 262144 || ev[3].Range != persist1 || ev[3].Persisted != 524288 {
		t.Errorf("resumed/chunk events %+v %+v", ev[2], ev[3])
	}
	if ev[4].Offset != 524288 || ev[4].Status != 200 || ev[4].Persisted != 600000 {
		t.Errorf("final chunk event %+v", ev[4])
	}
	ev = append(ev[:4], ev[5:]...)
	if ev[4].Generation != 7 || ev[4].CRC32C != EncodeCRC32C(crc32.Checksum(data600, castagnoli)) || ev[4].Size != 600000 {
		t.Errorf("finished event %+v", ev[4])
	}
	checkRedacted(t, ev, nil)
}

func TestUploadStreamUnknownSize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		size  int
		steps []step
	}{
		{"ragged tail", 600000, []step{
			{want: c0, status: 308, rng: persist0},
			{want: c1, status: 308, rng: persist1},
			{want: cLast, status: 200, body: objJSON(testData(600000))}}},
		// A stream of exactly two chunks ends with the second: the
		// look-ahead byte saw EOF, so no empty final request is needed.
		{"whole chunks", 524288, []step{
			{want: c0, status: 308, rng: persist0},
			{want: "PUT bytes 262144-524287/524288", status: 200, body: objJSON(testData(524288))}}},
		{"empty", 0, []step{{want: "PUT bytes */0", status: 200, body: objJSON(nil)}}},
		// The server kept half of the second chunk: the other half is
		// still in memory and is sent again with the rest of the stream.
		{"short 308 keeps the unacknowledged bytes", 600000, []step{
			{want: c0, status: 308, rng: persist0},
			{want: c1, status: 308, rng: "bytes=0-393215"},
			{want: "PUT bytes 393216-599999/600000", status: 200, body: objJSON(testData(600000))}}},
		{"reset then resend from memory", 600000, []step{
			{want: c0, status: 308, rng: persist0},
			{want: c1, read: 1000, err: reset},
			{want: query, status: 308, rng: persist0},
			{want: c1, status: 308, rng: persist1},
			{want: cLast, status: 200, body: objJSON(testData(600000))}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := testData(tc.size)
			sc := newScript(t, tc.steps...)
			c, _, _ := testClient(t, sc, kib256)
			s := testSession(-1, kib256)
			obj, err := c.UploadStream(context.Background(), s, iotest.HalfReader(bytes.NewReader(data)))
			if err != nil {
				t.Fatal(err)
			}
			if obj.Size != uint64(tc.size) || s.Persisted != int64(tc.size) {
				t.Errorf("object size %d, persisted %d; want %d", obj.Size, s.Persisted, tc.size)
			}
			checkSent(t, sc.got, data)
			checkFinalHash(t, sc.got, data)
		})
	}
}
