package fakegcs

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	raw "google.golang.org/api/storage/v1"
)

// rewriteUnit is the granularity of maxBytesRewrittenPerCall: GCS requires
// an integral multiple of 1 MiB.
const rewriteUnit = 1 << 20

// boundParams are the query parameters a rewrite token is bound to. GCS:
// "Calls that provide a rewriteToken can omit all other request fields, but
// if included those fields must match the values provided in the first
// rewrite request"; of maxBytesRewrittenPerCall it says a change gets "an
// error that the rewriteToken is invalid".
var boundParams = []string{
	"sourceGeneration", "maxBytesRewrittenPerCall",
	"ifGenerationMatch", "ifGenerationNotMatch", "ifMetagenerationMatch", "ifMetagenerationNotMatch",
	"ifSourceGenerationMatch", "ifSourceGenerationNotMatch", "ifSourceMetagenerationMatch", "ifSourceMetagenerationNotMatch",
	"destinationKmsKeyName", "destinationPredefinedAcl",
}

// rewriteOp is one multi-call rewrite, from its first call to the call that
// finishes it: what the token binds (source generation, destination, the
// first call's parameters and body) and the per-call limit.
type rewriteOp struct {
	srcBucket, srcObject string
	srcGen               int64
	size                 int64
	dstBucket, dstObject string
	params               url.Values // the first call's boundParams that were present
	body                 string     // the first call's metadata, re-encoded ("" when none)
	// dstKey and dstKMS are the destination's encryption as the first call
	// asked for it: the SHA256 of its customer-supplied key, or its Cloud
	// KMS key name. Every call must carry the same CSEK (GCS keeps none, and
	// needs it to write), and may omit destinationKmsKeyName but not change it.
	dstKey, dstKMS string
	perCall        int64
	// token names the rewrite from its first answer on: GCS's token stays
	// the same for all of a rewrite's calls (gcloud and gsutil send the
	// first one on every call), and the progress is the server's (done).
	token string
	done  int64
	// result is the destination once the rewrite is done: a finished
	// rewrite's token answers it again (a client whose last answer was
	// lost retries with the token it has), as GCS's does until the token
	// expires.
	result *ObjectAttrs
}

// serveRewrite answers rewriteTo. A rewrite whose source is larger than its
// per-call limit (maxBytesRewrittenPerCall, or Options.RewriteBytesPerCall)
// takes several calls: each one "copies" up to the limit and answers
// done=false with totalBytesRewritten, objectSize and a rewriteToken to send
// on the next; the call that reaches objectSize commits the destination and
// answers done=true with its resource. The destination holds the source
// generation's bytes, CRC32C and MD5, and the request body's metadata when
// one was sent (the source's otherwise).
func (s *Server) serveRewrite(x *exchange) {
	meta, body, apiErr := readRewriteBody(x)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	q := x.r.URL.Query()
	var op *rewriteOp
	if tok := q.Get("rewriteToken"); tok != "" {
		op, apiErr = s.continueRewrite(x, tok, body)
	} else {
		op, apiErr = s.startRewrite(x, body)
	}
	if apiErr == nil {
		apiErr = s.checkRewriteKey(x, op)
	}
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	if res := s.rewriteResult(op); res != nil {
		x.writeRewriteDone(*res)
		return
	}
	if next, more := s.advance(x, op); more {
		x.writeResource(http.StatusOK, &rewriteResponse{
			Kind: "storage#rewriteResponse", ObjectSize: op.size, TotalBytesRewritten: next, RewriteToken: op.token,
		})
		return
	}
	obj, apiErr := s.finishRewrite(x, op, meta)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	s.mu.Lock()
	op.result = &obj
	s.mu.Unlock()
	x.writeRewriteDone(obj)
}

// writeRewriteDone answers the call that finished a rewrite.
func (x *exchange) writeRewriteDone(obj ObjectAttrs) {
	x.writeResource(http.StatusOK, &rewriteResponse{
		Kind: "storage#rewriteResponse", Done: true, Resource: rawObject(obj, x.baseURL()),
		ObjectSize: obj.Size, TotalBytesRewritten: obj.Size,
	})
}

// rewriteResult is op's destination once it is done, else nil.
func (s *Server) rewriteResult(op *rewriteOp) *ObjectAttrs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return op.result
}

// readRewriteBody reads the optional destination resource and its
// canonical encoding, which a token binds.
func readRewriteBody(x *exchange) (*raw.Object, string, *apiError) {
	meta, apiErr := readMetadata(x)
	if apiErr != nil {
		return nil, "", apiErr
	}
	if !setsMetadata(meta) {
		return meta, "", nil
	}
	b, _ := json.Marshal(meta)
	return meta, string(b), nil
}

// setsMetadata reports whether a copy's destination resource sets any
// metadata; one that does replaces the source's.
func setsMetadata(meta *raw.Object) bool {
	return meta != nil && (meta.ContentType != "" || meta.Metadata != nil || meta.CacheControl != "" || meta.ContentEncoding != "" ||
		meta.ContentDisposition != "" || meta.ContentLanguage != "" || meta.StorageClass != "")
}

// advance moves op on by one call's worth and reports where it got and
// whether more calls are needed; the first call that needs more registers
// op under a new token.
func (s *Server) advance(x *exchange, op *rewriteOp) (int64, bool) {
	s.mu.Lock()
	from := op.done
	next := op.size
	if op.perCall > 0 {
		next = min(op.size, from+op.perCall)
	}
	op.done = next
	if next < op.size && op.token == "" {
		var b [24]byte
		_, _ = rand.Read(b[:])
		op.token = "rw" + hex.EncodeToString(b[:])
		// Kept for the server's life: a few hundred bytes each, a fake's lifetime.
		s.rewrites[op.token] = op
	}
	s.mu.Unlock()
	x.rewritten = next - from
	s.countRewritten(x.rewritten)
	return next, next < op.size
}

// startRewrite checks a first call (no token): the per-call limit, the
// source and its ifSource* conditions, the destination's conditions. The
// rewrite it returns is registered only if it takes more than this call.
func (s *Server) startRewrite(x *exchange, body string) (*rewriteOp, *apiError) {
	q := x.r.URL.Query()
	perCall, apiErr := s.perCallLimit(q)
	if apiErr != nil {
		return nil, apiErr
	}
	src, apiErr := s.copySource(x)
	if apiErr != nil {
		return nil, apiErr
	}
	src.done()
	c, apiErr := parseConds(q, nil, "if")
	if apiErr == nil {
		apiErr = s.checkLive(x.ri.dstBucket, x.ri.dstObject, c)
	}
	if apiErr != nil {
		return nil, apiErr
	}
	dstKey, apiErr := requestKey(x.r.Header, keyHeaders)
	if apiErr != nil {
		return nil, apiErr
	}
	op := &rewriteOp{
		srcBucket: x.ri.bucket, srcObject: x.ri.object, srcGen: src.attrs.Generation, size: src.attrs.Size,
		dstBucket: x.ri.dstBucket, dstObject: x.ri.dstObject, params: url.Values{}, body: body, perCall: perCall,
		dstKey: dstKey, dstKMS: q.Get("destinationKmsKeyName"),
	}
	for _, p := range boundParams {
		if v, ok := q[p]; ok {
			op.params[p] = v
		}
	}
	return op, nil
}

// perCallLimit is the bytes one call may rewrite: maxBytesRewrittenPerCall
// (a positive multiple of 1 MiB, or GCS's 400) and Options.RewriteBytesPerCall,
// the smaller of those set; 0 means the whole object in one call.
func (s *Server) perCallLimit(q url.Values) (int64, *apiError) {
	limit := s.opts.RewriteBytesPerCall
	if v := q.Get("maxBytesRewrittenPerCall"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n%rewriteUnit != 0 {
			return 0, errf(400, "invalid", "Invalid argument for maxBytesRewrittenPerCall: %q; it must be a positive multiple of 1048576.", v)
		}
		if limit <= 0 || n < limit {
			limit = n
		}
	}
	return max(limit, 0), nil
}

// continueRewrite finds the rewrite a token belongs to and checks the call
// against what the token binds: the same source and destination, the same
// value for every bound parameter it repeats, the same body if it sends
// one, and the same destination key (GCS's 400 otherwise). The source must still be the generation the
// rewrite started from, and meet the call's ifSource* conditions.
func (s *Server) continueRewrite(x *exchange, tok, body string) (*rewriteOp, *apiError) {
	s.mu.Lock()
	op, ok := s.rewrites[tok]
	s.mu.Unlock()
	if !ok {
		return nil, errInvalidToken
	}
	q := x.r.URL.Query()
	if op.srcBucket != x.ri.bucket || op.srcObject != x.ri.object || op.dstBucket != x.ri.dstBucket || op.dstObject != x.ri.dstObject {
		return op, errInvalidToken
	}
	for _, p := range boundParams {
		if v, ok := q[p]; ok && !equalValues(v, op.params[p]) {
			return op, errInvalidToken
		}
	}
	if body != "" && body != op.body {
		return op, errInvalidToken
	}
	if sent, apiErr := requestKey(x.r.Header, keyHeaders); apiErr != nil || sent != op.dstKey {
		// A destination key left out, or another: the token was bound to
		// the first call's, which GCS does not keep and cannot write without.
		return op, errInvalidToken
	}
	if s.rewriteResult(op) != nil {
		return op, nil
	}
	c, apiErr := parseConds(q, nil, "ifSource")
	if apiErr != nil {
		return op, apiErr
	}
	// Source preconditions are checked against the live generation, as on
	// the first call; without them the rewrite continues from the
	// generation it started from, live or (with versioning) noncurrent.
	if c != (conds{}) {
		src, apiErr := s.getObject(op.srcBucket, op.srcObject)
		if apiErr != nil {
			return op, apiErr
		}
		defer src.done()
		if apiErr = c.checkAttrs(&src.attrs, false); apiErr != nil {
			return op, apiErr
		}
	}
	src, apiErr := s.acquireGen(op.srcBucket, op.srcObject, op.srcGen, false)
	if apiErr == nil {
		src.done()
	}
	return op, apiErr
}

var errInvalidToken = errf(400, "invalid", "Invalid argument: the rewrite token is invalid, or the request does not match the parameters of the rewrite it continues.")

func equalValues(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// finishRewrite commits the destination from the source generation the
// rewrite started from, under the call's destination conditions.
func (s *Server) finishRewrite(x *exchange, op *rewriteOp, meta *raw.Object) (ObjectAttrs, *apiError) {
	src, apiErr := s.acquireGen(op.srcBucket, op.srcObject, op.srcGen, false)
	if apiErr != nil {
		return ObjectAttrs{}, apiErr
	}
	defer src.done()
	c, apiErr := parseConds(x.r.URL.Query(), nil, "if")
	if apiErr != nil {
		return ObjectAttrs{}, apiErr
	}
	if op.body != "" && !setsMetadata(meta) {
		// A continuing call may omit the body: the first call's holds.
		meta = &raw.Object{}
		_ = json.Unmarshal([]byte(op.body), meta)
	}
	// The destination's encryption is the one the token was bound to: a
	// continuing call may omit destinationKmsKeyName, not drop the key.
	return s.copyInto(src, meta, op.dstBucket, op.dstObject, c, op.dstKey, op.dstKMS)
}

// checkRewriteKey refuses a call of a rewrite whose source is encrypted with
// a customer-supplied key the call does not carry: on GCS every call must
// carry it, the first and each one that continues.
func (s *Server) checkRewriteKey(x *exchange, op *rewriteOp) *apiError {
	src, apiErr := s.getObject(op.srcBucket, op.srcObject)
	if apiErr != nil {
		return nil // the source's absence is the call's own answer, given by what follows
	}
	defer src.done()
	_, _, apiErr = copySourceKey(x.r, &src.attrs)
	return apiErr
}

// copyInto commits the bytes of src as bucket/name with src's checksums and
// the metadata of meta when it sets any (src's otherwise).
func (s *Server) copyInto(src objectRef, meta *raw.Object, bucket, name string, c conds, dstKey, dstKMS string) (ObjectAttrs, *apiError) {
	content, err := s.be.concat([]blob{src.blob})
	if err != nil {
		return ObjectAttrs{}, errf(500, "internalError", "fakegcs: copy: %v", err)
	}
	dst := src.attrs.clone()
	if setsMetadata(meta) {
		over := attrsFromRaw(meta)
		over.CRC32C, over.MD5, over.ComponentCount = dst.CRC32C, dst.MD5, dst.ComponentCount
		dst = over
	}
	if !setsMetadata(meta) {
		// A copy never carries the source's holds or retention: only
		// what its destination resource asks for.
		dst.TemporaryHold, dst.EventBasedHold, dst.Retention = false, false, nil
		if meta != nil {
			dst.TemporaryHold, dst.EventBasedHold, dst.Retention = meta.TemporaryHold, meta.EventBasedHold, retentionFromRaw(meta.Retention)
		}
	}
	dst.Bucket, dst.Name = bucket, name
	dst.CustomerKeySHA256, dst.KMSKeyName = dstKey, dstKMS // the destination's own key, or none
	return s.commitObject(dst, content, c)
}

// countRewritten adds n to the bytes rewritten (Stats.BytesRewritten).
func (s *Server) countRewritten(n int64) {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	s.counters.rewritten += n
}
