package upload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// rotatingTokens is a credential whose token the test changes while a
// transfer runs, as a key rotated or a token revoked does: every fetch
// returns the current token, valid for an hour in the client's eyes, so
// only the server's 401 can make the client fetch again.
type rotatingTokens struct {
	mu      sync.Mutex
	cur     string
	fetched int
}

func (r *rotatingTokens) Token() (*oauth2.Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fetched++
	return &oauth2.Token{AccessToken: r.cur, TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}, nil
}

func (r *rotatingTokens) set(tok string) {
	r.mu.Lock()
	r.cur = tok
	r.mu.Unlock()
}

func (r *rotatingTokens) fetches() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fetched
}

// tokenWorld is fakegcs over TLS (credentials go only to https) requiring
// a bearer token, and a client whose tokens come from ts, sending files
// under small bytes in one insert (-1: none); onEvent sees every transfer
// event.
func tokenWorld(t *testing.T, ts *rotatingTokens, small int64, faults []fakegcs.Fault, onEvent func(resumable.Event)) (*fakegcs.Server, *Client) {
	t.Helper()
	srv := newServer(t, fakegcs.Options{TLS: true, Token: "tok-1", Faults: faults})
	c := newClient(t, srv, func(o *Options) {
		o.Auth = auth.Options{TokenSource: ts, Base: srv.Client().Transport}
		o.SmallFileThreshold = small
		o.OnEvent = onEvent
	})
	return srv, c
}

// refusals counts the server's 401s by phase ("" for metadata requests).
func refusals(srv *fakegcs.Server) map[string]int {
	n := map[string]int{}
	for _, r := range srv.Log() {
		if r.Status == 401 {
			n[r.Phase]++
		}
	}
	return n
}

// phases counts the requests of one phase.
func phases(srv *fakegcs.Server, phase string) int {
	n := 0
	for _, r := range srv.Log() {
		if r.Phase == phase {
			n++
		}
	}
	return n
}

// TestUploadSurvivesRotatedToken: the server stops accepting the client's
// token after the second chunk. The third chunk is refused (401); its body
// cannot be replayed, so the upload asks the session's offset with a fresh
// token and sends the chunk again from there. One 401, one status query,
// two tokens, the object byte-exact. (It failed the file at the first 401.)
func TestUploadSurvivesRotatedToken(t *testing.T) {
	ts := &rotatingTokens{cur: "tok-1"}
	var srv *fakegcs.Server
	var once sync.Once
	srv, c := tokenWorld(t, ts, -1, nil, func(e resumable.Event) {
		if e.Kind == resumable.EventChunk && e.Persisted == 512<<10 {
			once.Do(func() { srv.SetToken("tok-2"); ts.set("tok-2") })
		}
	})
	data := randBytes(1<<20+1234, 91)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	r, err := c.UploadFile(context.Background(), src, URL{Bucket: testBucket, Object: "big.bin"}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "big.bin", data)
	if got := refusals(srv); len(got) != 1 || got[fakegcs.PhaseChunk] != 1 {
		t.Errorf("401s by phase %v; want one, to a chunk", got)
	}
	if n := phases(srv, fakegcs.PhaseStatus); n != 1 {
		t.Errorf("%d status queries; want 1, after the refused chunk", n)
	}
	if n := ts.fetches(); n != 2 {
		t.Errorf("%d tokens fetched; want 2 (the first, and one after the 401)", n)
	}
	if r.Status != StatusUploaded || r.Attempts != 2 {
		t.Errorf("status %s, attempts %d; want uploaded after 2 attempts", r.Status, r.Attempts)
	}
}

// TestDownloadSurvivesRotatedToken: a download's connection breaks after
// 300 KiB and the server rotates its token meanwhile: the Range request
// that continues it is refused once, sent again by the transport with a
// fresh token, and the file ends byte-exact.
func TestDownloadSurvivesRotatedToken(t *testing.T) {
	ts := &rotatingTokens{cur: "tok-1"}
	var srv *fakegcs.Server
	var once sync.Once
	reset := fakegcs.Fault{Op: "storage.objects.get", Phase: fakegcs.PhaseMedia, Kind: fakegcs.KindReset, AfterBytes: 300 << 10, Times: 1}
	srv, c := tokenWorld(t, ts, -1, []fakegcs.Fault{reset}, func(e resumable.Event) {
		if e.Kind == resumable.EventRetry {
			once.Do(func() { srv.SetToken("tok-2"); ts.set("tok-2") })
		}
	})
	data := randBytes(1<<20+77, 92)
	if _, err := srv.PutObject(testBucket, "d.bin", data); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "d.bin")
	r, err := c.Download(context.Background(), URL{Bucket: testBucket, Object: "d.bin"}, dst, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
		t.Fatalf("downloaded %d bytes, not the object's %d", len(got), len(data))
	}
	if got := refusals(srv); len(got) != 1 || got[fakegcs.PhaseMedia] != 1 {
		t.Errorf("401s by phase %v; want one, to the Range request", got)
	}
	if n := phases(srv, fakegcs.PhaseMedia); n != 3 {
		t.Errorf("%d media requests; want 3 (broken, refused, resumed)", n)
	}
	if n := ts.fetches(); n != 2 {
		t.Errorf("%d tokens fetched; want 2", n)
	}
	if r.Status != StatusDownloaded {
		t.Errorf("status %s; want downloaded", r.Status)
	}
}

// TestRefusedTokenKeepsRecord: a token revoked for good after the second
// chunk. The upload fails after bounded refreshes (the chunk, then a status
// query sent with three tokens: 4 refusals, 4 tokens) with an error that
// says the credentials were refused; its record stays, and a run with a
// good token resumes from the server's offset.
func TestRefusedTokenKeepsRecord(t *testing.T) {
	ts := &rotatingTokens{cur: "tok-1"}
	var srv *fakegcs.Server
	var once sync.Once
	srv, c := tokenWorld(t, ts, -1, nil, func(e resumable.Event) {
		if e.Kind == resumable.EventChunk && e.Persisted == 512<<10 {
			once.Do(func() { srv.SetToken("revoked-for-good") })
		}
	})
	data := randBytes(1<<20+4321, 93)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	dst := URL{Bucket: testBucket, Object: "big.bin"}
	_, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if !errors.Is(err, resumable.ErrUnauthorized) || !strings.Contains(err.Error(), "refused the credentials (401) even with 2 fresh tokens") {
		t.Fatalf("err = %v; want the credentials refused after 2 fresh tokens", err)
	}
	if got := refusals(srv); got[fakegcs.PhaseChunk] != 1 || got[fakegcs.PhaseStatus] != 1+auth.MaxRefreshes {
		t.Errorf("401s by phase %v; want 1 chunk and %d status queries", got, 1+auth.MaxRefreshes)
	}
	if n := ts.fetches(); n != 2+auth.MaxRefreshes {
		t.Errorf("%d tokens fetched; want %d", n, 2+auth.MaxRefreshes)
	}
	ss, err := c.Sessions()
	if err != nil || len(ss) != 1 || ss[0].Offset != 512<<10 {
		t.Fatalf("sessions %+v (%v); want the upload's record at 512 KiB", ss, err)
	}

	srv.SetToken("tok-1") // the credentials fixed
	r, err := c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "big.bin", data)
	if r.Status != StatusResumed || r.ResumedFrom != 512<<10 {
		t.Errorf("status %s from %d; want resumed from 512 KiB", r.Status, r.ResumedFrom)
	}
}

// TestInsertSurvivesRotatedToken: a file small enough for one multipart
// insert, after the server rotated its token. An insert held in memory is
// sent again by the transport, one streamed from the file by the insert
// itself (its body cannot be replayed): either way one 401, one insert
// sent again, the object byte-exact.
func TestInsertSurvivesRotatedToken(t *testing.T) {
	for _, size := range []int{100 << 10, 400 << 10} { // under and over resumable's in-memory limit
		t.Run(itoa(int64(size)), func(t *testing.T) {
			ts := &rotatingTokens{cur: "tok-1"}
			srv, c := tokenWorld(t, ts, 8<<20, nil, nil)
			dir := t.TempDir()
			ctx := context.Background()
			if _, err := c.UploadFile(ctx, writeTemp(t, dir, "warm", randBytes(size, 1)), URL{Bucket: testBucket, Object: "warm"}, UploadOptions{}); err != nil {
				t.Fatal(err)
			}
			srv.SetToken("tok-2")
			ts.set("tok-2")
			data := randBytes(size, 2)
			if _, err := c.UploadFile(ctx, writeTemp(t, dir, "o", data), URL{Bucket: testBucket, Object: "o"}, UploadOptions{}); err != nil {
				t.Fatal(err)
			}
			wantObject(t, srv, "o", data)
			n := 0
			for _, v := range refusals(srv) {
				n += v
			}
			if inserts := srv.Stats().Requests["storage.objects.insert"]; n != 1 || inserts != 3 {
				t.Errorf("%d 401s, %d inserts; want 1 and 3 (warm, refused, sent again)", n, inserts)
			}
			if f := ts.fetches(); f != 2 {
				t.Errorf("%d tokens fetched; want 2", f)
			}
		})
	}
}
