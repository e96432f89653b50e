package main

import (
	"context"
	"net/http"
	"path/filepath"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/upload"
)

// gcsputTransfer uses the upload package as a program importing it would,
// with its defaults: sessions saved in a state directory, files below the
// small-file threshold in one multipart request, the rest resumable.
type gcsputTransfer struct {
	spec     *childSpec
	client   *upload.Client
	attempts *attempts
}

// prepareGcsput makes the client with gcsput's defaults, except the chunk
// size and the parallelism, which are the scenario's (0: gcsput's own
// default, as in the capped scenario). Its transport is the one it would
// make itself (auth.NewTransport), under attempts, so its retries are
// counted as the official client's are.
func prepareGcsput(ctx context.Context, spec *childSpec) (transfer, error) {
	rt, err := gcsputTransport(spec)
	if err != nil {
		return nil, err
	}
	t := &gcsputTransfer{spec: spec, attempts: newAttempts(rt)}
	c, err := upload.New(ctx, upload.Options{
		Endpoint:    spec.GCS,
		Auth:        auth.Options{NoAuth: true, Base: t.attempts},
		ChunkSize:   int(spec.ChunkSize),
		Parallelism: spec.Parallel,
		StateDir:    filepath.Join(spec.ConfigDir, "state"),
	})
	if err != nil {
		return nil, err
	}
	t.client = c
	return t, nil
}

// gcsputTransport is the transport upload.New makes from auth.Options
// (auth.NewTransport for the parallelism, then auth.ForProtocol), trusting
// the wire's certificates, with the protocol of the client's row: the
// default (auth.DefaultProtocol), or HTTP/2 on one connection or a pool.
func gcsputTransport(spec *childSpec) (http.RoundTripper, error) {
	tr := auth.NewTransport(spec.Parallel)
	var err error
	if tr.TLSClientConfig, err = trusting(spec.CAFile); err != nil {
		return nil, err
	}
	proto, streams := auth.DefaultProtocol, 0
	switch spec.Client {
	case clientGcsputH2:
		proto = auth.HTTP2
	case clientGcsputH2x1:
		proto, streams = auth.HTTP2, 1
	case clientGcsputH2x4:
		proto, streams = auth.HTTP2, 4
	}
	return auth.ForProtocol(tr, proto, streams, 0)
}

func (t *gcsputTransfer) items() []upload.Item {
	items := make([]upload.Item, len(t.spec.Files))
	for i, f := range t.spec.Files {
		items[i] = upload.Item{Local: f.Path, Remote: upload.URL{Bucket: t.spec.Bucket, Object: t.spec.Prefix + f.Object}}
	}
	return items
}

func (t *gcsputTransfer) upload(ctx context.Context) (childResult, error) {
	_, err := t.client.Upload(ctx, t.items(), upload.UploadOptions{})
	return t.result(), err
}

func (t *gcsputTransfer) download(ctx context.Context) (childResult, error) {
	_, err := t.client.DownloadObjects(ctx, t.items(), upload.DownloadOptions{})
	return t.result(), err
}

func (t *gcsputTransfer) result() childResult {
	n, slept := t.attempts.totals()
	return childResult{Retries: n, Slept: slept.Seconds(), RetriesMeasured: true}
}
