package fakegcs

import (
	"net/http"
	"net/url"
	"strings"
)

// reqInfo is what a request is, decided before it is served: the operation
// (as a JSON API method ID), its target and, for uploads, where in the
// resumable protocol it stands. Faults, counters and the retry-test API all
// match on it.
type reqInfo struct {
	op        string
	bucket    string
	object    string
	phase     string // Phase* for resumable uploads, else ""
	offset    int64  // chunk start or download Range start
	hasOffset bool
	session   *session
	dstBucket string // copy/rewrite destination
	dstObject string
	// rewriteToken says an objects.rewrite call continues an earlier one.
	rewriteToken bool
	xml          bool      // XML API request: errors are XML
	control      bool      // fakegcs's own API: no faults, not counted
	acl          aclTarget // the ACL an ACL request addresses
	entity       string    // an ACL entity, HMAC access ID or notification ID
	project      string    // a project-level request's project
	handle       func(*exchange)
}

// splitPath returns the unescaped segments of the request path, keeping
// "%2F" inside an object name a part of its segment.
func splitPath(r *http.Request) []string {
	raw := strings.Trim(r.URL.EscapedPath(), "/")
	if raw == "" {
		return nil
	}
	parts := strings.Split(raw, "/")
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			parts[i] = u
		}
	}
	return parts
}

// classify decides the operation and handler of a request.
func (s *Server) classify(r *http.Request) *reqInfo {
	p := splitPath(r)
	ri := &reqInfo{}
	switch {
	case len(p) > 0 && p[0] == "_fakegcs":
		ri.control, ri.op, ri.handle = true, "fakegcs.control", s.serveControl
	case len(p) > 0 && (p[0] == "retry_test" || p[0] == "retry_tests"):
		ri.control, ri.op, ri.handle = true, "fakegcs.retry_test", s.serveRetryTestAPI
	case hasPrefix(p, "storage", "v1"):
		s.classifyJSON(r, p[2:], ri)
	case hasPrefix(p, "upload", "storage", "v1"):
		s.classifyUpload(r, p[3:], ri)
	case hasPrefix(p, "resumable", "upload", "storage", "v1"):
		s.classifyUpload(r, p[4:], ri)
	case hasPrefix(p, "download", "storage", "v1"):
		s.classifyJSON(r, p[3:], ri)
		if ri.op != "storage.objects.get" {
			ri.op, ri.handle = "unknown", serveNotImplemented
		}
	case len(p) >= 2 && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		ri.op, ri.bucket, ri.object, ri.xml = "storage.objects.get", p[0], strings.Join(p[1:], "/"), true
		ri.handle = s.serveXMLGet
		ri.offset, ri.hasOffset = rangeStart(r)
		ri.phase = mediaPhase(r, true)
	default:
		ri.op, ri.handle = "unknown", serveNotImplemented
	}
	return ri
}

func hasPrefix(p []string, prefix ...string) bool {
	if len(p) < len(prefix) {
		return false
	}
	for i, s := range prefix {
		if p[i] != s {
			return false
		}
	}
	return true
}

// classifyJSON handles paths after "/storage/v1/".
func (s *Server) classifyJSON(r *http.Request, p []string, ri *reqInfo) {
	m := r.Method
	ri.op, ri.handle = "unknown", serveNotImplemented
	if len(p) > 0 && p[0] == "projects" {
		s.classifyProject(m, p, ri)
		return
	}
	if len(p) == 0 || p[0] != "b" {
		return
	}
	switch {
	case len(p) == 1:
		ri.op, ri.handle = pick(m, map[string]opHandler{
			"GET":  {"storage.buckets.list", s.serveBucketList},
			"POST": {"storage.buckets.insert", s.serveBucketInsert},
		})
		return
	case len(p) == 2:
		ri.bucket = p[1]
		ri.op, ri.handle = pick(m, map[string]opHandler{
			"GET":    {"storage.buckets.get", s.serveBucketGet},
			"DELETE": {"storage.buckets.delete", s.serveBucketDelete},
			"PATCH":  {"storage.buckets.patch", s.serveBucketPatch},
			"PUT":    {"storage.buckets.update", s.serveBucketPatch},
		})
		return
	case len(p) == 3 && p[2] == "storageLayout":
		ri.bucket = p[1]
		ri.op, ri.handle = pick(m, map[string]opHandler{"GET": {"storage.buckets.getStorageLayout", s.serveStorageLayout}})
		return
	case p[2] == "folders" || p[2] == "operations":
		if !s.classifyFolders(m, p, ri) {
			ri.op, ri.handle = "unknown", serveNotImplemented
		}
		return
	case p[2] != "o":
		if !s.classifyBucketSub(m, p, ri) {
			ri.op, ri.handle = "unknown", serveNotImplemented
		}
		return
	}
	ri.bucket = p[1]
	s.classifyObject(r, p[3:], ri)
}

// classifyObject handles paths after "/storage/v1/b/BUCKET/o".
func (s *Server) classifyObject(r *http.Request, rest []string, ri *reqInfo) {
	m := r.Method
	if len(rest) == 0 {
		ri.op, ri.handle = pick(m, map[string]opHandler{"GET": {"storage.objects.list", s.serveObjectList}})
		return
	}
	if object, entity, ok := objectACLPath(rest); ok {
		ri.object = object
		s.classifyACL(m, entity, aclTarget{kind: "object", bucket: ri.bucket, object: object}, "storage.object_acl.", ri)
		return
	}
	if m == http.MethodPost {
		s.classifyObjectPost(rest, ri)
		ri.rewriteToken = r.URL.Query().Get("rewriteToken") != ""
		return
	}
	ri.object = strings.Join(rest, "/")
	ri.op, ri.handle = pick(m, map[string]opHandler{
		"GET":    {"storage.objects.get", s.serveObjectGet},
		"DELETE": {"storage.objects.delete", s.serveObjectDelete},
		"PATCH":  {"storage.objects.patch", s.serveObjectPatch},
		"PUT":    {"storage.objects.update", s.serveObjectUpdate},
	})
	if ri.op == "storage.objects.get" {
		ri.offset, ri.hasOffset = rangeStart(r)
		ri.phase = mediaPhase(r, false)
	}
}

// classifyObjectPost handles compose, moveTo, restore, copyTo and rewriteTo.
func (s *Server) classifyObjectPost(rest []string, ri *reqInfo) {
	if n := len(rest); n >= 2 && rest[n-1] == "compose" {
		ri.object = strings.Join(rest[:n-1], "/")
		ri.op, ri.handle = "storage.objects.compose", s.serveCompose
		return
	}
	if src, dst, ok := movePath(rest); ok {
		ri.object, ri.dstBucket, ri.dstObject = src, ri.bucket, dst
		ri.op, ri.handle = "storage.objects.move", s.serveMove
		return
	}
	if n := len(rest); n >= 2 && rest[n-1] == "restore" {
		ri.object = strings.Join(rest[:n-1], "/")
		ri.op, ri.handle = "storage.objects.restore", s.serveRestore
		return
	}
	for i, seg := range rest {
		if (seg == "copyTo" || seg == "rewriteTo") && i > 0 && len(rest) >= i+5 && rest[i+1] == "b" && rest[i+3] == "o" {
			ri.object = strings.Join(rest[:i], "/")
			ri.dstBucket, ri.dstObject = rest[i+2], strings.Join(rest[i+4:], "/")
			if seg == "copyTo" {
				ri.op, ri.handle = "storage.objects.copy", s.serveCopy
			} else {
				ri.op, ri.handle = "storage.objects.rewrite", s.serveRewrite
			}
			return
		}
	}
}

// servedOps are the JSON API methods fakegcs serves; /retry_test refuses
// instructions for any other.
var servedOps = map[string]bool{
	"storage.buckets.delete": true, "storage.buckets.get": true, "storage.buckets.insert": true,
	"storage.buckets.list": true, "storage.buckets.patch": true, "storage.buckets.update": true,
	"storage.buckets.getStorageLayout": true,
	"storage.buckets.getIamPolicy":     true, "storage.buckets.setIamPolicy": true,
	"storage.buckets.testIamPermissions": true, "storage.buckets.lockRetentionPolicy": true,
	"storage.bucket_acl.list": true, "storage.bucket_acl.insert": true, "storage.bucket_acl.get": true,
	"storage.bucket_acl.update": true, "storage.bucket_acl.patch": true, "storage.bucket_acl.delete": true,
	"storage.default_object_acl.list": true, "storage.default_object_acl.insert": true,
	"storage.default_object_acl.get": true, "storage.default_object_acl.update": true,
	"storage.default_object_acl.patch": true, "storage.default_object_acl.delete": true,
	"storage.object_acl.list": true, "storage.object_acl.insert": true, "storage.object_acl.get": true,
	"storage.object_acl.update": true, "storage.object_acl.patch": true, "storage.object_acl.delete": true,
	"storage.hmacKey.create": true, "storage.hmacKey.list": true, "storage.hmacKey.get": true,
	"storage.hmacKey.update": true, "storage.hmacKey.delete": true,
	"storage.notifications.insert": true, "storage.notifications.list": true,
	"storage.notifications.get": true, "storage.notifications.delete": true,
	"storage.serviceaccount.get": true,
	"storage.objects.compose":    true, "storage.objects.copy": true, "storage.objects.delete": true,
	"storage.objects.get": true, "storage.objects.insert": true, "storage.objects.list": true,
	"storage.objects.patch": true, "storage.objects.rewrite": true, "storage.objects.update": true,
	"storage.objects.move":    true,
	"storage.objects.restore": true,
	"storage.folders.insert":  true, "storage.folders.get": true, "storage.folders.list": true,
	"storage.folders.delete": true, "storage.folders.rename": true, "storage.operations.get": true,
}

type opHandler struct {
	op     string
	handle func(*exchange)
}

func pick(method string, m map[string]opHandler) (string, func(*exchange)) {
	if h, ok := m[method]; ok {
		return h.op, h.handle
	}
	return "unknown", serveNotImplemented
}

// classifyUpload handles paths after "/upload/storage/v1/" (and the
// "/resumable/upload/storage/v1/" alias): inserts, and requests on a
// resumable session identified by upload_id.
func (s *Server) classifyUpload(r *http.Request, p []string, ri *reqInfo) {
	ri.op, ri.handle = "storage.objects.insert", serveNotImplemented
	if len(p) != 3 || p[0] != "b" || p[2] != "o" {
		ri.op = "unknown"
		return
	}
	ri.bucket = p[1]
	q := r.URL.Query()
	if id := q.Get("upload_id"); id != "" {
		s.classifySession(r, id, ri)
		return
	}
	ri.object = q.Get("name")
	if r.Method != http.MethodPost {
		return
	}
	switch q.Get("uploadType") {
	case "resumable":
		ri.phase, ri.handle = PhaseInitiate, s.serveInitiate
	case "multipart":
		ri.handle = s.serveMultipart
	case "media", "":
		ri.handle = s.serveMedia
	}
}

// classifySession places a session request in the protocol from its method
// and Content-Range, so faults can target e.g. "the chunk at offset 8 MiB".
func (s *Server) classifySession(r *http.Request, id string, ri *reqInfo) {
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	ri.session = sess
	ri.handle = s.serveSession
	if sess != nil {
		ri.object = sess.name
	}
	if r.Method == http.MethodDelete {
		ri.phase = PhaseCancel
		return
	}
	cr, err := parseContentRange(r.Header.Get("Content-Range"), r.ContentLength)
	if err != nil {
		ri.phase = PhaseChunk
		return
	}
	ri.phase = PhaseChunk
	if cr.query {
		ri.phase = PhaseStatus
	} else {
		ri.offset, ri.hasOffset = cr.start, true
	}
	if cr.total >= 0 && (cr.query || cr.end+1 == cr.total) {
		ri.phase = PhaseFinal
	}
}

func serveNotImplemented(x *exchange) { x.fail(errNotImplemented) }
