package fakegcs

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"
)

// Project-level resources (HMAC keys, the service account), bucket
// notifications and retention policies, as GCS documents them.

// serviceAccount is the GCS service agent of fakegcs's project.
const serviceAccount = "service-" + projectNumber + "@gs-project-accounts.iam.gserviceaccount.com"

// hmacKey is an HMAC key's metadata and secret.
type hmacKey struct {
	accessID, project, email, state, secret string
	created, updated                        time.Time
	etag                                    int64
}

func (k *hmacKey) json() map[string]any {
	return map[string]any{
		"kind": "storage#hmacKeyMetadata", "id": k.project + "/" + k.accessID, "accessId": k.accessID,
		"projectId": k.project, "serviceAccountEmail": k.email, "state": k.state,
		"timeCreated": formatTime(k.created), "updated": formatTime(k.updated), "etag": iamEtag(k.etag),
	}
}

// classifyProject routes /projects/PROJECT/{hmacKeys[/ID],serviceAccount}.
func (s *Server) classifyProject(m string, p []string, ri *reqInfo) {
	ri.op, ri.handle = "unknown", serveNotImplemented
	if len(p) < 3 {
		return
	}
	ri.project = p[1]
	switch {
	case len(p) == 3 && p[2] == "serviceAccount":
		ri.op, ri.handle = pick(m, map[string]opHandler{"GET": {"storage.serviceaccount.get", s.serveServiceAccount}})
	case len(p) == 3 && p[2] == "hmacKeys":
		ri.op, ri.handle = pick(m, map[string]opHandler{
			"GET": {"storage.hmacKey.list", s.serveHMAC}, "POST": {"storage.hmacKey.create", s.serveHMAC},
		})
	case len(p) == 4 && p[2] == "hmacKeys":
		ri.entity = p[3]
		ri.op, ri.handle = pick(m, map[string]opHandler{
			"GET": {"storage.hmacKey.get", s.serveHMAC}, "PUT": {"storage.hmacKey.update", s.serveHMAC},
			"DELETE": {"storage.hmacKey.delete", s.serveHMAC},
		})
	}
}

func (s *Server) serveServiceAccount(x *exchange) {
	writeJSON(x.w, http.StatusOK, map[string]any{"kind": "storage#serviceAccount", "email_address": serviceAccount})
}

// serveHMAC answers the HMAC key methods. A key is created ACTIVE; it must be
// made INACTIVE before it can be deleted; an update that carries an etag
// must match the key's (GCS's precondition for hmacKeys.update).
// createHMAC makes a new ACTIVE key for the service account email (s.mu
// held).
func (s *Server) createHMAC(x *exchange, email string, now time.Time) {
	if email == "" {
		x.fail(errf(400, "required", "Required parameter: serviceAccountEmail"))
		return
	}
	var id [12]byte
	var secret [30]byte
	_, _ = rand.Read(id[:])
	_, _ = rand.Read(secret[:])
	k := &hmacKey{accessID: "GOOG1E" + hex.EncodeToString(id[:]), project: x.ri.project, email: email,
		state: "ACTIVE", secret: base64.StdEncoding.EncodeToString(secret[:]), created: now, updated: now, etag: 1}
	s.hmacKeys[k.accessID] = k
	writeJSON(x.w, http.StatusOK, map[string]any{"kind": "storage#hmacKey", "metadata": k.json(), "secret": k.secret})
}

func (s *Server) serveHMAC(x *exchange) {
	q := x.r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if x.ri.entity == "" && x.r.Method == http.MethodPost {
		s.createHMAC(x, q.Get("serviceAccountEmail"), now)
		return
	}
	if x.ri.entity == "" { // list
		items := []map[string]any{}
		for _, k := range s.hmacKeys {
			if k.project != x.ri.project || (k.state == "DELETED" && q.Get("showDeletedKeys") != "true") ||
				(q.Get("serviceAccountEmail") != "" && q.Get("serviceAccountEmail") != k.email) {
				continue
			}
			items = append(items, k.json())
		}
		writeJSON(x.w, http.StatusOK, map[string]any{"kind": "storage#hmacKeysMetadata", "items": items})
		return
	}
	k, ok := s.hmacKeys[x.ri.entity]
	if !ok || k.project != x.ri.project {
		x.fail(errf(404, "notFound", "Access ID %s not found in project %s", x.ri.entity, x.ri.project))
		return
	}
	switch x.r.Method {
	case http.MethodGet:
		writeJSON(x.w, http.StatusOK, k.json())
	case http.MethodDelete:
		if k.state != "INACTIVE" {
			x.fail(errf(400, "invalid", "Cannot delete keys in 'ACTIVE' state: make the key INACTIVE first"))
			return
		}
		k.state, k.updated = "DELETED", now
		x.w.WriteHeader(http.StatusNoContent)
	case http.MethodPut:
		var in struct{ State, Etag string }
		if !x.readJSON(&in) {
			return
		}
		switch {
		case in.Etag != "" && in.Etag != iamEtag(k.etag):
			x.fail(errPrecondition)
		case in.State != "ACTIVE" && in.State != "INACTIVE":
			x.fail(errf(400, "invalid", "Invalid state %q: use ACTIVE or INACTIVE", in.State))
		case k.state == "DELETED":
			x.fail(errf(400, "invalid", "The key is deleted"))
		default:
			if k.state != in.State {
				k.state, k.updated, k.etag = in.State, now, k.etag+1
			}
			writeJSON(x.w, http.StatusOK, k.json())
		}
	}
}

// notification is a bucket's Pub/Sub notification configuration.
type notification struct {
	id   string
	conf map[string]any
}

// serveNotifications answers notificationConfigs: insert, list, get, delete.
func (s *Server) serveNotifications(x *exchange) {
	var in map[string]any
	if x.r.Method == http.MethodPost {
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
	switch {
	case x.r.Method == http.MethodPost:
		for _, f := range []string{"topic", "payload_format"} {
			if v, _ := in[f].(string); v == "" {
				x.fail(errf(400, "required", "Required: %s", f))
				return
			}
		}
		b.lastNotification++
		id := strconv.Itoa(b.lastNotification)
		conf := map[string]any{}
		for _, f := range []string{"topic", "payload_format", "event_types", "custom_attributes", "object_name_prefix"} {
			if v, ok := in[f]; ok {
				conf[f] = v
			}
		}
		conf["kind"], conf["id"], conf["etag"] = "storage#notification", id, id
		conf["selfLink"] = selfLink(x, "b", b.name, "notificationConfigs", id)
		b.notifications = append(b.notifications, &notification{id, conf})
		writeJSON(x.w, http.StatusOK, conf)
	case x.ri.entity == "":
		items := []map[string]any{}
		for _, n := range b.notifications {
			items = append(items, n.conf)
		}
		writeJSON(x.w, http.StatusOK, map[string]any{"kind": "storage#notifications", "items": items})
	default:
		for i, n := range b.notifications {
			if n.id != x.ri.entity {
				continue
			}
			if x.r.Method == http.MethodGet {
				writeJSON(x.w, http.StatusOK, n.conf)
			} else {
				b.notifications = append(b.notifications[:i], b.notifications[i+1:]...)
				x.w.WriteHeader(http.StatusNoContent)
			}
			return
		}
		x.fail(errf(404, "notFound", "Notification %s not found", x.ri.entity))
	}
}

// retention is a bucket's retention policy.
type retention struct {
	period    int64 // seconds
	effective time.Time
	locked    bool
}

// serveLockRetention locks the bucket's retention policy. GCS requires
// ifMetagenerationMatch, which makes the call safe to retry.
func (s *Server) serveLockRetention(x *exchange) {
	c, apiErr := parseConds(x.r.URL.Query(), nil, "if")
	if apiErr == nil && c.metaMatch == nil {
		apiErr = errf(400, "required", "Required parameter: ifMetagenerationMatch")
	}
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	s.mu.Lock()
	b, ok := s.buckets[x.ri.bucket]
	switch {
	case !ok:
		apiErr = errNoBucket
	case c.checkBucket(b) != nil:
		apiErr = errPrecondition
	default:
		if b.retention == nil {
			b.retention = &retention{effective: s.now()}
		}
		if !b.retention.locked {
			b.retention.locked = true
			b.metageneration++
			b.updated = s.now()
		}
	}
	s.mu.Unlock()
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	s.serveBucketGet(x)
}
