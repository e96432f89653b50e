package main

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// The plain net/http transfer is the loopback limit: the same bytes in one
// PUT or GET per file over kept-alive connections, with nothing a storage
// protocol adds. Its server discards PUT bodies (computing their CRC32C, as
// any storage server must, so the parent can check them) and serves GETs
// from the source files with http.ServeContent (sendfile).

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// plainServer is the bare loopback handler, run in the parent.
type plainServer struct {
	srv     *httptest.Server
	url     string
	dataDir string
	// certPEM is the certificate of a TLS server, nil without TLS.
	certPEM []byte

	mu       sync.Mutex
	received map[string]objectSum // PUT path → what arrived
}

// objectSum is what a server saw of an object: enough to check it.
type objectSum struct {
	Size   int64
	CRC32C uint32
}

// startPlain starts the plain server on 127.0.0.1; with tls, over TLS
// (HTTP/1.1 only: one transfer, one connection) with httptest's
// certificate.
func startPlain(dataDir string, tls bool) *plainServer {
	p := &plainServer{dataDir: dataDir, received: map[string]objectSum{}}
	p.srv = httptest.NewUnstartedServer(p)
	if tls {
		p.srv.StartTLS()
		p.certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	} else {
		p.srv.Start()
	}
	p.url = p.srv.URL
	return p
}

// urlOrNone is the server's URL, "" for a nil server.
func (p *plainServer) urlOrNone() string {
	if p == nil {
		return ""
	}
	return p.url
}

// close stops the server; a nil one is none.
func (p *plainServer) close() {
	if p != nil {
		p.srv.Close()
	}
}

// ServeHTTP: PUT /up/NAME discards and records; GET /data/NAME serves the
// source file NAME.
func (p *plainServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/up/"):
		sum, err := discard(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.received[strings.TrimPrefix(r.URL.Path, "/up/")] = sum
		p.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/data/"):
		name := filepath.FromSlash(strings.TrimPrefix(r.URL.Path, "/data/"))
		if !filepath.IsLocal(name) {
			http.Error(w, "bad name", http.StatusBadRequest)
			return
		}
		f, err := os.Open(filepath.Join(p.dataDir, name))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		http.ServeContent(w, r, "", fi.ModTime(), f)
	default:
		http.Error(w, "not here", http.StatusNotFound)
	}
}

// uploaded returns what arrived under the PUT prefix.
func (p *plainServer) uploaded(prefix string) map[string]objectSum {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]objectSum{}
	for name, s := range p.received {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			out[rest] = s
		}
	}
	return out
}

// bufPool holds the large buffers of the plain copies: large so that a copy
// costs few system calls, pooled so that it costs no garbage.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// discard reads r to the end and returns its size and CRC32C.
func discard(r io.Reader) (objectSum, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	var s objectSum
	for {
		n, err := r.Read(*bp)
		s.Size += int64(n)
		s.CRC32C = crc32.Update(s.CRC32C, castagnoli, (*bp)[:n])
		if errors.Is(err, io.EOF) {
			return s, nil
		}
		if err != nil {
			return s, err
		}
	}
}

// plainTransfer is the client side.
type plainTransfer struct {
	spec *childSpec
	hc   *http.Client
	// crc makes it checksum what it sends and receives (clientHTTPCRC).
	crc bool
}

func preparePlainCRC(ctx context.Context, spec *childSpec) (transfer, error) {
	t, err := preparePlain(ctx, spec)
	if err == nil {
		t.(*plainTransfer).crc = true
	}
	return t, err
}

func preparePlain(_ context.Context, spec *childSpec) (transfer, error) {
	tr := &http.Transport{
		Proxy:               nil,
		MaxIdleConnsPerHost: max(spec.Parallel, 2),
		DisableCompression:  true,
	}
	var err error
	if tr.TLSClientConfig, err = trusting(spec.CAFile); err != nil {
		return nil, err
	}
	return &plainTransfer{spec: spec, hc: &http.Client{Transport: tr}}, nil
}

func (t *plainTransfer) upload(ctx context.Context) (childResult, error) {
	err := forEach(ctx, len(t.spec.Files), t.spec.Parallel, func(ctx context.Context, i int) error {
		return t.put(ctx, t.spec.Files[i])
	})
	return childResult{}, err
}

// put sends the file as the body: *os.File lets net/http use sendfile.
func (t *plainTransfer) put(ctx context.Context, f fileRef) error {
	file, err := os.Open(f.Path)
	if err != nil {
		return err
	}
	defer file.Close()
	if t.crc {
		if _, err := discard(io.NewSectionReader(file, 0, f.Size)); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, t.spec.Plain+"/up/"+t.spec.Prefix+f.Object, file)
	if err != nil {
		return err
	}
	req.ContentLength = f.Size
	resp, err := t.hc.Do(req)
	if err != nil {
		return err
	}
	return drain(resp)
}

func (t *plainTransfer) download(ctx context.Context) (childResult, error) {
	err := forEach(ctx, len(t.spec.Files), t.spec.Parallel, func(ctx context.Context, i int) error {
		return t.get(ctx, t.spec.Files[i])
	})
	return childResult{}, err
}

func (t *plainTransfer) get(ctx context.Context, f fileRef) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.spec.Plain+"/"+t.spec.Prefix+f.Object, nil)
	if err != nil {
		return err
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", f.Object, resp.Status)
	}
	out, err := os.Create(f.Path)
	if err != nil {
		return err
	}
	var body io.Reader = resp.Body
	if t.crc {
		// The checksum is computed for its cost; the parent checks the
		// downloaded files against the sources.
		body = io.TeeReader(resp.Body, crc32.New(castagnoli))
	}
	if err := copyBuffered(out, body); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyBuffered copies with a pooled 256 KiB buffer. io.Copy would hand the
// copy to (*os.File).ReadFrom, which for a non-file source falls back to
// 32 KiB reads.
func copyBuffered(w io.Writer, r io.Reader) error {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	for {
		n, err := r.Read(*bp)
		if n > 0 {
			if _, werr := w.Write((*bp)[:n]); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// drain reads and closes a response body so that its connection is reused,
// and turns a non-2xx status into an error.
func drain(resp *http.Response) error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %.200s", resp.Request.Method, resp.Request.URL.Path, resp.Status, body)
	}
	return nil
}
