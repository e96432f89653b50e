package fakegcs

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Access control, at the level GCS documents it and the conformance suite
// exercises it: bucket, default object and object ACLs (lists of entity and
// role), and a bucket's IAM policy. fakegcs enforces none of it: every
// caller may do everything. What it keeps is returned as GCS returns it.

// projectNumber is the number of fakegcs's one project.
const projectNumber = "123456789"

// aclEntry is one access control entry.
type aclEntry struct{ entity, role string }

// defaultBucketACL is GCS's projectPrivate: the project's teams.
func defaultBucketACL() []aclEntry {
	return []aclEntry{
		{"project-owners-" + projectNumber, "OWNER"},
		{"project-editors-" + projectNumber, "OWNER"},
		{"project-viewers-" + projectNumber, "READER"},
	}
}

// defaultObjectACL is the default object ACL of a new bucket (projectPrivate).
func defaultObjectACL() []aclEntry {
	return []aclEntry{
		{"project-owners-" + projectNumber, "OWNER"},
		{"project-editors-" + projectNumber, "OWNER"},
		{"project-viewers-" + projectNumber, "READER"},
	}
}

// canonicalEntity spells an entity as GCS stores it.
func canonicalEntity(e string) string {
	if e == "allUsers" || e == "allAuthenticatedUsers" {
		return e
	}
	return strings.ToLower(e)
}

// validEntity reports whether e has one of GCS's entity forms.
func validEntity(e string) bool {
	if e == "allUsers" || e == "allAuthenticatedUsers" {
		return true
	}
	for _, p := range []string{"user-", "group-", "domain-", "project-owners-", "project-editors-", "project-viewers-"} {
		if strings.HasPrefix(e, p) && len(e) > len(p) {
			return true
		}
	}
	return false
}

var validRoles = map[string]bool{"OWNER": true, "WRITER": true, "READER": true}

// aclTarget is the ACL a request addresses: a bucket's, a bucket's default
// object ACL, or an object's.
type aclTarget struct {
	kind   string // "bucket", "default", "object"
	bucket string
	object string
}

// aclOf returns the list the target names (nil, error when its bucket or
// object does not exist), with s.mu held.
func (s *Server) aclOf(t aclTarget) (*[]aclEntry, *object, *apiError) {
	b, ok := s.buckets[t.bucket]
	if !ok {
		return nil, nil, errNoBucket
	}
	switch t.kind {
	case "bucket":
		return &b.acl, nil, nil
	case "default":
		return &b.defaultACL, nil, nil
	}
	o := b.objects.get(t.object)
	if o == nil {
		return nil, nil, errf(404, "notFound", "No such object: %s/%s", t.bucket, t.object)
	}
	return &o.acl, o, nil
}

// aclJSON is a BucketAccessControl or ObjectAccessControl resource.
func aclJSON(t aclTarget, e aclEntry, gen int64) map[string]any {
	m := map[string]any{"bucket": t.bucket, "entity": e.entity, "role": e.role, "etag": "CAE="}
	id := t.bucket + "/" + e.entity
	m["kind"] = "storage#objectAccessControl"
	switch t.kind {
	case "bucket":
		m["kind"] = "storage#bucketAccessControl"
	case "object":
		m["object"], m["generation"] = t.object, strconv.FormatInt(gen, 10)
		id = t.bucket + "/" + t.object + "/" + strconv.FormatInt(gen, 10) + "/" + e.entity
	}
	m["id"] = id
	if email, ok := strings.CutPrefix(e.entity, "user-"); ok {
		m["email"] = email
	}
	if team, ok := strings.CutPrefix(e.entity, "project-"); ok {
		name, num, _ := strings.Cut(team, "-")
		m["projectTeam"] = map[string]string{"projectNumber": num, "team": name}
	}
	return m
}

// serveACL answers every ACL request: list (GET, no entity), insert (POST),
// get, update and patch (GET, PUT, PATCH of an entity), delete.
func (s *Server) serveACL(x *exchange) {
	t := x.ri.acl
	entity, role, ok := readACLEntry(x)
	if !ok {
		return
	}
	entity = canonicalEntity(entity)
	s.mu.Lock()
	defer s.mu.Unlock()
	list, o, apiErr := s.aclOf(t)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	gen := int64(0)
	if o != nil {
		gen = o.attrs.Generation
	}
	i := slices.IndexFunc(*list, func(e aclEntry) bool { return e.entity == entity })
	switch {
	case x.r.Method == http.MethodGet && x.ri.entity == "":
		items := make([]map[string]any, 0, len(*list))
		for _, e := range *list {
			items = append(items, aclJSON(t, e, gen))
		}
		kind := "storage#objectAccessControls"
		if t.kind == "bucket" {
			kind = "storage#bucketAccessControls"
		}
		writeJSON(x.w, http.StatusOK, map[string]any{"kind": kind, "items": items})
	case x.r.Method == http.MethodGet || x.r.Method == http.MethodDelete:
		if i < 0 {
			x.fail(errf(404, "notFound", "No ACL entry for %s", entity))
			return
		}
		if x.r.Method == http.MethodGet {
			writeJSON(x.w, http.StatusOK, aclJSON(t, (*list)[i], gen))
			return
		}
		*list = append((*list)[:i], (*list)[i+1:]...)
		x.w.WriteHeader(http.StatusNoContent)
	default: // insert, update and patch set the entity's role
		e := aclEntry{entity, role}
		if i < 0 {
			*list = append(*list, e)
		} else {
			(*list)[i] = e
		}
		if o != nil {
			o.attrs.Metageneration++
			o.attrs.Updated = s.now()
		} else {
			b := s.buckets[t.bucket]
			b.metageneration++
			b.updated = s.now()
		}
		writeJSON(x.w, http.StatusOK, aclJSON(t, e, gen))
	}
}

// readACLEntry reads the entity an ACL request names and, for an insert,
// update or patch, the role it sets, refusing invalid ones (the failure is
// sent; ok false).
func readACLEntry(x *exchange) (entity, role string, ok bool) {
	entity = x.ri.entity
	if x.r.Method != http.MethodPost && x.r.Method != http.MethodPut && x.r.Method != http.MethodPatch {
		return entity, "", true
	}
	var body struct{ Entity, Role string }
	if !x.readJSON(&body) {
		return "", "", false
	}
	if x.r.Method == http.MethodPost {
		entity = body.Entity
	}
	if !validEntity(entity) {
		x.fail(errf(400, "invalid", "Invalid entity %q", entity))
		return "", "", false
	}
	if !validRoles[body.Role] {
		x.fail(errf(400, "invalid", "Invalid role %q: use OWNER, WRITER or READER", body.Role))
		return "", "", false
	}
	return entity, body.Role, true
}

// iamPolicy is a bucket's IAM policy.
type iamPolicy struct {
	Version  int          `json:"version"`
	Bindings []iamBinding `json:"bindings"`
	etag     int64
}

type iamBinding struct {
	Role      string          `json:"role"`
	Members   []string        `json:"members"`
	Condition json.RawMessage `json:"condition,omitempty"`
}

// legacyRoles maps an ACL role to the IAM role a new bucket's policy grants.
var legacyRoles = map[string]string{
	"OWNER": "roles/storage.legacyBucketOwner", "WRITER": "roles/storage.legacyBucketWriter",
	"READER": "roles/storage.legacyBucketReader",
}

// policyOf returns b's policy, made from its ACL when never set.
func policyOf(b *bucket) *iamPolicy {
	if b.iam == nil {
		p := &iamPolicy{Version: 1, etag: 1}
		for _, e := range b.acl {
			p.Bindings = append(p.Bindings, iamBinding{Role: legacyRoles[e.role], Members: []string{e.entity}})
		}
		b.iam = p
	}
	return b.iam
}

func policyJSON(bucketName string, p *iamPolicy) map[string]any {
	bindings := p.Bindings
	if bindings == nil {
		bindings = []iamBinding{}
	}
	return map[string]any{
		"kind": "storage#policy", "resourceId": "projects/_/buckets/" + bucketName,
		"version": p.Version, "bindings": bindings, "etag": iamEtag(p.etag),
	}
}

func iamEtag(n int64) string { return "CA" + strconv.FormatInt(n, 36) + "=" }

// serveIAM answers GET (getIamPolicy) and PUT (setIamPolicy) of
// /b/BUCKET/iam. A policy sent with an etag must match the current one
// (GCS's precondition, which makes setIamPolicy safe to retry); without
// one, the policy replaces whatever is there.
func (s *Server) serveIAM(x *exchange) {
	var in struct {
		Version  int          `json:"version"`
		Bindings []iamBinding `json:"bindings"`
		Etag     string       `json:"etag"`
	}
	if x.r.Method == http.MethodPut {
		if !x.readJSON(&in) {
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[x.ri.bucket]
	if !ok {
		x.fail(errNoBucket)
		return
	}
	p := policyOf(b)
	if x.r.Method == http.MethodPut {
		if in.Etag != "" && in.Etag != iamEtag(p.etag) {
			x.fail(errPrecondition)
			return
		}
		for _, bd := range in.Bindings {
			if !strings.HasPrefix(bd.Role, "roles/") || len(bd.Members) == 0 {
				x.fail(errf(400, "invalid", "Invalid binding: role %q with %d members", bd.Role, len(bd.Members)))
				return
			}
		}
		b.iam = &iamPolicy{Version: max(in.Version, 1), Bindings: in.Bindings, etag: p.etag + 1}
		p = b.iam
	}
	writeJSON(x.w, http.StatusOK, policyJSON(b.name, p))
}

// serveTestIAM answers GET /b/BUCKET/iam/testPermissions: fakegcs grants
// every storage permission asked for.
func (s *Server) serveTestIAM(x *exchange) {
	if !s.hasBucket(x) {
		return
	}
	granted := []string{}
	for _, p := range x.r.URL.Query()["permissions"] {
		if !strings.HasPrefix(p, "storage.") {
			x.fail(errf(400, "invalid", "Permission %q is not a Cloud Storage permission", p))
			return
		}
		granted = append(granted, p)
	}
	sort.Strings(granted)
	writeJSON(x.w, http.StatusOK, map[string]any{"kind": "storage#testIamPermissionsResponse", "permissions": granted})
}

// classifyBucketSub routes /b/BUCKET/{acl,defaultObjectAcl,iam,
// notificationConfigs,lockRetentionPolicy}/...; it reports false for any
// other path.
func (s *Server) classifyBucketSub(m string, p []string, ri *reqInfo) bool {
	ri.bucket = p[1]
	rest := p[2:]
	switch rest[0] {
	case "acl", "defaultObjectAcl":
		kind, op := "bucket", "storage.bucket_acl."
		if rest[0] == "defaultObjectAcl" {
			kind, op = "default", "storage.default_object_acl."
		}
		return s.classifyACL(m, rest[1:], aclTarget{kind: kind, bucket: ri.bucket}, op, ri)
	case "iam":
		switch {
		case len(rest) == 1:
			ri.op, ri.handle = pick(m, map[string]opHandler{
				"GET": {"storage.buckets.getIamPolicy", s.serveIAM},
				"PUT": {"storage.buckets.setIamPolicy", s.serveIAM},
			})
		case len(rest) == 2 && rest[1] == "testPermissions":
			ri.op, ri.handle = pick(m, map[string]opHandler{"GET": {"storage.buckets.testIamPermissions", s.serveTestIAM}})
		default:
			return false
		}
	case "notificationConfigs":
		switch len(rest) {
		case 1:
			ri.op, ri.handle = pick(m, map[string]opHandler{
				"GET":  {"storage.notifications.list", s.serveNotifications},
				"POST": {"storage.notifications.insert", s.serveNotifications},
			})
		case 2:
			ri.entity = rest[1]
			ri.op, ri.handle = pick(m, map[string]opHandler{
				"GET":    {"storage.notifications.get", s.serveNotifications},
				"DELETE": {"storage.notifications.delete", s.serveNotifications},
			})
		default:
			return false
		}
	case "lockRetentionPolicy":
		if len(rest) != 1 {
			return false
		}
		ri.op, ri.handle = pick(m, map[string]opHandler{"POST": {"storage.buckets.lockRetentionPolicy", s.serveLockRetention}})
	default:
		return false
	}
	return true
}

// classifyACL routes the part of an ACL path after "acl": nothing (list,
// insert) or an entity.
func (s *Server) classifyACL(m string, rest []string, t aclTarget, op string, ri *reqInfo) bool {
	ri.acl = t
	switch len(rest) {
	case 0:
		ri.op, ri.handle = pick(m, map[string]opHandler{"GET": {op + "list", s.serveACL}, "POST": {op + "insert", s.serveACL}})
	case 1:
		ri.entity = rest[0]
		ri.op, ri.handle = pick(m, map[string]opHandler{
			"GET": {op + "get", s.serveACL}, "PUT": {op + "update", s.serveACL},
			"PATCH": {op + "patch", s.serveACL}, "DELETE": {op + "delete", s.serveACL},
		})
	default:
		return false
	}
	return true
}

// objectACLPath splits an object path ending in "acl" or "acl/ENTITY".
func objectACLPath(rest []string) (object string, entity []string, ok bool) {
	n := len(rest)
	switch {
	case n >= 2 && rest[n-1] == "acl":
		return strings.Join(rest[:n-1], "/"), nil, true
	case n >= 3 && rest[n-2] == "acl":
		return strings.Join(rest[:n-2], "/"), rest[n-1:], true
	}
	return "", nil, false
}

// selfLink is a resource's URL, for the few resources that carry one.
func selfLink(x *exchange, path ...string) string {
	for i, p := range path {
		path[i] = url.PathEscape(p)
	}
	return fmt.Sprintf("%s/storage/v1/%s", x.baseURL(), strings.Join(path, "/"))
}
