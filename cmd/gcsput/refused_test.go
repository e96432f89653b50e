package main

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/auth/authtest"
	"github.com/gcsput/gcsput/fakegcs"
)

// tokenE2E is the world of a credentialed run of the binary: fakegcs
// requiring a bearer token, behind TLS (credentials go only to https) with
// a certificate the binary trusts through SSL_CERT_FILE, and a loopback
// token server that issued the key file. afterChunk, if set, runs once the
// n-th chunk of an upload has been answered, before the answer leaves:
// the point at which the test rotates or revokes the token.
type tokenE2E struct {
	*e2e
	tokens   *authtest.TokenServer
	endpoint string
	env      []string

	mu         sync.Mutex
	chunks     int
	afterChunk map[int]func()
}

func newTokenE2E(t *testing.T) *tokenE2E {
	w := &tokenE2E{e2e: newE2E(t), tokens: authtest.NewTokenServer(t, 3600), afterChunk: map[int]func(){}}
	w.srv.SetToken("authtest-token-1")
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(w.serve))
	t.Cleanup(tlsSrv.Close)
	cert := filepath.Join(w.dir, "ca.pem")
	key := filepath.Join(w.dir, "sa.json")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, w.tokens.ServiceAccountJSON(t), 0o600); err != nil {
		t.Fatal(err)
	}
	w.endpoint = tlsSrv.URL
	w.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.dir, "XDG_STATE_HOME=" + w.state,
		"SSL_CERT_FILE=" + cert, "GOOGLE_APPLICATION_CREDENTIALS=" + key, "GCE_METADATA_HOST=127.0.0.1:1"}
	return w
}

func (w *tokenE2E) serve(rw http.ResponseWriter, r *http.Request) {
	w.srv.ServeHTTP(rw, r) // a short answer leaves when the handler returns
	if r.Method != http.MethodPut || r.URL.Query().Get("upload_id") == "" || strings.HasPrefix(r.Header.Get("Content-Range"), "bytes */") {
		return
	}
	w.mu.Lock()
	w.chunks++
	f := w.afterChunk[w.chunks]
	w.mu.Unlock()
	if f != nil {
		f()
	}
}

// at runs f after the n-th chunk counted from now.
func (w *tokenE2E) at(n int, f func()) {
	w.mu.Lock()
	w.afterChunk[w.chunks+n] = f
	w.mu.Unlock()
}

func (w *tokenE2E) gcsput(args ...string) cliResult {
	w.t.Helper()
	cmd := exec.Command(gcsputBin, append(args, "--endpoint", w.endpoint, fastRetry)...)
	cmd.Env, cmd.Dir = w.env, w.dir
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			w.t.Fatal(err)
		}
	}
	return cliResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// next is the token the token server issues next.
func (w *tokenE2E) next() string { return fmt.Sprintf("authtest-token-%d", len(w.tokens.Issued())+1) }

// refusedChunks counts the server's 401s to chunks.
func (w *tokenE2E) refused() (chunks, all int) {
	for _, r := range w.srv.Log() {
		if r.Status == 401 {
			all++
			if r.Phase == fakegcs.PhaseChunk || r.Phase == fakegcs.PhaseFinal {
				chunks++
			}
		}
	}
	return chunks, all
}

// A token rotated on the server after the second chunk of `gcsput cp`: the
// third chunk is refused once, the upload asks the offset with a new grant
// and completes byte-exact. Then a token revoked for good mid-upload: the
// file fails saying the credentials were refused, after the bounded
// refreshes; its record stays, and 'gcsput resume' with working
// credentials continues from the server's offset. (A single 401 failed
// the file, with a bare "Error 401".)
func TestRefusedTokenEndToEnd(t *testing.T) {
	w := newTokenE2E(t)
	data := w.write("big.bin", 9<<20)
	w.at(2, func() { w.srv.SetToken(w.next()) })
	r := w.gcsput("cp", "--json", "--chunk-size", "1MiB", "big.bin", "gs://bkt/big.bin")
	if r.code != 0 {
		t.Fatalf("cp: exit %d\n%s", r.code, r.stderr)
	}
	if got := w.object("big.bin"); string(got) != string(data) {
		t.Fatalf("object: %d bytes, not the file's %d", len(got), len(data))
	}
	if chunks, all := w.refused(); chunks != 1 || all != 1 {
		t.Errorf("401s: %d to chunks, %d in all; want the one chunk", chunks, all)
	}
	if n := len(w.tokens.Issued()); n != 2 {
		t.Errorf("%d tokens issued; want 2", n)
	}

	data2 := w.write("big2.bin", 9<<20)
	w.srv.SetToken(w.next()) // what a new process's first grant brings
	w.at(2, func() { w.srv.SetToken("revoked-for-good") })
	r = w.gcsput("cp", "--json", "--chunk-size", "1MiB", "big2.bin", "gs://bkt/big2.bin")
	files, _ := jsonLines(t, r.stdout)
	want := "the server refused the credentials (401) even with 2 fresh tokens"
	if rec := files["gs://bkt/big2.bin"]; r.code != 1 || rec.Status != "failed" || !strings.Contains(rec.Error, want) || !strings.Contains(r.stderr, want) {
		t.Fatalf("cp with a revoked token: exit %d, %+v; want failed: %s\n%s", r.code, rec, want, r.stderr)
	}
	if chunks, all := w.refused(); chunks != 2 || all != 1+1+3 {
		t.Errorf("401s: %d to chunks, %d in all; want 2 and 5 (the chunk, then a status query with 3 tokens)", chunks, all)
	}
	ls := w.run(nil, "sessions", "ls")
	if !strings.Contains(ls.stdout, "gs://bkt/big2.bin") {
		t.Fatalf("sessions ls: the record is gone:\n%s%s", ls.stdout, ls.stderr)
	}

	w.srv.SetToken(w.next()) // the credentials fixed
	r = w.gcsput("resume", "--json")
	files, _ = jsonLines(t, r.stdout)
	if rec := files["gs://bkt/big2.bin"]; r.code != 0 || rec.Status != "resumed" || rec.ResumedFrom != 2<<20 {
		t.Fatalf("resume: exit %d, %+v; want resumed from 2 MiB\n%s", r.code, rec, r.stderr)
	}
	if got := w.object("big2.bin"); string(got) != string(data2) {
		t.Fatalf("object: %d bytes, not the file's %d", len(got), len(data2))
	}
}
