package main

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// gcsputTransfer uses the upload package as a program importing it would,
// with its defaults: sessions saved in a state directory, files below the
// small-file threshold in one multipart request, the rest resumable.
type gcsputTransfer struct {
	spec   *childSpec
	client *upload.Client
	// retries and slept (nanoseconds) add up the EventRetry events.
	retries, slept atomic.Int64
}

func prepareGcsput(ctx context.Context, spec *childSpec) (transfer, error) {
	t := &gcsputTransfer{spec: spec}
	c, err := upload.New(ctx, upload.Options{
		Endpoint:    spec.GCS,
		Auth:        auth.Options{NoAuth: true},
		ChunkSize:   int(spec.ChunkSize),
		Parallelism: spec.Parallel,
		StateDir:    filepath.Join(spec.ConfigDir, "state"),
		OnEvent:     t.onEvent,
	})
	if err != nil {
		return nil, err
	}
	t.client = c
	return t, nil
}

func (t *gcsputTransfer) onEvent(e resumable.Event) {
	if e.Kind == resumable.EventRetry {
		t.retries.Add(1)
		t.slept.Add(int64(e.Wait))
	}
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
	return childResult{Retries: int(t.retries.Load()), Slept: time.Duration(t.slept.Load()).Seconds()}
}
