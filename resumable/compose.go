package resumable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	storage "google.golang.org/api/storage/v1"
)

// MaxComposeSources is the most source objects one compose request may
// name (GCS's limit).
const MaxComposeSources = 32

// ComposeSource is one source object of a compose: an object of the
// destination's bucket, at exactly this generation.
type ComposeSource struct {
	Name       string
	Generation int64 // required: the source is read at this generation, and the request fails (412) if it is gone
	CRC32C     uint32
	Size       int64
}

// Compose creates spec's object from the concatenation of srcs, in order,
// with spec's metadata and preconditions, and checks that its CRC32C is the
// combination of the sources' (a composite object has no MD5). Each source
// is pinned to its generation with ifGenerationMatch, so a source replaced
// meanwhile fails the compose (ErrPreconditionFailed) instead of going in.
//
// The request is retried under Options.Retry, with one idempotency token.
// Retrying it is safe: composing the same source generations again makes
// the same bytes. With spec.DoesNotExist or GenerationMatch a retry may meet
// the object its own lost attempt created (ErrPreconditionFailed): only the
// caller can tell, by reading the object's CRC32C and component count.
func (c *Client) Compose(ctx context.Context, spec ObjectSpec, srcs []ComposeSource) (*storage.Object, error) {
	return c.ComposeWith(ctx, spec, srcs, ComposeOptions{})
}

// ComposeOptions are the options of [Client.ComposeWith].
type ComposeOptions struct {
	// DeleteSources asks GCS to delete the sources once the composite
	// exists (the compose request's deleteSourceObjects): deleted hard,
	// never soft-deleted nor kept noncurrent, in the same call. A retry
	// after a lost reply then meets the sources gone (404): only the
	// caller can tell, by reading the destination, that its lost attempt
	// made it. A server that does not know the field ignores it and
	// leaves the sources.
	DeleteSources bool
}

// ComposeWith is Compose with options.
func (c *Client) ComposeWith(ctx context.Context, spec ObjectSpec, srcs []ComposeSource, o ComposeOptions) (*storage.Object, error) {
	name := "gs://" + spec.Bucket + "/" + spec.Name
	if spec.Bucket == "" || spec.Name == "" || len(srcs) == 0 || len(srcs) > MaxComposeSources {
		return nil, &Error{Op: "compose", Object: name, Err: fmt.Errorf("compose needs a bucket, an object name and 1 to %d sources (got %d)", MaxComposeSources, len(srcs))}
	}
	body, want, err := composeBody(spec, srcs, o.DeleteSources)
	if err != nil {
		return nil, &Error{Op: "compose", Object: name, Err: err}
	}
	q := spec.query()
	if q == nil {
		q = url.Values{}
	}
	u := c.endpoint + "/storage/v1/b/" + url.PathEscape(spec.Bucket) + "/o/" + url.PathEscape(spec.Name) + "/compose?" + q.Encode()
	emit := c.emitter(spec.Bucket, spec.Name)
	var obj storage.Object
	err = c.runner(emit).Do(ctx, func(ctx context.Context) error {
		req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json; charset=UTF-8")
		spec.Key.set(req.Header)
		return c.send(ctx, "compose", req, nil, func(resp *http.Response, _ *watchdog) error {
			if resp.StatusCode != http.StatusOK {
				return statusError(resp, nil, false)
			}
			return decodeJSON(resp, &obj)
		})
	})
	if err != nil {
		return nil, &Error{Op: "compose", Object: name, Err: err}
	}
	if got, err := DecodeCRC32C(obj.Crc32c); err != nil || got != want.CRC32C {
		return nil, &ChecksumError{Object: name, Local: want, Remote: Hashes{CRC32C: got, HasCRC32C: err == nil},
			Err: errors.New("the composite object's crc32c is not the combination of its components'")}
	}
	emit(Event{Kind: EventFinished, Size: int64(obj.Size), Generation: obj.Generation, CRC32C: obj.Crc32c, Persisted: int64(obj.Size)})
	return &obj, nil
}

// composeBody is the compose request's body, and the CRC32C the composite
// must have.
func composeBody(spec ObjectSpec, srcs []ComposeSource, deleteSources bool) ([]byte, Hashes, error) {
	type precond struct {
		IfGenerationMatch int64 `json:"ifGenerationMatch,string"`
	}
	type source struct {
		Name                string  `json:"name"`
		Generation          int64   `json:"generation,string"`
		ObjectPreconditions precond `json:"objectPreconditions"`
	}
	req := struct {
		Destination         *storage.Object `json:"destination"`
		SourceObjects       []source        `json:"sourceObjects"`
		DeleteSourceObjects bool            `json:"deleteSourceObjects,omitempty"`
	}{Destination: spec.object(), DeleteSourceObjects: deleteSources}
	for _, s := range srcs {
		if s.Name == "" || s.Generation <= 0 || s.Size < 0 {
			return nil, Hashes{}, fmt.Errorf("compose source %q needs a name and its generation", s.Name)
		}
		req.SourceObjects = append(req.SourceObjects, source{Name: s.Name, Generation: s.Generation,
			ObjectPreconditions: precond{IfGenerationMatch: s.Generation}})
	}
	b, err := json.Marshal(&req)
	return b, Hashes{CRC32C: ComposedCRC32C(srcs), HasCRC32C: true}, err
}

// ComposedCRC32C is the CRC32C a composite of srcs must have: theirs,
// combined in order.
func ComposedCRC32C(srcs []ComposeSource) uint32 {
	var crc uint32
	for _, s := range srcs {
		crc = CombineCRC32C(crc, s.CRC32C, s.Size)
	}
	return crc
}
