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
// maxResults, pageToken, versions (noncurrent generations too) and
// softDeleted (only soft-deleted generations). Prefixes count towards
// maxResults, as in GCS. A listing of live objects walks the bucket's
// ordered index (a page costs the page); one of versions or soft-deleted
// generations gathers them first (see sortedObjects).
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
	folders := q.Get("includeFoldersAsPrefixes") == "true"
	if folders && q.Get("delimiter") != "/" {
		x.fail(errf(400, "invalid", "includeFoldersAsPrefixes requires delimiter '/', not %q", q.Get("delimiter")))
		return
	}
	l := lister{
		prefix: q.Get("prefix"), delim: q.Get("delimiter"),
		start: q.Get("startOffset"), end: q.Get("endOffset"),
		trailing: q.Get("includeTrailingDelimiter") == "true",
		max:      maxResults, cursor: cur, base: x.baseURL(), glob: glob,
		versions: q.Get("versions") == "true" || q.Get("softDeleted") == "true",
	}
	if glob != nil {
		s.globListed()
	}
	// Versions, soft-deleted generations and an HNS bucket's folders are
	// gathered whole and sorted (sortedObjects); a plain listing walks the
	// ordered index and costs its page.
	var out *objectList
	if folders = folders && s.hasFolders(x.ri.bucket); l.versions || folders {
		objs, apiErr := s.sortedObjects(x.ri.bucket, listGens{versions: q.Get("versions") == "true", soft: q.Get("softDeleted") == "true"})
		if apiErr == nil && folders {
			objs, apiErr = s.withFolders(x.ri.bucket, q.Get("delimiter"), objs)
		}
		if apiErr != nil {
			x.fail(apiErr)
			return
		}
		out = l.run(objs)
	} else if out, apiErr = s.listPage(x.ri.bucket, &l); apiErr != nil {
		x.fail(apiErr)
		return
	}
	if f := x.fault; f != nil {
		switch f.Kind {
		case KindRepeatPageToken:
			out.NextPageToken = cur.token()
		case KindEmptyPage:
			out = &objectList{Kind: "storage#objects", Items: []*objectResource{}, NextPageToken: s.emptyPageToken(cur)}
		}
	}
	x.writeResource(http.StatusOK, out)
}

// emptyPageToken is a token that lists from c like c's own, but differs
// from every token given before (KindEmptyPage).
func (s *Server) emptyPageToken(c pageCursor) string {
	n := s.emptyPages.Add(1)
	return base64.RawURLEncoding.EncodeToString([]byte("e" + strconv.FormatInt(n, 10) + ":" + c.token()))
}

// listPage lists one page of bucket under s.mu. The page costs a seek and
// then one step per entry it returns (plus those matchGlob rejects): a
// rolled-up prefix is skipped with one seek past it, and the walk stops at
// the end of the prefix's range or at endOffset.
func (s *Server) listPage(bucket string, l *lister) (*objectList, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return nil, errNoBucket
	}
	s.expire(b)
	out, examined := l.page(b.objects)
	s.listExamined.Add(int64(examined))
	return out, nil
}

// listGens is which generations a listing shows: the live ones; with
// versions the noncurrent ones too; with soft only the soft-deleted ones.
type listGens struct{ versions, soft bool }

// sortedObjects returns the generations of bucket that g lists, by name
// and then generation, oldest first, as GCS lists versions. It costs the
// whole bucket: listings of versions are the tests' and the CLI's -a, not
// the scale path.
func (s *Server) sortedObjects(bucket string, g listGens) ([]ObjectAttrs, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return nil, errNoBucket
	}
	s.expire(b)
	out := make([]ObjectAttrs, 0, b.objects.len())
	if !g.soft {
		for _, n := range b.objects.all() {
			out = append(out, b.objects.get(n).attrs.clone())
		}
	}
	if g.versions || g.soft {
		for _, gens := range b.old {
			for _, o := range gens {
				if o.softDeleted() == g.soft {
					out = append(out, o.attrs.clone())
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Generation < out[j].Generation
	})
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

// hasFolders reports whether bucket has hierarchical namespace and a folder.
func (s *Server) hasFolders(bucket string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[bucket]
	return b != nil && b.hns && len(b.folders) > 0
}

var errBadPageToken = errors.New("malformed page token")

// pageCursor is where a listing resumes: after an object name, or after
// every name under a prefix that was already returned.
type pageCursor struct {
	after    string
	isPrefix bool
	gen      int64 // with versions: the generation of after last returned; 0 none
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
	if b[0] == 'g' { // "g<generation>:<name>": a listing of versions
		g, name, ok := strings.Cut(string(b[1:]), ":")
		n, err := strconv.ParseInt(g, 10, 64)
		if !ok || err != nil {
			return pageCursor{}, errBadPageToken
		}
		return pageCursor{after: name, gen: n}, nil
	}
	return pageCursor{after: string(b[1:]), isPrefix: b[0] == 'p'}, nil
}

func (c pageCursor) token() string {
	if c.gen != 0 {
		return base64.RawURLEncoding.EncodeToString([]byte("g" + strconv.FormatInt(c.gen, 10) + ":" + c.after))
	}
	kind := "n"
	if c.isPrefix {
		kind = "p"
	}
	return base64.RawURLEncoding.EncodeToString([]byte(kind + c.after))
}

type lister struct {
	prefix, delim, start, end string
	trailing                  bool
	max                       int
	cursor                    pageCursor
	base                      string
	glob                      *matchGlob // nil: every name
	versions                  bool       // several generations of a name may be listed (run, not page)
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

// from is the least name the listing may return: the greatest of prefix,
// startOffset and the cursor's resume point; ok is false when the cursor
// is past every name.
func (l *lister) from() (key string, ok bool) {
	key = max(l.prefix, l.start)
	switch c := l.cursor; {
	case c.isPrefix:
		past, ok := pastPrefix(c.after)
		if !ok {
			return "", false
		}
		key = max(key, past)
	case c.after != "":
		key = max(key, after(c.after))
	}
	return key, true
}

// page walks ix from l.from() and returns the page and the number of names
// it looked at. Prefixes count towards max as items do; an object named as
// its prefix is listed beside it with includeTrailingDelimiter and does not
// count.
func (l *lister) page(ix *objectIndex) (out *objectList, examined int) {
	out = &objectList{Kind: "storage#objects", Items: []*objectResource{}}
	key, ok := l.from()
	if !ok {
		return out, 0
	}
	count := 0
	var last pageCursor // the last item or prefix returned
	for it := ix.seek(key); it.valid(); {
		name := it.name()
		examined++
		if !strings.HasPrefix(name, l.prefix) || (l.end != "" && name >= l.end) {
			break // names are in order: none further is in range
		}
		if l.glob != nil && !l.glob.match(name) {
			it.next()
			continue
		}
		if count == l.max {
			out.NextPageToken = last.token()
			break
		}
		count++
		p := l.commonPrefix(name)
		if p == "" {
			last = pageCursor{after: name}
			out.Items = append(out.Items, listedObject(ix.get(name).attrs, l.base))
			it.next()
			continue
		}
		// name is the first listed under p, so the only one that can be p.
		last = pageCursor{after: p, isPrefix: true}
		out.Prefixes = append(out.Prefixes, p)
		if l.trailing && name == p {
			out.Items = append(out.Items, listedObject(ix.get(name).attrs, l.base))
		}
		past, ok := pastPrefix(p)
		if !ok {
			break
		}
		it = ix.seek(past)
	}
	return out, examined
}

// passed reports whether generation gen of name was returned on an
// earlier page.
func (c pageCursor) passed(name string, gen int64) bool {
	if c.after == "" && !c.isPrefix {
		return false
	}
	if c.gen != 0 && name == c.after {
		return gen <= c.gen
	}
	if c.isPrefix && strings.HasPrefix(name, c.after) {
		return true
	}
	return name <= c.after
}

// run lists one page of objs, every generation a listing of versions or
// soft-deleted objects shows, in name and generation order.
func (l *lister) run(objs []ObjectAttrs) *objectList {
	out := &objectList{Kind: "storage#objects", Items: []*objectResource{}}
	lastPrefix, count := "", 0
	var last pageCursor // the last item or prefix returned
	for _, a := range objs {
		name := a.Name
		if !strings.HasPrefix(name, l.prefix) || l.cursor.passed(name, a.Generation) ||
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
		if l.versions {
			last.gen = a.Generation
		}
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
	o := rawObject(a.clone(), base)
	if a.CustomerKeySHA256 != "" {
		hideHashes(o)
	}
	return o
}
