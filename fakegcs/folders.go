package fakegcs

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	raw "google.golang.org/api/storage/v1"
)

// Hierarchical namespace (HNS) buckets and their folders, as the JSON API
// documents them (https://cloud.google.com/storage/docs/json_api/v1/folders,
// .../v1/operations): a bucket inserted with hierarchicalNamespace.enabled
// (which requires uniform bucket-level access) keeps real folders. An
// object write creates the folders above it; a folder outlives its objects
// and is deleted only when empty; renameFolder moves a folder with
// everything under it in one step and answers with a long-running
// operation that the client polls at b/BUCKET/operations/ID.

// CreateHNSBucket creates a bucket with hierarchical namespace (and the
// uniform bucket-level access GCS requires of one), as a buckets.insert
// with hierarchicalNamespace.enabled does; it is an error if a bucket of
// that name exists without it.
func (s *Server) CreateHNSBucket(name string) error {
	if err := s.CreateBucket(name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[name]
	if b.objects.len() > 0 && !b.hns {
		return fmt.Errorf("fakegcs: bucket %s exists with objects and a flat namespace", name)
	}
	b.hns = true
	return nil
}

// folder is one folder of an HNS bucket; its name ends with "/".
type folder struct {
	name             string
	created, updated time.Time
	metageneration   int64
}

// renameOp is a renameFolder operation. fakegcs applies the rename when it
// is asked (atomically, under s.mu) and reports the operation not done
// until it is first polled, so a client that never polls is caught.
type renameOp struct {
	id, bucket, src, dst string
	polled               bool
	created              time.Time
}

// classifyFolders handles paths "b/BUCKET/folders..." and
// "b/BUCKET/operations/ID"; it reports false for any other.
func (s *Server) classifyFolders(m string, p []string, ri *reqInfo) bool {
	ri.bucket = p[1]
	switch {
	case p[2] == "operations" && len(p) == 4:
		ri.entity = p[3]
		ri.op, ri.handle = pick(m, map[string]opHandler{"GET": {"storage.operations.get", s.serveOperationGet}})
	case p[2] != "folders":
		return false
	case len(p) == 3:
		ri.op, ri.handle = pick(m, map[string]opHandler{
			"GET":  {"storage.folders.list", s.serveFolderList},
			"POST": {"storage.folders.insert", s.serveFolderInsert},
		})
	case len(p) == 4:
		ri.object = p[3]
		ri.op, ri.handle = pick(m, map[string]opHandler{
			"GET":    {"storage.folders.get", s.serveFolderGet},
			"DELETE": {"storage.folders.delete", s.serveFolderDelete},
		})
	case len(p) == 7 && p[4] == "renameTo" && p[5] == "folders":
		ri.object, ri.dstBucket, ri.dstObject = p[3], p[1], p[6]
		ri.op, ri.handle = pick(m, map[string]opHandler{"POST": {"storage.folders.rename", s.serveFolderRename}})
	default:
		return false
	}
	return true
}

// hnsBucket returns the bucket of x if it has hierarchical namespace; s.mu is held.
func (s *Server) hnsBucket(name string) (*bucket, *apiError) {
	b, ok := s.buckets[name]
	if !ok {
		return nil, errNoBucket
	}
	if !b.hns {
		return nil, errf(400, "invalid", "The bucket %s does not have hierarchical namespace enabled; folders exist only in buckets created with hierarchicalNamespace.enabled=true", name)
	}
	return b, nil
}

// folderName is the name of a folder as a request gives it, with the
// trailing "/" GCS folder names carry added when missing.
func folderName(n string) string {
	if n != "" && !strings.HasSuffix(n, "/") {
		n += "/"
	}
	return n
}

// parentFolder is the folder that holds name ("" at the bucket's root).
func parentFolder(name string) string {
	i := strings.LastIndex(strings.TrimSuffix(name, "/"), "/")
	if i < 0 {
		return ""
	}
	return name[:i+1]
}

// addParents creates the folders above an object or folder name that do
// not exist yet, as an object write into an HNS bucket does; s.mu is held.
func (b *bucket) addParents(name string, now time.Time) {
	if !b.hns {
		return
	}
	for p := parentFolder(name); p != ""; p = parentFolder(p) {
		if _, ok := b.folders[p]; ok {
			return
		}
		b.folders[p] = &folder{name: p, created: now, updated: now, metageneration: 1}
	}
}

func rawFolder(b *bucket, f *folder, base string) *raw.Folder {
	rf := &raw.Folder{
		Kind: "storage#folder", Bucket: b.name, Name: f.name, Id: b.name + "/" + f.name,
		SelfLink:   base + "/storage/v1/b/" + url.PathEscape(b.name) + "/folders/" + url.PathEscape(f.name),
		CreateTime: formatTime(f.created), UpdateTime: formatTime(f.updated), Metageneration: f.metageneration,
	}
	return rf
}

// serveFolderInsert answers POST b/BUCKET/folders: a folder whose parent
// exists (or, with recursive=true, with its missing parents); 409 if it
// exists.
func (s *Server) serveFolderInsert(x *exchange) {
	var req raw.Folder
	if !x.readJSON(&req) {
		return
	}
	name := folderName(req.Name)
	if name == "" || name == "/" || strings.Contains(name, "//") {
		x.fail(errf(400, "invalid", "Invalid folder name %q: a folder name is one or more non-empty segments ending with '/'", req.Name))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, apiErr := s.hnsBucket(x.ri.bucket)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	if _, ok := b.folders[name]; ok {
		x.fail(errf(409, "conflict", "The folder %s already exists.", name))
		return
	}
	parent := parentFolder(name)
	if _, ok := b.folders[parent]; parent != "" && !ok && x.r.URL.Query().Get("recursive") != "true" {
		x.fail(errf(404, "notFound", "The parent folder %s of %s does not exist; create it first or insert with recursive=true", parent, name))
		return
	}
	now := s.now()
	b.addParents(name, now)
	f := &folder{name: name, created: now, updated: now, metageneration: 1}
	b.folders[name] = f
	writeJSON(x.w, http.StatusOK, rawFolder(b, f, x.baseURL()))
}

// folderOf returns the request's bucket and the folder named in its path,
// or the error to answer: the bucket's, or 404 for a missing folder; s.mu is held.
func (s *Server) folderOf(x *exchange) (*bucket, *folder, *apiError) {
	b, apiErr := s.hnsBucket(x.ri.bucket)
	if apiErr != nil {
		return nil, nil, apiErr
	}
	name := folderName(x.ri.object)
	f, ok := b.folders[name]
	if !ok {
		return nil, nil, errf(404, "notFound", "The folder %s was not found.", name)
	}
	return b, f, nil
}

func (s *Server) serveFolderGet(x *exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, f, apiErr := s.folderOf(x)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	writeJSON(x.w, http.StatusOK, rawFolder(b, f, x.baseURL()))
}

// folderEmpty reports whether no object and no other folder is under name; s.mu is held.
func (b *bucket) folderEmpty(name string) bool {
	if it := b.objects.seek(name); it.valid() && strings.HasPrefix(it.name(), name) {
		return false
	}
	for n := range b.folders {
		if n != name && strings.HasPrefix(n, name) {
			return false
		}
	}
	return true
}

// serveFolderDelete deletes an empty folder, under ifMetagenerationMatch
// and ifMetagenerationNotMatch; a folder that holds objects or folders is
// refused (409), as GCS documents ("You can only delete an empty folder").
func (s *Server) serveFolderDelete(x *exchange) {
	q := x.r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	b, f, apiErr := s.folderOf(x)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	name := f.name
	if !metagenHolds(q, f.metageneration) {
		x.fail(errPrecondition)
		return
	}
	if !b.folderEmpty(name) {
		x.fail(errf(409, "conflict", "The folder %s is not empty: delete the objects and folders under it first.", name))
		return
	}
	delete(b.folders, name)
	x.w.WriteHeader(http.StatusNoContent)
}

// metagenHolds checks a folder request's metageneration preconditions.
func metagenHolds(q url.Values, mg int64) bool {
	if v := q.Get("ifMetagenerationMatch"); v != "" && v != strconv.FormatInt(mg, 10) {
		return false
	}
	if v := q.Get("ifMetagenerationNotMatch"); v != "" && v == strconv.FormatInt(mg, 10) {
		return false
	}
	return true
}

// serveFolderList answers GET b/BUCKET/folders with prefix (empty or ending
// with "/"), delimiter (only "/": the folders at the prefix and one level
// below it), startOffset, endOffset, pageSize and pageToken.
func (s *Server) serveFolderList(x *exchange) {
	q := x.r.URL.Query()
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		x.fail(errf(400, "invalid", "Invalid prefix %q: a folder listing's prefix is empty or ends with '/'", prefix))
		return
	}
	if delim != "" && delim != "/" {
		x.fail(errf(400, "invalid", "Invalid delimiter %q: the only supported value is '/'", delim))
		return
	}
	size := 1000
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			x.fail(errf(400, "invalid", "Invalid pageSize %q", v))
			return
		}
		if n > 0 && n < size {
			size = n
		}
	}
	after := ""
	if t := q.Get("pageToken"); t != "" {
		bs, err := base64.RawURLEncoding.DecodeString(t)
		if err != nil || len(bs) == 0 {
			x.fail(errf(400, "invalid", "Invalid pageToken"))
			return
		}
		after = string(bs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, apiErr := s.hnsBucket(x.ri.bucket)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	out := &raw.Folders{Kind: "storage#folders", Items: []*raw.Folder{}}
	for _, n := range b.folderNames() {
		rest, ok := strings.CutPrefix(n, prefix)
		switch {
		case !ok || n <= after,
			q.Get("startOffset") != "" && n < q.Get("startOffset"),
			q.Get("endOffset") != "" && n >= q.Get("endOffset"),
			delim != "" && strings.Count(rest, "/") > 1:
			continue
		}
		if len(out.Items) == size {
			out.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(out.Items[size-1].Name))
			break
		}
		out.Items = append(out.Items, rawFolder(b, b.folders[n], x.baseURL()))
	}
	writeJSON(x.w, http.StatusOK, out)
}

// folderNames are b's folders in name order; s.mu is held.
func (b *bucket) folderNames() []string {
	names := make([]string, 0, len(b.folders))
	for n := range b.folders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// serveFolderRename answers POST
// b/BUCKET/folders/SRC/renameTo/folders/DST: the source folder, its
// folders and its objects take the destination's name in one step. The
// destination must not exist and its parent must (404 otherwise, as a
// folder insert without recursive); it may not lie under the source.
func (s *Server) serveFolderRename(x *exchange) {
	src, dst := folderName(x.ri.object), folderName(x.ri.dstObject)
	q := x.r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	b, apiErr := s.hnsBucket(x.ri.bucket)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	f, ok := b.folders[src]
	switch {
	case !ok:
		apiErr = errf(404, "notFound", "The folder %s was not found.", src)
	case !metagenHolds(url.Values{"ifMetagenerationMatch": q["ifSourceMetagenerationMatch"],
		"ifMetagenerationNotMatch": q["ifSourceMetagenerationNotMatch"]}, f.metageneration):
		apiErr = errPrecondition
	case dst == "" || dst == "/" || strings.HasPrefix(dst, src):
		apiErr = errf(400, "invalid", "Cannot rename folder %s to %s: the destination must be a folder outside the source", src, dst)
	case b.folders[dst] != nil:
		apiErr = errf(409, "conflict", "The folder %s already exists.", dst)
	case parentFolder(dst) != "" && b.folders[parentFolder(dst)] == nil:
		apiErr = errf(404, "notFound", "The parent folder %s of %s does not exist.", parentFolder(dst), dst)
	}
	if apiErr == nil {
		apiErr = s.heldUnder(b, src)
	}
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	now := s.now()
	b.renameUnder(src, dst, now)
	s.lastOp++
	op := &renameOp{id: strconv.FormatInt(s.lastOp, 10), bucket: b.name, src: src, dst: dst, created: now}
	s.ops[op.id] = op
	writeJSON(x.w, http.StatusOK, s.rawOp(b, op, x.baseURL()))
}

// heldUnder refuses a rename that would move a held or retained object, as
// a delete of it would be refused; s.mu is held.
func (s *Server) heldUnder(b *bucket, src string) *apiError {
	for it := b.objects.seek(src); it.valid() && strings.HasPrefix(it.name(), src); it.next() {
		if apiErr := s.retained(b, b.objects.get(it.name())); apiErr != nil {
			return apiErr
		}
	}
	return nil
}

// renameUnder gives every folder and object under src the name under dst; s.mu is held.
func (b *bucket) renameUnder(src, dst string, now time.Time) {
	for n, f := range b.folders {
		if rest, ok := strings.CutPrefix(n, src); ok {
			delete(b.folders, n)
			f.name, f.updated = dst+rest, now
			f.metageneration++
			b.folders[f.name] = f
		}
	}
	var names []string // those under src, collected first: the index changes below
	for it := b.objects.seek(src); it.valid() && strings.HasPrefix(it.name(), src); it.next() {
		names = append(names, it.name())
	}
	for _, n := range names {
		o := b.objects.remove(n)
		o.attrs.Name, o.attrs.Updated = dst+strings.TrimPrefix(n, src), now
		b.objects.set(o.attrs.Name, o)
	}
}

// serveOperationGet answers GET b/BUCKET/operations/ID.
func (s *Server) serveOperationGet(x *exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[x.ri.bucket]
	if !ok {
		x.fail(errNoBucket)
		return
	}
	op := s.ops[x.ri.entity]
	if op == nil || op.bucket != b.name {
		x.fail(errf(404, "notFound", "The operation %s was not found.", x.ri.entity))
		return
	}
	op.polled = true
	writeJSON(x.w, http.StatusOK, s.rawOp(b, op, x.baseURL()))
}

// rawOp is op as a storage#operation: done (with the destination folder as
// its response) once it has been polled; s.mu is held.
func (s *Server) rawOp(b *bucket, op *renameOp, base string) map[string]any {
	out := map[string]any{
		"kind":     "storage#operation",
		"name":     "projects/_/buckets/" + b.name + "/operations/" + op.id,
		"selfLink": base + "/storage/v1/b/" + url.PathEscape(b.name) + "/operations/" + op.id,
		"done":     op.polled,
		"metadata": map[string]any{
			"@type":               "type.googleapis.com/google.storage.control.v2.RenameFolderMetadata",
			"commonMetadata":      map[string]any{"operationType": "rename-folder", "createTime": formatTime(op.created)},
			"sourceFolderId":      op.src,
			"destinationFolderId": op.dst,
		},
	}
	if op.polled {
		if f := b.folders[op.dst]; f != nil {
			resp, _ := json.Marshal(rawFolder(b, f, base))
			out["response"] = json.RawMessage(resp)
		}
	}
	return out
}
