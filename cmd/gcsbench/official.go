package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"
	"google.golang.org/api/option/internaloption"
	htransport "google.golang.org/api/transport/http"
)

// officialTransfer drives cloud.google.com/go/storage the way its
// documentation shows: io.Copy into a Writer, io.Copy out of a Reader.
type officialTransfer struct {
	spec     *childSpec
	client   *storage.Client
	chunk    int
	attempts *attempts
}

// officialHTTPClient is the HTTP client storage.NewClient would make for
// itself (the new auth library's transport stack: telemetry, headers, no
// credentials, over a clone of http.DefaultTransport that keeps 100 idle
// connections per host), with attempts as its base transport: the client
// retries above it, with its own backoff (gax), which has no hook to count.
//
// On the wire it trusts fakegcs's certificates and, like the default
// transport, takes HTTP/2 when offered; official-h1 speaks HTTP/1.1 only.
func officialHTTPClient(ctx context.Context, endpoint string, spec *childSpec) (*http.Client, *attempts, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 100
	var err error
	if base.TLSClientConfig, err = trusting(spec.CAFile); err != nil {
		return nil, nil, err
	}
	if spec.Client == clientOfficialH1 {
		base.ForceAttemptHTTP2 = false
		base.Protocols = new(http.Protocols)
		base.Protocols.SetHTTP1(true)
	}
	rec := newAttempts(base)
	tr, err := htransport.NewTransport(ctx, rec,
		option.WithEndpoint(endpoint),
		option.WithoutAuthentication(),
		internaloption.EnableNewAuthLibrary())
	if err != nil {
		return nil, nil, err
	}
	return &http.Client{Transport: tr}, rec, nil
}

func prepareOfficial(ctx context.Context, spec *childSpec) (transfer, error) {
	hc, rec, err := officialHTTPClient(ctx, spec.GCS+"/storage/v1/", spec)
	if err != nil {
		return nil, err
	}
	cl, err := storage.NewClient(ctx,
		option.WithEndpoint(spec.GCS+"/storage/v1/"),
		option.WithoutAuthentication(),
		option.WithHTTPClient(hc))
	if err != nil {
		return nil, err
	}
	// Without a precondition an object write is not idempotent, and the
	// client's default policy would not retry it at all; RetryAlways is the
	// documented way to let it absorb the faults scenario's failures.
	// Over HTTP/2 a reset fault is a stream reset (RST_STREAM
	// INTERNAL_ERROR), which storage.ShouldRetry does not retry; its
	// maintainers advise adding it (google-cloud-go issue 7440), as a user
	// on the real wire must.
	cl.SetRetry(storage.WithPolicy(storage.RetryAlways), storage.WithErrorFunc(func(err error) bool {
		return storage.ShouldRetry(err) || isStreamReset(err)
	}))
	t := &officialTransfer{spec: spec, client: cl, chunk: int(spec.ChunkSize), attempts: rec}
	if spec.Client == clientOfficialSingle || spec.SingleRequest {
		t.chunk = 0 // one multipart request per object
	}
	return t, nil
}

func (t *officialTransfer) upload(ctx context.Context) (childResult, error) {
	err := forEach(ctx, len(t.spec.Files), t.spec.Parallel, func(ctx context.Context, i int) error {
		return t.put(ctx, t.spec.Files[i])
	})
	return t.result(), err
}

func (t *officialTransfer) result() childResult {
	n, slept := t.attempts.totals()
	return childResult{Retries: n, Slept: slept.Seconds(), RetriesMeasured: true}
}

func (t *officialTransfer) put(ctx context.Context, f fileRef) error {
	file, err := os.Open(f.Path)
	if err != nil {
		return err
	}
	defer file.Close()
	// Cancelling the writer's context is how an upload is abandoned.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := t.client.Bucket(t.spec.Bucket).Object(t.spec.Prefix + f.Object).NewWriter(ctx)
	w.ChunkSize = t.chunk
	if _, err := io.Copy(w, file); err != nil {
		return fmt.Errorf("%s: %w", f.Object, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: %w", f.Object, err)
	}
	return nil
}

func (t *officialTransfer) download(ctx context.Context) (childResult, error) {
	err := forEach(ctx, len(t.spec.Files), t.spec.Parallel, func(ctx context.Context, i int) error {
		return t.get(ctx, t.spec.Files[i])
	})
	return t.result(), err
}

func (t *officialTransfer) get(ctx context.Context, f fileRef) error {
	r, err := t.client.Bucket(t.spec.Bucket).Object(t.spec.Prefix + f.Object).NewReader(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Object, err)
	}
	defer r.Close()
	out, err := os.Create(f.Path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", f.Object, err)
	}
	return out.Close()
}

// isStreamReset reports whether err is an HTTP/2 stream reset by the server
// with INTERNAL_ERROR, as net/http's bundled HTTP/2 words it (its error type
// is not exported).
func isStreamReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "stream error") &&
		strings.Contains(err.Error(), "INTERNAL_ERROR; received from peer")
}
