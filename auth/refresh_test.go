package auth_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/auth/authtest"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/upload"
)

// bearerGate mounts fakegcs behind a check that every request carries a
// token the token server issued and that has not expired by the server's
// clock (issued + expires_in), and records which tokens were used.
type bearerGate struct {
	ts       *authtest.TokenServer
	next     http.Handler
	mu       sync.Mutex
	issuedAt map[string]time.Time
	seen     []string // distinct tokens, in first-use order
	rejected int
}

func (g *bearerGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	g.mu.Lock()
	for _, t := range g.ts.Issued() {
		if _, known := g.issuedAt[t]; !known {
			g.issuedAt[t] = time.Now() // first sight: at most as old as the grant
		}
	}
	at, known := g.issuedAt[tok]
	valid := ok && known && time.Since(at) < time.Duration(g.ts.ExpiresIn)*time.Second
	if valid && !slices.Contains(g.seen, tok) {
		g.seen = append(g.seen, tok)
	}
	if !valid {
		g.rejected++
	}
	g.mu.Unlock()
	if !valid {
		http.Error(w, `{"error":{"code":401,"message":"Invalid Credentials"}}`, http.StatusUnauthorized)
		return
	}
	g.next.ServeHTTP(w, r)
}

// TestTokenRefreshDuringLongUpload uploads with tokens that expire, in
// golang.org/x/oauth2's eyes, as soon as they are issued (expires_in 10 s,
// its early-refresh margin): each request of the upload must fetch a new
// token, and the server must see each of them. (It used to throttle the
// upload for four seconds of wall clock to cross one-second tokens.)
func TestTokenRefreshDuringLongUpload(t *testing.T) {
	t.Setenv(auth.EmulatorHostEnv, "")
	ts := authtest.NewTokenServer(t, 10)
	fake := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	gate := &bearerGate{ts: ts, next: fake, issuedAt: map[string]time.Time{}}
	srv := httptest.NewTLSServer(gate) // credentials go only over https
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	keyFile := filepath.Join(dir, "sa.json")
	os.WriteFile(keyFile, ts.ServiceAccountJSON(t), 0o600)
	data := bytes.Repeat([]byte("0123456789abcdef"), (4<<20)/16)
	src := filepath.Join(dir, "big.bin")
	os.WriteFile(src, data, 0o644)

	c, err := upload.New(context.Background(), upload.Options{
		Endpoint: srv.URL, Auth: auth.Options{CredentialsFile: keyFile, Base: srv.Client().Transport},
		ChunkSize: 256 << 10, SmallFileThreshold: -1, NoState: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	r, err := c.UploadFile(context.Background(), src, upload.URL{Bucket: "bkt", Object: "big.bin"}, upload.UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := fake.Object("bkt", "big.bin")
	if err != nil || !bytes.Equal(got, data) || r.Attempts != 1 {
		t.Fatalf("object: %d bytes, %v; attempts %d", len(got), err, r.Attempts)
	}
	issued := ts.Issued()
	gate.mu.Lock()
	seen, rejected := gate.seen, gate.rejected
	gate.mu.Unlock()
	t.Logf("upload took %v; %d tokens issued, %d seen by the server", time.Since(start), len(issued), len(seen))
	if len(issued) != 17 { // the start and 16 chunks of 256 KiB: one token each
		t.Errorf("%d tokens issued for 17 requests: each request should have refreshed", len(issued))
	}
	if !slices.Equal(seen, issued) || rejected != 0 {
		t.Errorf("server saw tokens %q (rejected %d requests), issued %q", seen, rejected, issued)
	}
	for _, s := range ts.Scopes() {
		if s != auth.ScopeReadWrite {
			t.Errorf("token asked for scope %q", s)
		}
	}
}
