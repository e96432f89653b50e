package fakegcs

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	raw "google.golang.org/api/storage/v1"
)

// serveInitiate starts a resumable upload: POST
// /upload/storage/v1/b/BUCKET/o?uploadType=resumable with the object's
// metadata as a JSON body. The session URI comes back in Location.
func (s *Server) serveInitiate(x *exchange) {
	meta, err := readMetadata(x)
	if err != nil {
		x.fail(err)
		return
	}
	attrs := attrsFromRaw(meta)
	attrs.Bucket = x.ri.bucket
	if attrs.Name == "" || x.ri.object != "" {
		attrs.Name = x.ri.object
	}
	if attrs.Name == "" {
		x.fail(errf(400, "required", "Required: object name"))
		return
	}
	if err := s.validObject(attrs.Name); err != nil {
		x.fail(err)
		return
	}
	if attrs.ContentType == "" {
		attrs.ContentType = x.r.Header.Get("X-Upload-Content-Type")
	}
	if ce := x.r.URL.Query().Get("contentEncoding"); ce != "" {
		attrs.ContentEncoding = ce
	}
	if apiErr := newObjectKeys(x, &attrs); apiErr != nil {
		x.fail(apiErr)
		return
	}
	sess, apiErr := s.newSession(x, attrs, meta)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	s.addSession(sess)
	loc := x.baseURL() + "/upload/storage/v1/b/" + url.PathEscape(attrs.Bucket) +
		"/o?uploadType=resumable&upload_id=" + url.QueryEscape(sess.id)
	h := x.w.Header()
	h.Set("Location", loc)
	h.Set("X-GUploader-UploadID", sess.id)
	h.Set("Content-Length", "0")
	x.w.WriteHeader(http.StatusOK)
}

func (s *Server) newSession(x *exchange, attrs ObjectAttrs, meta *raw.Object) (*session, *apiError) {
	if _, err := s.lookup(attrs.Bucket, ""); err == ErrBucketNotFound {
		return nil, errNoBucket
	}
	c, apiErr := parseConds(x.r.URL.Query(), nil, "if")
	if apiErr != nil {
		return nil, apiErr
	}
	if err := s.checkLive(attrs.Bucket, attrs.Name, c); err != nil {
		return nil, err
	}
	want, apiErr := declaredHashes(meta)
	if apiErr != nil {
		return nil, apiErr
	}
	declared := int64(-1)
	if v := x.r.Header.Get("X-Upload-Content-Length"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, errf(400, "invalid", "Invalid X-Upload-Content-Length %q", v)
		}
		declared = n
	}
	w, err := s.be.create()
	if err != nil {
		return nil, errf(500, "internalError", "fakegcs: %v", err)
	}
	sess := &session{
		id: newSessionID(), bucket: attrs.Bucket, name: attrs.Name, attrs: attrs,
		conds: c, declared: declared, want: want, created: s.now(),
		w: w, h: newHasher(!s.opts.DisableMD5), total: -1,
	}
	sess.hp = newHashPipe(&sess.h)
	return sess, nil
}

// readMetadata decodes an optional JSON Object resource from the body.
func readMetadata(x *exchange) (*raw.Object, *apiError) {
	body, err := io.ReadAll(io.LimitReader(x.r.Body, 1<<20))
	if err != nil {
		return nil, errf(400, "invalid", "fakegcs: reading metadata: %v", err)
	}
	meta := &raw.Object{}
	if len(strings.TrimSpace(string(body))) == 0 {
		return meta, nil
	}
	if !x.s.opts.LaxNames && !utf8.Valid(body) {
		// encoding/json would turn the bad bytes into U+FFFD, quietly
		// renaming the object; GCS refuses the request.
		return nil, errf(400, "invalid", "The object metadata is not valid UTF-8.")
	}
	if err := json.Unmarshal(body, meta); err != nil {
		return nil, errf(400, "parseError", "Parse Error: %v", err)
	}
	return meta, nil
}

// serveSession handles every request on a session URI: chunks (PUT or
// POST), status queries, and DELETE.
func (s *Server) serveSession(x *exchange) {
	sess := x.ri.session
	if sess == nil {
		x.drain()
		x.fail(errSessionUnknown)
		return
	}
	switch x.r.Method {
	case http.MethodDelete:
		sess.cancel()
		x.fail(errCancelled)
		return
	case http.MethodPut, http.MethodPost:
	default:
		x.fail(errf(405, "invalid", "Method %s is not allowed on an upload session", x.r.Method))
		return
	}
	cr, err := parseContentRange(x.r.Header.Get("Content-Range"), x.r.ContentLength)
	if err != nil {
		x.drain()
		x.fail(errf(400, "invalid", "Invalid Content-Range %q", x.r.Header.Get("Content-Range")))
		return
	}
	if apiErr := x.sessionKey(&sess.attrs); apiErr != nil {
		x.drain()
		x.fail(apiErr)
		return
	}
	sess.mu.Lock()
	sess.epoch++
	epoch := sess.epoch
	if reply := x.sessionPrecheck(sess, cr); reply != nil {
		sess.mu.Unlock()
		x.drain()
		reply()
		return
	}
	if cr.query {
		x.statusQuery(sess, cr)
		sess.mu.Unlock()
		return
	}
	limit, apiErr := x.planChunk(sess, cr)
	persisted := sess.persisted
	sess.mu.Unlock()
	if apiErr != nil {
		x.drain()
		x.fail(apiErr)
		return
	}
	x.receiveChunk(sess, epoch, cr, persisted, limit)
}

// sessionPrecheck returns the answer to a request that cannot add bytes:
// to a finished session (the object again, as GCS does), a dead one, or with
// a size that contradicts what the session knows; nil for a request to
// serve. The answer is given after sess.mu is released and the body
// drained. Called with sess.mu held.
func (x *exchange) sessionPrecheck(sess *session, cr contentRange) func() {
	if sess.state == stDone {
		obj := sess.result
		return func() { x.writeObject(obj) }
	}
	if err := sess.stateError(); err != nil {
		return func() { x.fail(err) }
	}
	if cr.total < 0 {
		return nil
	}
	var err *apiError
	switch {
	case sess.total >= 0 && cr.total != sess.total:
		err = errf(400, "invalid", "Content-Range total %d differs from %d stated earlier", cr.total, sess.total)
	case sess.declared >= 0 && cr.total != sess.declared:
		err = errf(400, "invalid", "Content-Range total %d differs from X-Upload-Content-Length %d", cr.total, sess.declared)
	case cr.total < sess.persisted:
		err = errf(400, "invalid", "Content-Range total %d is less than the %d bytes already persisted", cr.total, sess.persisted)
	}
	if err != nil {
		return func() { x.fail(err) }
	}
	sess.total = cr.total
	return nil
}

// statusQuery answers "Content-Range: bytes */total|*". It finalizes only
// when the stated total is exactly what is persisted: a query never turns a
// partial upload into an object. Called with sess.mu held.
func (x *exchange) statusQuery(sess *session, cr contentRange) {
	if cr.total >= 0 && cr.total == sess.persisted {
		x.finalize(sess)
		return
	}
	x.respond308(sess.persisted)
}

// planChunk validates a chunk against the session and returns the object
// offset up to which its bytes may be persisted. Called with sess.mu held.
func (x *exchange) planChunk(sess *session, cr contentRange) (int64, *apiError) {
	n := cr.end - cr.start + 1
	final := cr.total >= 0 && cr.end+1 == cr.total
	switch {
	case cr.start > sess.persisted:
		return 0, errf(400, "invalid", "Invalid request. According to the Content-Range header, the upload offset is %d byte(s), which exceeds already uploaded size of %d byte(s).", cr.start, sess.persisted)
	case !final && n%quantum != 0:
		return 0, errf(400, "invalid", "Invalid request. The number of bytes uploaded is required to be equal or greater than 262144, except for the final request (it's recommended to be the exact multiple of 262144). The received request contained %d bytes, which does not meet this requirement.", n)
	case x.r.ContentLength >= 0 && x.r.ContentLength != n:
		return 0, errf(400, "invalid", "Content-Length %d does not match Content-Range %d-%d", x.r.ContentLength, cr.start, cr.end)
	case sess.declared >= 0 && cr.end >= sess.declared:
		return 0, errf(400, "invalid", "Content-Range end %d is beyond X-Upload-Content-Length %d", cr.end, sess.declared)
	}
	limit := cr.end + 1
	if !final {
		// Only whole quanta of a non-final chunk are persisted.
		limit = alignDown(limit)
	}
	if f := x.fault; f != nil && (f.Kind == KindShort308 || (f.Kind == KindReset && f.AfterBytes > 0)) {
		keep := f.Persist
		if keep <= 0 && f.Kind == KindShort308 {
			keep = n / 2
		} else if keep <= 0 {
			keep = f.AfterBytes
		}
		limit = min(limit, alignDown(cr.start+keep))
	}
	return limit, nil
}

func alignDown(n int64) int64 { return n - n%quantum }

// respond308 says "resume incomplete": Range covers the persisted bytes and
// is absent when none are. A client sending X-GUploader-No-308: yes gets 200
// with X-Http-Status-Code-Override: 308 instead, as GCS does for clients
// whose HTTP stack treats 308 as a redirect.
func (x *exchange) respond308(persisted int64) {
	h := x.w.Header()
	if persisted > 0 {
		h.Set("Range", "bytes=0-"+strconv.FormatInt(persisted-1, 10))
	}
	h.Set("Content-Length", "0")
	if strings.EqualFold(x.r.Header.Get("X-GUploader-No-308"), "yes") {
		h.Set("X-Http-Status-Code-Override", "308")
		x.w.WriteHeader(http.StatusOK)
		return
	}
	x.w.WriteHeader(http.StatusPermanentRedirect)
}

func (sess *session) cancel() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.epoch++
	if sess.state == stActive {
		sess.state = stCancelled
		sess.abortContent()
	}
}
