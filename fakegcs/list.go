package fakegcs

import (
	"encoding/base64"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// serveObjectList answers GET /storage/v1/b/BUCKET/o with prefix,
// delimiter, includeTrailingDelimiter, startOffset, endOffset, matchGlob,
// maxResults and pageToken. Prefixes count towards maxResults, as in GCS.
// matchGlob filters the object names before the delimiter groups them, so a
// prefix is returned when an object under it matches; with matchGlob the
// delimiter must be absent or "/" (400), as GCS requires.
func (s *Server) serveObjectList(x *exchange) {
	q := x.r.URL.Query()
	maxResults := 1000
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			x.fail(errf(400, "invalid", "Invalid maxResults %q", v))
			return
		}
		if n > 0 && n < maxResults {
			maxResults = n
		}
	}
	cur, err := decodePageToken(q.Get("pageToken"))
	if err != nil {
		x.fail(errf(400, "invalid", "Invalid pageToken"))
		return
	}
	glob, apiErr := listGlob(q.Get("matchGlob"), q.Get("delimiter"))
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	objs, apiErr := s.sortedObjects(x.ri.bucket)
	if apiErr == nil && q.Get("includeFoldersAsPrefixes") == "true" {
		objs, apiErr = s.withFolders(x.ri.bucket, q.Get("delimiter"), objs)
	}
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	l := lister{
		prefix: q.Get("prefix"), delim: q.Get("delimiter"),
		start: q.Get("startOffset"), end: q.Get("endOffset"),
		trailing: q.Get("includeTrailingDelimiter") == "true",
		max:      maxResults, cursor: cur, base: x.baseURL(), glob: glob,
	}
	if glob != nil {
		s.globListed()
	}
	out := l.run(objs)
	if f := x.fault; f != nil {
		switch f.Kind {
		case KindRepeatPageToken:
			out.NextPageToken = cur.token()
		case KindEmptyPage:
			out = &objectList{Kind: "storage#objects", Items: []*objectResource{}, NextPageToken: s.emptyPageToken(cur)}
		}
	}
	writeJSON(x.w, http.StatusOK, out)
}

// emptyPageToken is a token that lists from c like c's own, but differs
// from every token given before (KindEmptyPage).
func (s *Server) emptyPageToken(c pageCursor) string {
	n := s.emptyPages.Add(1)
	return base64.RawURLEncoding.EncodeToString([]byte("e" + strconv.FormatInt(n, 10) + ":" + c.token()))
}

func (s *Server) sortedObjects(bucket string) ([]ObjectAttrs, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return nil, errNoBucket
	}
	out := make([]ObjectAttrs, 0, len(b.objects))
	for _, o := range b.objects {
		out = append(out, o.attrs.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// withFolders merges the folders of an HNS bucket into objs, in name
// order, for includeFoldersAsPrefixes: an empty folder is then a prefix of
// the listing as a folder with objects is. GCS applies the parameter only
// with delimiter "/" (objects/list reference); fakegcs refuses it
// otherwise, and in a bucket without folders it changes nothing.
func (s *Server) withFolders(bucket, delim string, objs []ObjectAttrs) ([]ObjectAttrs, *apiError) {
	if delim != "/" {
		return nil, errf(400, "invalid", "includeFoldersAsPrefixes requires delimiter '/', not %q", delim)
	}
	s.mu.Lock()
	b := s.buckets[bucket]
	var names []string
	if b != nil {
		names = b.folderNames()
	}
	s.mu.Unlock()
	if len(names) == 0 {
		return objs, nil
	}
	for _, n := range names {
		objs = append(objs, ObjectAttrs{Bucket: bucket, Name: n, isFolder: true})
	}
	sort.SliceStable(objs, func(i, j int) bool { return objs[i].Name < objs[j].Name })
	return objs, nil
}

var errBadPageToken = errors.New("malformed page token")

// pageCursor is where a listing resumes: after an object name, or after
// every name under a prefix that was already returned.
type pageCursor struct {
	after    string
	isPrefix bool
}

func decodePageToken(t string) (pageCursor, error) {
	if t == "" {
		return pageCursor{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil || len(b) == 0 {
		return pageCursor{}, errBadPageToken
	}
	if b[0] == 'e' { // an empty page's token: "e<n>:" and the token it stands for
		_, inner, ok := strings.Cut(string(b), ":")
		if !ok {
			return pageCursor{}, errBadPageToken
		}
		return decodePageToken(inner)
	}
	return pageCursor{after: string(b[1:]), isPrefix: b[0] == 'p'}, nil
}

func (c pageCursor) token() string {
	kind := "n"
	if c.isPrefix {
		kind = "p"
	}
	return base64.RawURLEncoding.EncodeToString([]byte(kind + c.after))
}

// passed reports whether name was returned on an earlier page.
func (c pageCursor) passed(name string) bool {
	if c.after == "" && !c.isPrefix {
		return false
	}
	if c.isPrefix && strings.HasPrefix(name, c.after) {
		return true
	}
	return name <= c.after
}

type lister struct {
	prefix, delim, start, end string
	trailing                  bool
	max                       int
	cursor                    pageCursor
	base                      string
	glob                      *matchGlob // nil: every name
}

// listGlob reads the matchGlob parameter ("" is none).
func listGlob(v, delim string) (*matchGlob, *apiError) {
	if v == "" {
		return nil, nil
	}
	if delim != "" && delim != "/" {
		return nil, errf(400, "invalid", "matchGlob requires the delimiter to be unset or '/', not %q", delim)
	}
	g, err := parseMatchGlob(v)
	if err != nil {
		return nil, errf(400, "invalid", "Invalid matchGlob %q: %v", v, err)
	}
	return g, nil
}

func (l *lister) run(objs []ObjectAttrs) *objectList {
	out := &objectList{Kind: "storage#objects", Items: []*objectResource{}}
	lastPrefix, count := "", 0
	var last pageCursor // the last item or prefix returned
	for _, a := range objs {
		name := a.Name
		if !strings.HasPrefix(name, l.prefix) || l.cursor.passed(name) ||
			(l.start != "" && name < l.start) || (l.end != "" && name >= l.end) ||
			(l.glob != nil && !l.glob.match(name)) {
			continue
		}
		p := l.commonPrefix(name)
		if a.isFolder && p == "" {
			continue // the folder the listing is in
		}
		if p != "" && p == lastPrefix {
			if l.trailing && name == p && !a.isFolder {
				out.Items = append(out.Items, listedObject(a, l.base))
			}
			continue
		}
		if count == l.max {
			out.NextPageToken = last.token()
			break
		}
		count++
		if p != "" {
			lastPrefix, last = p, pageCursor{after: p, isPrefix: true}
			out.Prefixes = append(out.Prefixes, p)
			if l.trailing && name == p && !a.isFolder {
				out.Items = append(out.Items, listedObject(a, l.base))
			}
			continue
		}
		last = pageCursor{after: name}
		out.Items = append(out.Items, listedObject(a, l.base))
	}
	return out
}

// commonPrefix is the prefix+…+delimiter that groups name, or "".
func (l *lister) commonPrefix(name string) string {
	if l.delim == "" {
		return ""
	}
	rest := name[len(l.prefix):]
	i := strings.Index(rest, l.delim)
	if i < 0 {
		return ""
	}
	return l.prefix + rest[:i+len(l.delim)]
}

// listedObject is a listing's entry for a: a listing carries no key, so a
// CSEK object's hashes are not shown, as GCS does not show them.
func listedObject(a ObjectAttrs, base string) *objectResource {
	o := rawObject(a, base)
	if a.CustomerKeySHA256 != "" {
		hideHashes(o)
	}
	return o
}
