package resumable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	storage "google.golang.org/api/storage/v1"

	"github.com/gcsput/gcsput/retry"
)

// RewriteUnit is the granularity of [RewriteSpec].MaxBytesPerCall: GCS
// requires maxBytesRewrittenPerCall to be a multiple of 1 MiB.
const RewriteUnit = 1 << 20

// ErrRewriteTokenRejected: a call that continued a rewrite with a token was
// answered 400 (GCS's answer to a token it does not know, one that expired,
// or one sent with other parameters than the rewrite started with). The
// rewrite cannot go on; start it again without the token.
var ErrRewriteTokenRejected = errors.New("resumable: the server refused the rewrite token")

// RewriteSpec is one server-side copy (objects.rewrite): the source
// generation's bytes become Dst.
type RewriteSpec struct {
	// SrcBucket and SrcObject name the source; required.
	SrcBucket, SrcObject string
	// SrcGeneration is the source generation to copy; required. Every call
	// sends it as sourceGeneration and ifSourceGenerationMatch, so a source
	// overwritten during the copy fails it (ErrPreconditionFailed) instead
	// of mixing two generations or copying the new one unseen.
	SrcGeneration int64
	// SrcCRC32C is the source generation's CRC32C: the destination must have
	// the same, or Rewrite fails with a *ChecksumError.
	SrcCRC32C uint32
	// SrcSize is the source's size in bytes, for events (EventResumed's
	// Size); 0 with a Token means unknown.
	SrcSize int64
	// SrcKey is the source's customer-supplied encryption key (nil for a
	// source without one), sent on every call. Dst.Key, when set, encrypts
	// the destination.
	SrcKey EncryptionKey

	// Dst names the destination (Bucket, Name; required) and its
	// preconditions (DoesNotExist, GenerationMatch, MetagenerationMatch),
	// checked by the server. KMSKeyName becomes destinationKmsKeyName. When
	// any of its metadata fields (ContentType, CacheControl,
	// ContentDisposition, ContentEncoding, ContentLanguage, Metadata,
	// StorageClass) is set, they are sent as the destination's metadata,
	// which then replaces the source's; otherwise the destination keeps the
	// source's metadata. Size is not used.
	Dst ObjectSpec

	// MaxBytesPerCall is maxBytesRewrittenPerCall: at most this many bytes
	// per call, a positive multiple of RewriteUnit. 0 lets the server
	// decide (within a location and storage class GCS copies any size in
	// one call; across them it takes several). It is meant for tests.
	MaxBytesPerCall int64

	// Token continues a rewrite from a [RewriteProgress] saved by an
	// earlier run, with the same spec; Rewritten is its count, reported as
	// the offset resumed from. "" starts a new rewrite.
	Token     string
	Rewritten int64
}

// RewriteProgress is where a rewrite stands after a call that did not
// finish it: what to save to resume it later ([RewriteSpec].Token). Token
// is a credential-like secret: it continues a copy into the destination,
// so it goes to a private state file, never to a log, an event or an error.
type RewriteProgress struct {
	Token     string
	Rewritten int64 // totalBytesRewritten, as the server counts it
	Size      int64 // objectSize
}

// String keeps %v from printing the token.
func (p RewriteProgress) String() string {
	return fmt.Sprintf("rewrite at %d of %d bytes", p.Rewritten, p.Size)
}

// GoString keeps %#v from printing the token.
func (p RewriteProgress) GoString() string { return p.String() }

// rewriteReply is the JSON API's RewriteResponse.
type rewriteReply struct {
	Done                bool            `json:"done"`
	ObjectSize          int64           `json:"objectSize,string"`
	TotalBytesRewritten int64           `json:"totalBytesRewritten,string"`
	RewriteToken        string          `json:"rewriteToken"`
	Resource            *storage.Object `json:"resource"`
}

// Rewrite copies spec's source generation to spec.Dst on the server: it
// calls objects.rewrite and follows its rewriteToken until the server says
// done. After every call that leaves the rewrite unfinished, checkpoint
// (if not nil) receives the token and the totals, so a process that dies
// can continue from the last call rather than from zero. Each call runs
// under Options.Retry (5xx, 429 and broken connections wait and try
// again); a call answered without progress costs an attempt like a
// failure; a call that makes progress restarts the budget. The finished
// object's CRC32C must equal spec.SrcCRC32C. Events: EventResumed (with a
// Token), EventRewrite per call, EventRetry, EventFinished.
//
// Retrying a call is safe: the token names the point to continue from,
// and a first call repeated copies the same generation again. As with
// [Client.Compose], a final call whose answer was lost may meet its own
// result on retry: with DoesNotExist or GenerationMatch the server then
// answers 412 (ErrPreconditionFailed), and only the caller can tell (by
// reading the destination) that its copy is in place.
func (c *Client) Rewrite(ctx context.Context, spec RewriteSpec, checkpoint func(RewriteProgress)) (*storage.Object, error) {
	name := "gs://" + spec.Dst.Bucket + "/" + spec.Dst.Name
	if err := spec.check(); err != nil {
		return nil, &Error{Op: "rewrite", Object: name, Err: err}
	}
	body, err := spec.body()
	if err != nil {
		return nil, &Error{Op: "rewrite", Object: name, Err: err}
	}
	emit := c.emitter(spec.Dst.Bucket, spec.Dst.Name)
	st := rewriteState{token: spec.Token, done: spec.Rewritten}
	if st.token != "" {
		size := spec.SrcSize
		if size == 0 {
			size = -1
		}
		emit(Event{Kind: EventResumed, Offset: st.done, Size: size})
	}
	a := c.runner(emit).Begin()
	for {
		reply, err := c.rewriteStep(ctx, spec, body, &st)
		if err != nil {
			if err = a.Retry(ctx, err); err != nil {
				return nil, &Error{Op: "rewrite", Object: name, Offset: st.done, Err: err}
			}
			continue
		}
		a.Reset()
		emit(Event{Kind: EventRewrite, Length: reply.TotalBytesRewritten - st.before, Persisted: reply.TotalBytesRewritten, Size: reply.ObjectSize})
		if !reply.Done {
			if checkpoint != nil {
				checkpoint(RewriteProgress{Token: st.token, Rewritten: st.done, Size: reply.ObjectSize})
			}
			continue
		}
		return c.rewriteDone(spec, reply.Resource, emit)
	}
}

// rewriteState is the loop's position: the token to send ("" for a first
// call) and the bytes rewritten so far; before is the count a call started
// from.
type rewriteState struct {
	token        string
	done, before int64
}

// rewriteStep sends one call and moves st on when the server moved. A
// reply that is not done and did not advance the count is retry.ErrNoProgress.
func (c *Client) rewriteStep(ctx context.Context, spec RewriteSpec, body []byte, st *rewriteState) (*rewriteReply, error) {
	reply, err := c.rewriteCall(retry.WithIdempotencyToken(ctx), spec, body, st.token)
	if err != nil {
		return nil, err
	}
	switch {
	case reply.Done && reply.Resource == nil:
		return nil, fmt.Errorf("%w: a finished rewrite without the object", errProtocol)
	case !reply.Done && reply.RewriteToken == "":
		return nil, fmt.Errorf("%w: an unfinished rewrite without a rewriteToken", errProtocol)
	case !reply.Done && reply.TotalBytesRewritten <= st.done && st.token != "":
		// The same count again: a server that never moves must end in the
		// retry budget. (A first call may answer 0 bytes: GCS may only
		// have started.)
		st.token = reply.RewriteToken
		return nil, fmt.Errorf("%w: a rewrite call answered %d bytes rewritten, as before", retry.ErrNoProgress, reply.TotalBytesRewritten)
	}
	st.before, st.done, st.token = st.done, reply.TotalBytesRewritten, reply.RewriteToken
	return reply, nil
}

// rewriteCall sends one objects.rewrite request.
func (c *Client) rewriteCall(ctx context.Context, spec RewriteSpec, body []byte, token string) (*rewriteReply, error) {
	q := spec.params()
	if token != "" {
		q.Set("rewriteToken", token)
	}
	u := c.endpoint + "/storage/v1/b/" + url.PathEscape(spec.SrcBucket) + "/o/" + url.PathEscape(spec.SrcObject) +
		"/rewriteTo/b/" + url.PathEscape(spec.Dst.Bucket) + "/o/" + url.PathEscape(spec.Dst.Name) + "?" + q.Encode()
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, redactErr(err)
	}
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	spec.SrcKey.setSource(req.Header)
	spec.Dst.Key.set(req.Header)
	var reply rewriteReply
	err = c.send(ctx, "rewrite", req, nil, func(resp *http.Response, _ *watchdog) error {
		if resp.StatusCode != http.StatusOK {
			err := statusError(resp, []string{token}, false)
			if token != "" && resp.StatusCode == http.StatusBadRequest {
				err = fmt.Errorf("%w: %w", ErrRewriteTokenRejected, err)
			}
			return err
		}
		return decodeJSON(resp, &reply)
	})
	return &reply, err
}

// rewriteDone checks the finished object against the source.
func (c *Client) rewriteDone(spec RewriteSpec, obj *storage.Object, emit func(Event)) (*storage.Object, error) {
	name := "gs://" + spec.Dst.Bucket + "/" + spec.Dst.Name
	want := Hashes{CRC32C: spec.SrcCRC32C, HasCRC32C: true}
	if got, err := DecodeCRC32C(obj.Crc32c); err != nil || got != spec.SrcCRC32C {
		return nil, &ChecksumError{Object: name, Local: want, Remote: Hashes{CRC32C: got, HasCRC32C: err == nil},
			Err: fmt.Errorf("the copy's crc32c differs from its source's (gs://%s/%s#%d)", spec.SrcBucket, spec.SrcObject, spec.SrcGeneration)}
	}
	emit(Event{Kind: EventFinished, Size: int64(obj.Size), Generation: obj.Generation, CRC32C: obj.Crc32c, Persisted: int64(obj.Size)})
	return obj, nil
}

func (spec RewriteSpec) check() error {
	switch {
	case spec.SrcBucket == "" || spec.SrcObject == "" || spec.Dst.Bucket == "" || spec.Dst.Name == "":
		return errors.New("a rewrite needs a source and a destination, each a bucket and an object name")
	case spec.SrcGeneration <= 0:
		return errors.New("a rewrite needs the source's generation, to pin it")
	case spec.MaxBytesPerCall < 0 || spec.MaxBytesPerCall%RewriteUnit != 0:
		return fmt.Errorf("MaxBytesPerCall %d is not a multiple of 1 MiB", spec.MaxBytesPerCall)
	}
	return nil
}

// params are the query parameters of every call: the same on each, as GCS
// requires of the parameters a token's calls repeat.
func (spec RewriteSpec) params() url.Values {
	q := url.Values{}
	gen := strconv.FormatInt(spec.SrcGeneration, 10)
	q.Set("sourceGeneration", gen)
	q.Set("ifSourceGenerationMatch", gen)
	spec.Dst.setPreconditions(q)
	if spec.Dst.KMSKeyName != "" {
		q.Set("destinationKmsKeyName", spec.Dst.KMSKeyName)
	}
	if spec.MaxBytesPerCall > 0 {
		q.Set("maxBytesRewrittenPerCall", strconv.FormatInt(spec.MaxBytesPerCall, 10))
	}
	return q
}

// body is the destination's metadata, or nothing when the spec sets none
// (the destination then keeps the source's).
func (spec RewriteSpec) body() ([]byte, error) {
	d := spec.Dst
	if d.ContentType == "" && d.CacheControl == "" && d.ContentDisposition == "" && d.ContentEncoding == "" &&
		d.ContentLanguage == "" && d.Metadata == nil && d.StorageClass == "" && !d.setsHolds() {
		return nil, nil
	}
	return json.Marshal(d.object())
}
