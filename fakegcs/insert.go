package fakegcs

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"unicode/utf8"

	raw "google.golang.org/api/storage/v1"
)

// serveMedia answers POST /upload/storage/v1/b/BUCKET/o?uploadType=media&name=N:
// the body is the content.
func (s *Server) serveMedia(x *exchange) {
	attrs := ObjectAttrs{Bucket: x.ri.bucket, Name: x.ri.object, ContentType: x.r.Header.Get("Content-Type")}
	attrs.ContentEncoding = x.r.URL.Query().Get("contentEncoding")
	if attrs.Name == "" {
		x.drain()
		x.fail(errf(400, "required", "Required: object name"))
		return
	}
	s.insert(x, attrs, x.r.Body, wantHashes{})
}

// serveMultipart answers uploadType=multipart: a multipart/related body
// whose first part is the Object resource (JSON) and second the content.
func (s *Server) serveMultipart(x *exchange) {
	boundary := multipartBoundary(x.r.Header.Get("Content-Type"))
	if boundary == "" {
		x.drain()
		x.fail(errf(400, "invalid", "Multipart upload needs a multipart Content-Type with a boundary"))
		return
	}
	mr := multipart.NewReader(x.r.Body, boundary)
	metaPart, err := mr.NextPart()
	if err != nil {
		x.bodyError(err)
		return
	}
	meta := &raw.Object{}
	metaJSON, err := io.ReadAll(io.LimitReader(metaPart, 1<<20))
	if err != nil {
		x.bodyError(err)
		return
	}
	if !s.opts.LaxNames && !utf8.Valid(metaJSON) {
		x.drain()
		x.fail(errf(400, "invalid", "The object metadata is not valid UTF-8."))
		return
	}
	if err := json.Unmarshal(metaJSON, meta); err != nil {
		x.drain()
		x.fail(errf(400, "parseError", "Parse Error in metadata part: %v", err))
		return
	}
	media, err := mr.NextPart()
	if err != nil {
		x.bodyError(err)
		return
	}
	attrs := attrsFromRaw(meta)
	attrs.Bucket = x.ri.bucket
	if x.ri.object != "" {
		attrs.Name = x.ri.object
	}
	if attrs.ContentType == "" {
		attrs.ContentType = media.Header.Get("Content-Type")
	}
	if attrs.Name == "" {
		x.drain()
		x.fail(errf(400, "required", "Required: object name"))
		return
	}
	want, apiErr := declaredHashes(meta)
	if apiErr != nil {
		x.drain()
		x.fail(apiErr)
		return
	}
	s.insert(x, attrs, media, want)
}

// insert stores a single-request upload: content streamed from r, then
// hashes (declared ones and X-Goog-Hash) and preconditions checked before
// the object exists.
func (s *Server) insert(x *exchange, attrs ObjectAttrs, r io.Reader, want wantHashes) {
	if apiErr := newObjectKeys(x, &attrs); apiErr != nil {
		x.drain()
		x.fail(apiErr)
		return
	}
	if h := x.r.Header.Values("X-Goog-Hash"); len(h) > 0 {
		hw, apiErr := parseGoogHash(h)
		if apiErr != nil {
			x.drain()
			x.fail(apiErr)
			return
		}
		want.merge(hw)
	}
	c, apiErr := parseConds(x.r.URL.Query(), nil, "if")
	if apiErr != nil {
		x.drain()
		x.fail(apiErr)
		return
	}
	if _, err := s.lookup(attrs.Bucket, ""); errors.Is(err, ErrBucketNotFound) {
		x.drain()
		x.fail(errNoBucket)
		return
	}
	w, err := s.be.create()
	if err != nil {
		x.fail(errf(500, "internalError", "fakegcs: %v", err))
		return
	}
	h := newHasher(!s.opts.DisableMD5)
	if _, err := ingest(r, w, &h); err != nil {
		w.abort()
		x.bodyError(err)
		return
	}
	attrs.CRC32C, attrs.MD5 = h.sum()
	if apiErr := want.check(attrs.CRC32C, attrs.MD5); apiErr != nil {
		w.abort()
		x.fail(apiErr)
		return
	}
	content, err := w.commit()
	if err != nil {
		x.fail(errf(500, "internalError", "fakegcs: %v", err))
		return
	}
	obj, apiErr := s.commitObject(attrs, content, c)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	s.inserted(obj.Bucket, obj.Name)
	x.writeObject(obj)
}

// multipartBoundary finds the boundary of a multipart Content-Type. gcloud
// and gsutil (Python's email package) send boundary='===...==' in single
// quotes with "=" inside, which mime.ParseMediaType rejects but GCS accepts.
func multipartBoundary(ct string) string {
	if _, params, err := mime.ParseMediaType(ct); err == nil && params["boundary"] != "" {
		return params["boundary"]
	}
	_, rest, ok := strings.Cut(ct, "boundary=")
	if !ok {
		return ""
	}
	b, _, _ := strings.Cut(rest, ";")
	b = strings.TrimSpace(b)
	if len(b) >= 2 && (b[0] == '\'' || b[0] == '"') && b[len(b)-1] == b[0] {
		b = b[1 : len(b)-1]
	}
	return b
}
